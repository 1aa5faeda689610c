/**
 * The options `telemetry.followersOptions()` returns keep what they say of each follower, so that
 * `postgresFollowers` types the followers as it does without telemetry.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { Telemetry } from '../../src/otel/index.js';
import { type PostgresKeyHistory, type PostgresRegistry, type SqlClient, postgresFollowers } from '../../src/postgres/index.js';

declare const telemetry: Telemetry;
declare const pool: SqlClient;

describe('Telemetry.followersOptions', () => {
  it('called without options, starts every follower, as postgresFollowers(pool) does', async () => {
    const followers = await postgresFollowers(pool, telemetry.followersOptions());
    expectTypeOf(followers.registry).toEqualTypeOf<PostgresRegistry>();
    expectTypeOf(followers.keyHistory).toEqualTypeOf<PostgresKeyHistory>();
    expectTypeOf(followers.registry.registry).toBeFunction();
  });

  it('keeps a follower left out as undefined', async () => {
    const followers = await postgresFollowers(pool, telemetry.followersOptions({ registry: false }));
    expectTypeOf(followers.registry).toEqualTypeOf<undefined>();
    expectTypeOf(followers.controls).not.toBeUndefined();
  });
});
