/**
 * PostgreSQL for the tests: one server per run, a database of its own for each test file, and a
 * throw-away server for a test that stops or silences the one it talks to.
 *
 * - **A database of its own** — {@link createTestDatabase}: a new empty database on the run's
 *   shared server (started once by test/support/pg-server-once.ts, vitest `globalSetup`), made by
 *   `CREATE DATABASE … TEMPLATE` from an empty template database, in a few milliseconds. Call it in
 *   `beforeAll` (once per database the file needs); use its `url` for pools and `DATABASE_URL`,
 *   and its `port` for a TCP proxy (test/postgres/tcp-proxy.ts) that silences only the file's
 *   own connections. Databases are dropped with the server at the end of the run.
 *   ```ts
 *   let db: TestDatabase;
 *   beforeAll(async () => {
 *     db = await createTestDatabase('stores');
 *     pool = openPool(db.url, { max: 4 });
 *     await migrate(pool);
 *   });
 *   ```
 *   Files run at once on the same server: a file's statements must touch only its own database.
 *   What PostgreSQL keeps for the whole server is shared: **roles** (name them after the
 *   database, `${db.name}_reader`, and create them in the file), `pg_stat_activity` (filter it on
 *   `datname = current_database()`), and the server itself (never stop it, nor change its settings).
 * - **A server of its own** — {@link startPostgres}: for a test that stops and restarts its server
 *   (`stop()`, `start()`), or needs server-wide state of its own. A copy of the run's template
 *   cluster (one `initdb` per run; `initdb` itself outside such a run) in a temporary directory,
 *   `pg_ctl` on a free port. `dispose()` it in `afterAll`. It costs a second or so of CPU: prefer a
 *   database of its own.
 *
 * Every server listens on a free port of 127.0.0.1, with trust authentication and no fsync, and runs
 * as the `postgres` user when the tests run as root (initdb refuses root). Where the binaries are
 * missing the tests that need them are skipped with a loud warning ({@link skipWithoutPostgres}),
 * except in CI (`CI=true`), where they fail.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { PATIENCE_MS } from '../support/loaded-machine.js';

/** The run's shared server, as test/support/pg-server-once.ts provides it to the test files. */
export interface SharedPgServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: where databases are created. */
  readonly url: string;
  readonly port: number;
  /** The empty database every test database is a copy of. */
  readonly template: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's template cluster: a data directory `initdb` made, copied by every server. */
    pgTemplate: string | undefined;
    /** The run's shared server, where PostgreSQL is installed. */
    pgServer: SharedPgServer | undefined;
  }
}

const run = promisify(execFile);

/** The directory holding `initdb` and `pg_ctl`, or `undefined`. */
function findBinaries(): string | undefined {
  const candidates = (process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '');
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => join(debian, version, 'bin')));
  }
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')) && existsSync(join(dir, 'postgres')));
}

const binaries = findBinaries();
const runAsPostgres = process.getuid?.() === 0;

/** Whether a real PostgreSQL can be started here, and why not. */
export const POSTGRES = Object.freeze({
  available: binaries !== undefined,
  reason:
    binaries === undefined ? 'initdb and pg_ctl were not found on PATH nor in /usr/lib/postgresql/*/bin (apt-get install postgresql)' : '',
});

/**
 * `true` when the real-server tests must be skipped here; says so loudly. In CI it throws instead:
 * there, they must run.
 */
export function skipWithoutPostgres(suite: string): boolean {
  if (POSTGRES.available) return false;
  if (process.env.CI === 'true' || process.env.CI === '1') {
    throw new Error(`${suite}: a real PostgreSQL is required in CI, but ${POSTGRES.reason}`);
  }
  console.warn(`\n!!! SKIPPED: ${suite} needs a real PostgreSQL: ${POSTGRES.reason}. These tests did not run. !!!\n`);
  return true;
}

/** A port of 127.0.0.1 free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Runs `file` (as the `postgres` user when the tests run as root). */
async function runAsOwner(file: string, args: readonly string[]): Promise<void> {
  const [command, argv] = runAsPostgres ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, [...args]];
  await run(command, argv, { timeout: 2 * PATIENCE_MS });
}

/** Runs one of PostgreSQL's binaries. */
function exec(binary: string, args: readonly string[]): Promise<void> {
  return runAsOwner(join(binaries as string, binary), args);
}

/** A new directory under the temporary directory, owned by the user the server runs as. */
export async function ownedTempDir(prefix: string): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), prefix));
  if (runAsPostgres) {
    const { uid, gid } = await postgresIds();
    chownSync(root, uid, gid);
  }
  return root;
}

/** Makes a new cluster in `data`. */
export function initdb(data: string): Promise<void> {
  return exec('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
}

/** What the run's globalSetup provided under `key` (`vitest` is loaded here only: the globalSetup loads this module too). */
async function provided<K extends 'pgTemplate' | 'pgServer'>(key: K): Promise<import('vitest').ProvidedContext[K] | undefined> {
  try {
    const { inject } = await import('vitest');
    return inject(key);
  } catch {
    return undefined;
  }
}

/**
 * A pool on `url` that ignores errors from connections it has let go of. `pool.end()` resolves
 * before its connections have closed; a server stopped at that moment makes each of them report
 * the shutdown, and a pool with no `error` listener throws that as an uncaught exception.
 */
export function openPool(url: string, options: Omit<pg.PoolConfig, 'connectionString'> = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, ...options });
  pool.on('error', () => undefined);
  return pool;
}

/**
 * Counts the sessions `pool` checks out from now on (each `connect()`: a read, a retry, a
 * listening connection), leaving it the pool it is: its sessions and their bounds unchanged. A
 * test polls this count to see that a follower went on trying, instead of sleeping.
 */
export function countSessions(pool: pg.Pool): () => number {
  let sessions = 0;
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  pool.connect = (() => {
    sessions += 1;
    return connect();
  }) as typeof pool.connect;
  return () => sessions;
}

/** A running server. */
export interface PgServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  readonly port: number;
  /** A new empty database; its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown: sessions are cut). */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  /** Stops it and deletes its directory. */
  dispose(): Promise<void>;
}

/**
 * Creates and starts a server of its own, a copy of `cluster` (a data directory `initdb` made): by
 * default the run's template cluster, or a new `initdb` outside a vitest run.
 */
export async function startPostgres(cluster?: string): Promise<PgServer> {
  if (binaries === undefined) throw new Error(POSTGRES.reason);
  cluster ??= await provided('pgTemplate');
  const root = await ownedTempDir('paygate-pg-');
  const data = join(root, 'data');
  // A copy of a fresh cluster is that cluster, for a fraction of initdb's CPU.
  if (cluster === undefined) await initdb(data);
  else await runAsOwner('cp', ['-a', cluster, data]);
  const port = await freePort();
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const start = () => exec('pg_ctl', ['-D', data, '-o', options, '-l', join(root, 'log'), '-w', '-t', String(PATIENCE_MS / 1000), 'start']);
  const stop = () => exec('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
  await start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let running = true;
  return {
    url,
    port,
    async createDatabase(name) {
      await onServer(url, `CREATE DATABASE ${name}`);
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      await stop();
      running = false;
    },
    async start() {
      await start();
      running = true;
    },
    async dispose() {
      if (running) await stop().catch(() => undefined);
      running = false;
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Runs one statement on the server's `postgres` database, over a connection of its own. */
async function onServer(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** The template database of the shared server: empty, and open to no connection, so that it can always be copied. */
export const TEMPLATE_DATABASE = 'paygate_template';

/** Makes `server` the run's shared server: creates its template database. */
export async function shareServer(server: PgServer): Promise<SharedPgServer> {
  await onServer(server.url, `CREATE DATABASE ${TEMPLATE_DATABASE} IS_TEMPLATE true ALLOW_CONNECTIONS false`);
  return { url: server.url, port: server.port, template: TEMPLATE_DATABASE };
}

/** A database of a test file's own on the run's shared server. */
export interface TestDatabase {
  /** `postgres://postgres@127.0.0.1:<port>/<name>` */
  readonly url: string;
  /** Unique in the run: `<label>_<8 hex digits>`. Name a role the file creates after it. */
  readonly name: string;
  /** The shared server's port (for a TCP proxy in front of it). */
  readonly port: number;
}

/** Labels: what a database name may start with, leaving room for the suffix within PostgreSQL's 63 bytes. */
const LABEL = /^[a-z][a-z0-9_]{0,39}$/;

/**
 * A new empty database on the run's shared server, a copy of its template database. Call it once
 * per database a test file needs (in `beforeAll`); `label` (lower case, digits, `_`; up to 40)
 * starts its name.
 * @throws when PostgreSQL is missing (guard with {@link skipWithoutPostgres}), or outside a vitest
 *   run of this repository's configurations, which start the shared server.
 */
export async function createTestDatabase(label = 'test'): Promise<TestDatabase> {
  if (!LABEL.test(label)) throw new TypeError(`createTestDatabase: label must match ${LABEL}, got ${JSON.stringify(label)}`);
  const shared = await provided('pgServer');
  if (shared === undefined) {
    throw new Error(
      binaries === undefined
        ? POSTGRES.reason
        : 'createTestDatabase: no shared PostgreSQL server in this run; test/support/pg-server-once.ts (vitest globalSetup) starts it',
    );
  }
  const name = `${label}_${randomBytes(4).toString('hex')}`;
  await onServer(shared.url, `CREATE DATABASE ${name} TEMPLATE ${shared.template}`);
  return { url: `postgres://postgres@127.0.0.1:${shared.port}/${name}`, name, port: shared.port };
}

async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const { stdout: uid } = await run('id', ['-u', 'postgres']);
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}
