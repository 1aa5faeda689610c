/**
 * The database of the PostgreSQL commands: `DATABASE_URL`, reached with `pg` (an optional peer,
 * loaded only when such a command runs).
 */
import { UsageError } from './command.js';
import type { SqlClient } from '../postgres/index.js';

/** The `--database-url <url>` option of a command: the database, in place of `DATABASE_URL`. */
export const DATABASE_URL_OPTION = { 'database-url': { type: 'string' } } as const;

/** `env` with the `--database-url` value, when given, as its `DATABASE_URL`. */
export function databaseEnv(
  env: Readonly<Record<string, string | undefined>>,
  databaseUrl: string | undefined,
): Readonly<Record<string, string | undefined>> {
  return databaseUrl === undefined ? env : { ...env, DATABASE_URL: databaseUrl };
}

/** An open connection; `end()` closes it. */
export interface CliDatabase extends SqlClient {
  end(): Promise<void>;
}

/** The environment text every PostgreSQL command's `--help` ends with. */
export const DATABASE_HELP = `Environment:
  DATABASE_URL  the PostgreSQL database, e.g. postgres://gateway@db.internal:5432/payments
                (needs the pg package: npm install pg)`;

/** What `import('pg')` gives, ESM or CommonJS. */
interface PgModule {
  Client: new (config: {
    connectionString: string;
    connectionTimeoutMillis: number;
    query_timeout: number;
    keepAlive: boolean;
    application_name: string;
  }) => CliDatabase & {
    connect(): Promise<void>;
    on(event: 'error', listener: (error: Error) => void): unknown;
  };
}

/** The address of `url` without user or password, for messages. */
function where(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || 'localhost'}${parsed.port === '' ? '' : `:${parsed.port}`}${parsed.pathname}`;
  } catch {
    return 'DATABASE_URL';
  }
}

async function loadPg(): Promise<PgModule> {
  try {
    const module = (await import('pg')) as unknown as { default?: PgModule } & PgModule;
    return module.default ?? module;
  } catch (error) {
    throw new Error(
      `this command needs the pg package, which is not installed: npm install pg (${error instanceof Error ? error.message : String(error)})`,
      {
        cause: error,
      },
    );
  }
}

/**
 * Connects to `DATABASE_URL`.
 * @throws {UsageError} when it is not set. @throws {Error} naming the host when it cannot be reached.
 */
export async function openDatabase(env: Readonly<Record<string, string | undefined>>): Promise<CliDatabase> {
  const url = env.DATABASE_URL;
  if (url === undefined || url.trim() === '')
    throw new UsageError('DATABASE_URL is not set: give the PostgreSQL database as postgres://user@host:5432/name');
  const { Client } = await loadPg();
  // Every wait is bounded: connecting, and each statement (a silent connection fails the command).
  const client = new Client({
    connectionString: url,
    connectionTimeoutMillis: 10_000,
    query_timeout: 60_000,
    keepAlive: true,
    application_name: 'paygate-auth-cli',
  });
  // A connection lost mid-command fails that command's query, reported below; pg also emits the
  // loss as an event, which with no listener would end the process with a stack trace instead.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw new Error(`cannot connect to the database at ${where(url)}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return client;
}

/** Runs `work` on the database, closing it after; a missing schema is reported with its remedy. */
export async function withDatabase<T>(
  env: Readonly<Record<string, string | undefined>>,
  work: (db: CliDatabase) => Promise<T>,
): Promise<T> {
  const db = await openDatabase(env);
  try {
    return await work(db);
  } catch (error) {
    const state = (error as { code?: unknown } | null)?.code ?? (error as { cause?: { code?: unknown } } | null)?.cause?.code;
    if (state === '42P01') throw new Error('the tables are missing: run "paygate-auth migrate" first', { cause: error });
    throw error;
  } finally {
    await db.end().catch(() => undefined);
  }
}
