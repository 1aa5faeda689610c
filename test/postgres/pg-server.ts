/**
 * A throw-away PostgreSQL server for the tests: a copy of the run's template cluster (one
 * `initdb` per run, test/support/pg-template-once.ts; `initdb` itself outside such a run) in a
 * temporary directory, and `pg_ctl` on a free port of 127.0.0.1, trust authentication, no fsync. Run as the `postgres` user when
 * the tests run as root (initdb refuses root). Where the binaries are missing the tests that need
 * them are skipped with a loud warning, except in CI (`CI=true`), where they fail.
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's template cluster: a data directory `initdb` made, copied by every server. */
    pgTemplate: string | undefined;
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
  await run(command, argv, { timeout: 60_000 });
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

/** The run's template cluster, when a vitest run made one (`vitest` is loaded here only: the globalSetup loads this module too). */
async function template(): Promise<string | undefined> {
  try {
    const { inject } = await import('vitest');
    return inject('pgTemplate');
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

/** Creates and starts a server. */
export async function startPostgres(): Promise<PgServer> {
  if (binaries === undefined) throw new Error(POSTGRES.reason);
  const root = await ownedTempDir('paygate-pg-');
  const data = join(root, 'data');
  const cluster = await template();
  // A copy of a fresh cluster is that cluster, for a fraction of initdb's CPU.
  if (cluster === undefined) await initdb(data);
  else await runAsOwner('cp', ['-a', cluster, data]);
  const port = await freePort();
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const start = () => exec('pg_ctl', ['-D', data, '-o', options, '-l', join(root, 'log'), '-w', '-t', '60', 'start']);
  const stop = () => exec('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
  await start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let running = true;
  return {
    url,
    port,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
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

async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const { stdout: uid } = await run('id', ['-u', 'postgres']);
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}
