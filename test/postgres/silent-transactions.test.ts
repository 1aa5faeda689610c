/**
 * The transactions of migrate(), PostgresDirectory.seed() and the issuer registry's writes on a pool, through a TCP proxy the
 * test controls: the network goes silent mid-transaction, or the server stops mid-transaction.
 * Each checked-out connection runs the test's step just before the first statement that matches,
 * so the failure lands inside the transaction, after some of its writes. Bounds are short here so
 * that the file runs in seconds.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageUnavailableError } from '../../src/payment-links/index.js';
import { PostgresDirectory, type SqlPool, StatementTimeoutError, addIssuer, isUnavailable, migrate } from '../../src/postgres/index.js';
import { TABLES } from '../../src/postgres/schema-names.js';
import { SEEDS } from '../payment-links/support.js';
import { LOADED_MARGIN_MS } from '../support/loaded-machine.js';
import { eventually } from './eventually.js';
import { type PgServer, openPool, skipWithoutPostgres, startPostgres } from './pg-server.js';
import { type TcpProxy, startProxy } from './tcp-proxy.js';

const SKIP = skipWithoutPostgres('test/postgres/silent-transactions.test.ts');
/**
 * The statement timeout under test: long enough that the statements before the fault do not miss
 * it on a loaded machine, short enough that with the margin it stays below the default of 5 s.
 */
const BOUND = 1000;
/** "At once" for a stopped server: no bound but the margin, far below the 60 s bound those calls are given. */
const PROMPTLY = LOADED_MARGIN_MS;

let server: PgServer;
let proxy: TcpProxy;
const pools: pg.Pool[] = [];

/** A pool of one connection through the proxy to `url`, warmed up. */
async function proxiedPool(url: string): Promise<pg.Pool> {
  const pool = openPool(proxy.via(url), { max: 1 });
  pools.push(pool);
  await pool.query('SELECT 1');
  return pool;
}

const direct = new Map<string, pg.Pool>();

/** A pool straight to `url`, for looking at what was committed. */
function directPool(url: string): pg.Pool {
  let pool = direct.get(url);
  if (pool === undefined) {
    pool = openPool(url, { max: 1 });
    direct.set(url, pool);
    pools.push(pool);
  }
  return pool;
}

beforeAll(async () => {
  if (SKIP) return;
  server = await startPostgres();
  proxy = await startProxy(server.port);
});
afterAll(async () => {
  await proxy?.close();
  await Promise.all(pools.map((pool) => pool.end()));
  await server?.dispose();
});

/** `pool`, whose checked-out connections run `step` once, before the first statement matching `at`. */
function stepBefore(pool: pg.Pool, at: RegExp, step: () => Promise<void> | void): SqlPool & { readonly stepped: boolean } {
  let done = false;
  return {
    get stepped() {
      return done;
    },
    query: (text, params) => pool.query(text, params),
    get idleCount() {
      return pool.idleCount;
    },
    async connect() {
      const connection = await pool.connect();
      return {
        async query(text: string, params?: unknown[]) {
          if (!done && at.test(text)) {
            done = true;
            await step();
          }
          return connection.query(text, params);
        },
        release: (destroy?: boolean | Error) => connection.release(destroy),
        on: (event: 'error', listener: (error: Error) => void) => connection.on(event, listener),
        removeListener: (event: 'error', listener: (error: Error) => void) => connection.removeListener(event, listener),
      };
    },
  };
}

async function paygateTables(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM pg_tables WHERE tablename LIKE 'paygate_%'`);
  return rows[0]?.n as number;
}

async function tenantRows(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${TABLES.tenants}`);
  return rows[0]?.n as number;
}

async function abandonedTransactions(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()`,
  );
  return rows[0]?.n as number;
}

/** When the last failure was brought about: the network silenced, or the server stopped. */
let failedAt = 0;
/** Milliseconds since then. */
const sinceFailure = (): number => performance.now() - failedAt;

function silence(): void {
  proxy.silence();
  failedAt = performance.now();
}

async function stop(): Promise<void> {
  await server.stop();
  failedAt = performance.now();
}

describe.skipIf(SKIP)('migrate and seed through a network that goes silent mid-transaction', () => {
  let migrateUrl: string;
  let seedUrl: string;
  let migratePool: pg.Pool;
  let seedPool: pg.Pool;

  beforeAll(async () => {
    [migrateUrl, seedUrl] = await Promise.all([server.createDatabase('silent_migrate'), server.createDatabase('silent_seed')]);
    await migrate(directPool(seedUrl), { only: 'directory' });
    migratePool = await proxiedPool(migrateUrl);
  });

  it('rejects migrate with StatementTimeoutError within the bound and commits no table', async () => {
    const silentMidway = stepBefore(migratePool, new RegExp(`INSERT INTO ${TABLES.migrations}`), silence);
    const error = await migrate(silentMidway, { statementTimeout: BOUND }).catch((reason: unknown) => reason);
    expect(silentMidway.stepped).toBe(true);
    expect(sinceFailure()).toBeLessThan(BOUND + LOADED_MARGIN_MS);
    expect(error).toBeInstanceOf(StatementTimeoutError);
    expect((error as StatementTimeoutError).code).toBe('statement_timeout');
    expect(await paygateTables(directPool(migrateUrl))).toBe(0);
  });

  it('destroys the silent connection of migrate instead of returning it to the pool', async () => {
    await eventually('the silent connection is gone', () => migratePool.totalCount === 0);
  });

  it('has the server roll back the abandoned migration within the bound, freeing its lock', async () => {
    await eventually(
      'no transaction is left idle',
      async () => (await abandonedTransactions(directPool(migrateUrl))) === 0,
      BOUND + LOADED_MARGIN_MS,
    );
    proxy.heal();
    const report = await migrate(migratePool, { statementTimeout: 5000 });
    expect(report.applied.length).toBeGreaterThan(0);
  });

  it('rejects seed with StorageUnavailableError caused by StatementTimeoutError within the bound, and commits no row', async () => {
    seedPool = await proxiedPool(seedUrl);
    const silentMidway = stepBefore(seedPool, new RegExp(`INSERT INTO ${TABLES.departments}`), silence);
    const error = await new PostgresDirectory(silentMidway, { statementTimeout: BOUND }).seed(SEEDS).catch((reason: unknown) => reason);
    expect(silentMidway.stepped).toBe(true);
    expect(sinceFailure()).toBeLessThan(BOUND + LOADED_MARGIN_MS);
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect((error as StorageUnavailableError).cause).toBeInstanceOf(StatementTimeoutError);
    expect(await tenantRows(directPool(seedUrl))).toBe(0);
  });

  it('destroys the silent connection of seed, and seeds through a new one once the network heals', async () => {
    await eventually('the silent connection is gone', () => seedPool.totalCount === 0);
    proxy.heal();
    await eventually(
      'no transaction is left idle',
      async () => (await abandonedTransactions(directPool(seedUrl))) === 0,
      BOUND + LOADED_MARGIN_MS,
    );
    await new PostgresDirectory(seedPool, { statementTimeout: 5000 }).seed(SEEDS);
    expect(await tenantRows(directPool(seedUrl))).toBe(SEEDS.length);
  });
});

describe.skipIf(SKIP)('migrate and seed when the server stops mid-transaction', () => {
  let migrateUrl: string;
  let seedUrl: string;

  beforeAll(async () => {
    proxy.heal();
    [migrateUrl, seedUrl] = await Promise.all([server.createDatabase('stopped_migrate'), server.createDatabase('stopped_seed')]);
    await migrate(directPool(seedUrl), { only: 'directory' });
  });

  it('rejects migrate at once with an unavailability error, not a timeout, and commits no table', async () => {
    const pool = await proxiedPool(migrateUrl);
    const stoppedMidway = stepBefore(pool, new RegExp(`INSERT INTO ${TABLES.migrations}`), stop);
    const error = await migrate(stoppedMidway, { statementTimeout: 60_000 }).catch((reason: unknown) => reason);
    expect(stoppedMidway.stepped).toBe(true);
    expect(sinceFailure()).toBeLessThan(PROMPTLY);
    expect(error).not.toBeInstanceOf(StatementTimeoutError);
    expect(isUnavailable(error)).toBe(true);
    await server.start();
    expect(await paygateTables(directPool(migrateUrl))).toBe(0);
  });

  it('rejects seed at once with StorageUnavailableError, and commits no row', async () => {
    const pool = await proxiedPool(seedUrl);
    const stoppedMidway = stepBefore(pool, new RegExp(`INSERT INTO ${TABLES.departments}`), stop);
    const error = await new PostgresDirectory(stoppedMidway, { statementTimeout: 60_000 }).seed(SEEDS).catch((reason: unknown) => reason);
    expect(stoppedMidway.stepped).toBe(true);
    expect(sinceFailure()).toBeLessThan(PROMPTLY);
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect((error as StorageUnavailableError).cause).not.toBeInstanceOf(StatementTimeoutError);
    await server.start();
    expect(await tenantRows(directPool(seedUrl))).toBe(0);
  });

  it('refuses migrate and seed at once while the server is stopped', async () => {
    const pool = await proxiedPool(seedUrl);
    await stop();
    const [migrating, seeding] = await Promise.all([
      migrate(pool, { statementTimeout: 60_000 }).catch((reason: unknown) => reason),
      new PostgresDirectory(pool, { statementTimeout: 60_000 }).seed(SEEDS).catch((reason: unknown) => reason),
    ]);
    expect(sinceFailure()).toBeLessThan(PROMPTLY);
    expect(isUnavailable(migrating)).toBe(true);
    expect(migrating).not.toBeInstanceOf(StatementTimeoutError);
    expect(seeding).toBeInstanceOf(StorageUnavailableError);
    await server.start();
  });
});

describe.skipIf(SKIP)('an issuer registry write through a network that goes silent mid-transaction', () => {
  const entry = { issuer: 'https://auth.silent.example', jwksUri: 'https://auth.silent.example/jwks.json', products: ['silent'] };
  let url: string;
  let pool: pg.Pool;

  beforeAll(async () => {
    proxy.heal();
    url = await server.createDatabase('silent_registry');
    await migrate(directPool(url), { only: 'registry' });
    pool = await proxiedPool(url);
  });

  it('rejects addIssuer with an unavailability caused by StatementTimeoutError within the bound, writing no row', async () => {
    // After the row is written (and audited by the trigger), before the change is read back.
    const silentMidway = stepBefore(pool, new RegExp(`FROM ${TABLES.issuerChanges}`), silence);
    const error = await addIssuer(silentMidway, entry, { by: 'ops', statementTimeout: BOUND }).catch((reason: unknown) => reason);
    expect(silentMidway.stepped).toBe(true);
    expect(sinceFailure()).toBeLessThan(BOUND + LOADED_MARGIN_MS);
    expect(isUnavailable(error)).toBe(true);
    expect((error as Error).cause).toBeInstanceOf(StatementTimeoutError);
    const { rows } = await directPool(url).query(`SELECT count(*)::int AS n FROM ${TABLES.issuers}`);
    expect(rows[0]?.n).toBe(0);
  });

  it('destroys the silent connection, and writes through a new one once the network heals', async () => {
    await eventually('the silent connection is gone', () => pool.totalCount === 0);
    proxy.heal();
    await eventually(
      'no transaction is left idle',
      async () => (await abandonedTransactions(directPool(url))) === 0,
      BOUND + LOADED_MARGIN_MS,
    );
    const change = await addIssuer(pool, entry, { by: 'ops', statementTimeout: 5000 });
    expect(change).toMatchObject({ action: 'add', issuer: entry.issuer, actor: 'ops' });
  });
});
