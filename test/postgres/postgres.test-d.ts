/** The clients the PostgreSQL module takes: a pg.Pool, a pg.Client and PGlite fit its types as they are. */
import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';
import { expectTypeOf, test } from 'vitest';
import type { Verifier } from '../../src/index.js';
import type {
  FollowOptions,
  FollowedVerifier,
  PostgresControls,
  PostgresFollowers,
  PostgresKeyHistory,
  IssuerChangeError,
  KeyHistoryVerifier,
  NotificationSource,
  PoolSettings,
  PostgresControlsOptions,
  PostgresListener,
  PostgresPaymentLinkStore,
  PostgresPaymentLinkStoreOptions,
  PostgresRegistry,
  PostgresRegistryOptions,
  RegistryEvent,
  SqlClient,
  postgresFollowers,
} from '../../src/postgres/index.js';

test('pg.Pool, pg.Client and PGlite are SqlClients', () => {
  expectTypeOf<pg.Pool>().toMatchTypeOf<SqlClient>();
  expectTypeOf<pg.Client>().toMatchTypeOf<SqlClient>();
  expectTypeOf<PGlite>().toMatchTypeOf<SqlClient>();
});

test('a function opening a pg.Client is a NotificationSource', () => {
  expectTypeOf<() => Promise<pg.Client>>().toMatchTypeOf<NotificationSource>();
  expectTypeOf<() => Promise<pg.PoolClient>>().toMatchTypeOf<NotificationSource>();
});

test('listen takes the shared listener, a function opening a connection, or false', () => {
  expectTypeOf<PostgresControlsOptions['listen']>().toEqualTypeOf<PostgresListener | NotificationSource | false | undefined>();
  expectTypeOf<pg.Pool>().not.toMatchTypeOf<NotificationSource>();
});

test('poolSettings gives a pg.PoolConfig', () => {
  expectTypeOf<PoolSettings>().toMatchTypeOf<pg.PoolConfig>();
});

test('the stores take a client in their constructor', () => {
  expectTypeOf<ConstructorParameters<typeof PostgresPaymentLinkStore>>().toEqualTypeOf<[SqlClient, PostgresPaymentLinkStoreOptions?]>();
});

test('the registry and the controls follow their tables with the same options', () => {
  expectTypeOf<PostgresRegistryOptions>().toMatchTypeOf<FollowOptions>();
  expectTypeOf<PostgresControlsOptions>().toMatchTypeOf<FollowOptions>();
  expectTypeOf<PostgresRegistryOptions['listen']>().toEqualTypeOf<PostgresControlsOptions['listen']>();
});

test('a registry event narrows on its type', () => {
  expectTypeOf<Extract<RegistryEvent, { type: 'registry_stale' }>['since']>().toEqualTypeOf<number>();
  expectTypeOf<Extract<RegistryEvent, { type: 'registry_recovered' }>>().not.toHaveProperty('issuers');
  expectTypeOf<IssuerChangeError['code']>().toEqualTypeOf<
    'issuer_exists' | 'issuer_not_found' | 'issuer_unchanged' | 'issuer_changed_meanwhile'
  >();
});

test('a whole Verifier can be attached to the registry', () => {
  expectTypeOf<Verifier>().toMatchTypeOf<Parameters<PostgresRegistry['attach']>[0]>();
});

test('a Verifier can be attached to the shared key history', () => {
  expectTypeOf<Verifier>().toMatchTypeOf<KeyHistoryVerifier>();
});

test('postgresFollowers types a follower left out as undefined, the others as started', () => {
  type Some = PostgresFollowers<{ registry: false; keyHistory: { flushInterval: 1000 } }>;
  expectTypeOf<Some['registry']>().toEqualTypeOf<undefined>();
  expectTypeOf<Some['controls']>().toEqualTypeOf<PostgresControls>();
  expectTypeOf<Some['keyHistory']>().toEqualTypeOf<PostgresKeyHistory>();
  expectTypeOf<PostgresFollowers['registry']>().toEqualTypeOf<PostgresRegistry | undefined>();
  expectTypeOf<Verifier>().toMatchTypeOf<FollowedVerifier>();
});

test('postgresFollowers started without options follows all three', () => {
  type All = Awaited<ReturnType<typeof postgresFollowers<Record<never, never>>>>;
  expectTypeOf<All['registry']>().toEqualTypeOf<PostgresRegistry>();
  expectTypeOf<All['keyHistory']>().toEqualTypeOf<PostgresKeyHistory>();
});
