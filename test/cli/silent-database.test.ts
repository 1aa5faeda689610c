/**
 * The PostgreSQL commands when the network to the database goes silent mid-statement (a failover,
 * a partition): the connection stays open and nothing more comes back. Each command's statement
 * is held on a lock the test takes, the TCP proxy (test/postgres/tcp-proxy.ts) is silenced while
 * it waits, then the lock is let go: the answer never reaches the command. The command must fail
 * within `--statement-timeout`, in one line naming the host, the bound and the option, and the
 * server must end the session it abandoned instead of keeping it (and its locks) open.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands.js';
import { EXIT, runCli } from '../../src/cli/run-cli.js';
import { migrate } from '../../src/postgres/index.js';
import { MIGRATION_LOCK } from '../../src/postgres/schema.js';
import { TABLES } from '../../src/postgres/schema-names.js';
import { LOADED_MARGIN_MS } from '../support/loaded-machine.js';
import { eventually } from '../postgres/eventually.js';
import { type TestDatabase, createTestDatabase, skipWithoutPostgres } from '../postgres/pg-server.js';
import { type TcpProxy, startProxy } from '../postgres/tcp-proxy.js';
import { captureIo } from './cli-io.js';

const SKIP = skipWithoutPostgres('test/cli/silent-database.test.ts');
const ISSUER = 'https://auth.acme.example';
/** `--statement-timeout 1`: one second, well below the library's 5 s and the command line's default. */
const BOUND_MS = 1000;

/** Every command that reads or writes the database, with what it needs to reach its first statement. */
const COMMANDS_TRIED: readonly (readonly string[])[] = [
  ['migrate'],
  ['controls'],
  ['controls', 'compact'],
  ['fleet'],
  ['issuers', 'list'],
  ['issuers', 'history'],
  ['keys', 'status', ISSUER],
  ['suspend-issuer', '--issuer', ISSUER, '--force'],
];

let db: TestDatabase;
let proxy: TcpProxy;
/** Holds the locks, in a transaction of its own. */
let operator: pg.Client;
/** Reads pg_stat_activity outside that transaction (whose snapshot of it would never change). */
let observer: pg.Client;

/** The command line's sessions on the test's database, as the server sees them. */
async function cliSessions(): Promise<{ state: string; waiting: string | null }[]> {
  const { rows } = await observer.query(
    `SELECT state, wait_event_type AS waiting FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'paygate-auth-cli'`,
  );
  return rows as { state: string; waiting: string | null }[];
}

/**
 * Runs `args` through the proxy while every table (and the migration lock) is held, silences the
 * proxy once the command's statement waits on the lock, then lets the lock go.
 */
async function runThroughSilence(args: readonly string[]) {
  await operator.query('BEGIN');
  await operator.query(`LOCK TABLE ${Object.values(TABLES).join(', ')} IN ACCESS EXCLUSIVE MODE`);
  await operator.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
  const io = captureIo();
  const started = performance.now();
  const running = runCli(
    [...args, '--statement-timeout', String(BOUND_MS / 1000)],
    { ...io, env: { DATABASE_URL: proxy.via(db.url) } },
    COMMANDS,
  );
  let ended = false;
  void running.finally(() => {
    ended = true;
  });
  try {
    await eventually('the command waits on the lock', async () => {
      if (ended) throw new Error(`the command ended before its statement waited: ${io.err()}`);
      return (await cliSessions()).some((session) => session.waiting === 'Lock');
    });
    proxy.silence();
  } finally {
    await operator.query('ROLLBACK');
  }
  const code = await running;
  return { code, err: io.err(), elapsed: performance.now() - started };
}

describe.skipIf(SKIP)('the PostgreSQL commands when the network goes silent mid-statement', () => {
  beforeAll(async () => {
    db = await createTestDatabase('cli_silent');
    operator = new pg.Client({ connectionString: db.url });
    operator.on('error', () => undefined);
    await operator.connect();
    await migrate(operator);
    observer = new pg.Client({ connectionString: db.url });
    observer.on('error', () => undefined);
    await observer.connect();
    proxy = await startProxy(db.port);
  });

  afterEach(async () => {
    proxy.reset();
    proxy.heal();
    await observer.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'paygate-auth-cli'`,
    );
  });

  afterAll(async () => {
    await proxy?.close();
    await operator?.end();
    await observer?.end();
  });

  it.each(COMMANDS_TRIED.map((args) => [args.join(' '), args]))(
    '%s fails (exit 1) within --statement-timeout, in one line naming the host, the bound and the option',
    async (_name, args) => {
      const { code, err, elapsed } = await runThroughSilence(args);
      expect(code).toBe(EXIT.failed);
      expect(err.trim().split('\n')).toHaveLength(1);
      expect(err).toContain(`127.0.0.1:${proxy.port}/${db.name}`);
      expect(err).toContain('within 1 s');
      expect(err).toContain('--statement-timeout');
      // The bound is 1 s; the margin keeps it below the library's own 5 s, which must not be what ended it.
      expect(elapsed).toBeLessThan(BOUND_MS + LOADED_MARGIN_MS);
    },
  );

  it('leaves no session of its own open on the server once it gave up: the server ends it within the bound', async () => {
    const { code } = await runThroughSilence(['migrate']);
    expect(code).toBe(EXIT.failed);
    // The proxy keeps the server's side of the abandoned connection open, as a partition does: only
    // the server's own bounds (statement and idle-in-transaction timeouts) end the session.
    await eventually(
      'the abandoned session is ended by the server',
      async () => (await cliSessions()).length === 0,
      BOUND_MS + LOADED_MARGIN_MS,
    );
  });
});
