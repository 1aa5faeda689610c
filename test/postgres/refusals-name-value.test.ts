/**
 * Each option refusal of paygate-auth/postgres names the value it found (`got …`), quoted as the
 * package quotes values, so a misconfigured gateway is fixed from the message alone.
 */
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, poolSettings, postgresFollowers, postgresHeartbeat, postgresRegistry } from '../../src/postgres/index.js';
import { createTestPglite } from './pglite.js';

/** A client that is never asked anything: each refusal here comes before the first statement. */
const unused = {
  query: () => {
    throw new Error('no statement was expected');
  },
};

describe('postgres refusals name the value found', () => {
  let lite: PGlite;
  beforeAll(async () => {
    lite = await createTestPglite();
    await migrate(lite, { only: 'registry' });
  });
  afterAll(async () => {
    await lite.close();
  });

  it('poolSettings names a connectionString that is no URL text', () => {
    expect(() => poolSettings(undefined as never)).toThrow(/connectionString must be .*got undefined/);
    expect(() => poolSettings('' as never)).toThrow(/connectionString must be .*got ""/);
  });

  it('postgresFollowers names a registry that is neither options nor false', async () => {
    await expect(postgresFollowers(unused as never, { registry: true as never })).rejects.toThrow(
      /registry must be an options object or false.*got boolean/,
    );
    await expect(postgresFollowers(unused as never, { controls: 'yes' as never })).rejects.toThrow(/got "yes"/);
  });

  it('a db without query is named', async () => {
    await expect(postgresRegistry({ query: 'SELECT 1' } as never)).rejects.toThrow(/got an object whose query is "SELECT 1"/);
  });

  it('postgresHeartbeat names a registry that is not a follower', async () => {
    await expect(postgresHeartbeat(unused as never, { name: 'gw-1', registry: 'registry' as never })).rejects.toThrow(
      /registry must be what postgresRegistry\(\) resolves, got "registry"/,
    );
  });

  it('attach names what it was given instead of a verifier', async () => {
    const registry = await postgresRegistry(lite, { pollInterval: 600_000 });
    try {
      expect(() => registry.attach({} as never)).toThrow(/verifier must be a Verifier.*got an object whose setRegistry is undefined/);
      expect(() => registry.attach('verifier' as never)).toThrow(/got "verifier"/);
    } finally {
      await registry.close();
    }
  });

  it('migrate names the schema area it does not know', async () => {
    await expect(migrate(unused as never, { only: ['registry', 'nope'] as never })).rejects.toThrow(/only must name .*got "nope"/);
    await expect(migrate(unused as never, { only: [] as never })).rejects.toThrow(/got an empty array/);
  });
});
