/**
 * The database of the PostgreSQL commands: `--database-url`, else `DATABASE_URL`, reached with
 * `pg` (an optional peer, loaded only when such a command runs). The URL is checked before `pg`
 * sees it (a URL, of the `postgres:` scheme), connecting is bounded (`--connect-timeout`), and
 * every message names the host and port, never the user's password.
 */
import { capHint, quote } from '../internal/index.js';
import { SCHEMA_VERSIONS, type SchemaArea, type SqlClient, StatementTimeoutError } from '../postgres/index.js';
import { TABLES } from '../postgres/internal.js';
import { type ParsedOptions, secondsValue, stringValue } from './cli-options.js';
import { UsageError } from './command.js';

/** The options of every command that reads the database. */
export const DATABASE_OPTIONS = {
  'database-url': { type: 'string' },
  'connect-timeout': { type: 'string' },
  'statement-timeout': { type: 'string' },
} as const;

/** Seconds to wait for the database to answer when connecting, unless `--connect-timeout` says. */
export const DEFAULT_CONNECT_TIMEOUT = 10;

/** Longest `--connect-timeout` and `--statement-timeout`, in seconds. */
const MAX_CONNECT_TIMEOUT = 600;

/**
 * Seconds one statement may take, unless `--statement-timeout` says: past it a connection that went
 * silent fails the command, and the server ends the statement and the session's transaction.
 */
export const DEFAULT_STATEMENT_TIMEOUT = 60;

/** The text every PostgreSQL command's `--help` ends with: the database options and DATABASE_URL. */
export const DATABASE_HELP = `Database:
  --database-url <url>         the database, in place of DATABASE_URL (which keeps the password
                               out of the process list)
  --connect-timeout <s>        how long to wait for the database to answer when connecting, in
                               whole seconds, 1 to ${MAX_CONNECT_TIMEOUT} (default ${DEFAULT_CONNECT_TIMEOUT})
  --statement-timeout <s>      how long to wait for each answer of the database once connected
                               (a network gone silent fails the command after it, and the server
                               ends the statement), in whole seconds, 1 to ${MAX_CONNECT_TIMEOUT} (default ${DEFAULT_STATEMENT_TIMEOUT})

Environment:
  DATABASE_URL  the PostgreSQL database, e.g. postgres://gateway@db.internal:5432/payments
                (needs the pg package: npm install pg)`;

/** The database a command is to reach, checked. */
export interface DatabaseTarget {
  /** A `postgres:` or `postgresql:` URL. */
  readonly url: string;
  /** Where the URL came from, for messages: `--database-url` or `DATABASE_URL`. */
  readonly from: '--database-url' | 'DATABASE_URL';
  /** Milliseconds to wait for the database to answer when connecting. */
  readonly connectTimeout: number;
  /** Milliseconds to wait for each statement's answer (`--statement-timeout`). */
  readonly statementTimeout: number;
}

/** An open connection; `end()` closes it (unbounded: the CLI closes through {@link closeDatabase}). */
export interface CliDatabase extends SqlClient {
  end(): Promise<void>;
  /** Drops the connection's socket at once, without waiting for the server. */
  drop(): void;
  /** Milliseconds {@link closeDatabase} waits for the server to close: the shorter of the two timeouts. */
  readonly closeTimeout: number;
  /** The bound of each statement, in milliseconds: give it as the library's `statementTimeout`. */
  readonly statementTimeout: number;
}

/** What `import('pg')` gives, ESM or CommonJS. */
interface PgModule {
  Client: new (config: {
    connectionString: string;
    connectionTimeoutMillis: number;
    query_timeout: number;
    statement_timeout: number;
    idle_in_transaction_session_timeout: number;
    keepAlive: boolean;
    application_name: string;
  }) => SqlClient & {
    end(): Promise<void>;
    connect(): Promise<void>;
    on(event: 'error', listener: (error: Error) => void): unknown;
    /** pg's connection; its socket is dropped when a close goes unanswered ({@link closeDatabase}). */
    readonly connection: { readonly stream: { destroy(): void } };
  };
}

const EXAMPLE = 'postgres://user@host:5432/name';

/** The parts of a database URL the messages and checks read. */
type UrlParts = Pick<URL, 'protocol' | 'hostname' | 'port' | 'pathname' | 'searchParams'>;

/**
 * `url` parsed as pg parses it: a URL with a user and no host (`postgres://gateway@/payments?host=
 * /var/run/postgresql`, libpq's form for a socket) is one, its host empty. `undefined` for text
 * that is no URL.
 */
function parseUrl(url: string): UrlParts | undefined {
  if (URL.canParse(url)) return new URL(url);
  const socket = url.replace('@/', '@localhost/');
  if (socket === url || !URL.canParse(socket)) return undefined;
  const { protocol, port, pathname, searchParams } = new URL(socket);
  return { protocol, hostname: '', port, pathname, searchParams };
}

/**
 * What a message may show of a URL: its scheme, host, port and path, never its user or password.
 * Text that is no URL is shown only past its last `@`, and not at all when it holds a `:` (a
 * password may be anywhere in it).
 */
export function shownUrl(url: string): string {
  const parts = parseUrl(url);
  if (parts !== undefined) {
    const { protocol, hostname, port, pathname } = parts;
    const special = protocol === 'postgres:' || protocol === 'postgresql:';
    return quote(`${protocol}//${hostname}${port === '' ? '' : `:${port}`}${special ? pathname : ''}`);
  }
  const at = url.lastIndexOf('@');
  if (at !== -1) return quote(`…${url.slice(at)}`);
  return url.includes(':') ? '(not shown: it may hold a password)' : quote(url);
}

/**
 * The host, port and database of `url`, for messages: `db.internal:5432/payments`. A `host` or
 * `port` parameter (`?host=/var/run/postgresql`, a socket's directory) is what pg connects to,
 * in place of the URL's own, and is named so: escaped, as text of the URL may hold anything.
 */
function where(url: string): string {
  const { hostname, port, pathname, searchParams } = parseUrl(url) as UrlParts;
  const host = searchParams.get('host') ?? (hostname === '' ? 'localhost' : hostname);
  const named = `${host}:${searchParams.get('port') ?? (port === '' ? '5432' : port)}${pathname}`;
  return named === capHint(named) ? named : quote(named);
}

/** @throws {UsageError} when `url` is not a `postgres:` URL, saying what it is instead. */
function checkUrl(url: string, from: DatabaseTarget['from']): void {
  const parts = parseUrl(url);
  if (parts === undefined) throw new UsageError(`${from} is not a URL, got ${shownUrl(url)}: give the database as ${EXAMPLE}`);
  const { protocol } = parts;
  if (protocol !== 'postgres:' && protocol !== 'postgresql:') {
    throw new UsageError(
      `${from} must be a postgres: or postgresql: URL, got a ${quote(protocol)} URL (${shownUrl(url)}): give ${EXAMPLE}`,
    );
  }
}

/**
 * The database `--database-url` (else `DATABASE_URL` of `env`) names, and `--connect-timeout`.
 * @throws {UsageError} when none is named, it is not a `postgres:` URL, or the timeout is not a
 * whole number of seconds from 1 to 600.
 */
export function databaseTarget(parsed: ParsedOptions | undefined, env: Readonly<Record<string, string | undefined>>): DatabaseTarget {
  const given = parsed === undefined ? undefined : stringValue(parsed, 'database-url');
  const from = given === undefined ? 'DATABASE_URL' : '--database-url';
  const url = given ?? env.DATABASE_URL;
  if (url === undefined || url.trim() === '') {
    const found = url === undefined ? 'is not set' : `is blank (${quote(url)})`;
    throw new UsageError(`${from} ${found}: give the PostgreSQL database as ${EXAMPLE}`);
  }
  checkUrl(url, from);
  // White space around it (pasted, or from an env file) is no part of it: the URL is checked
  // without it (WHATWG URL drops it), so pg is given it without it too, or pg reads another URL.
  const trimmed = url.trim();
  const seconds = (name: string, fallback: number) =>
    (parsed === undefined ? undefined : secondsValue(parsed, name, MAX_CONNECT_TIMEOUT)) ?? fallback;
  return {
    url: trimmed,
    from,
    connectTimeout: seconds('connect-timeout', DEFAULT_CONNECT_TIMEOUT) * 1000,
    statementTimeout: seconds('statement-timeout', DEFAULT_STATEMENT_TIMEOUT) * 1000,
  };
}

async function loadPg(): Promise<PgModule> {
  try {
    const module = (await import('pg')) as unknown as { default?: PgModule } & PgModule;
    return module.default ?? module;
  } catch (error) {
    throw new Error(
      `this command needs the pg package, which is not installed: npm install pg (${error instanceof Error ? error.message : String(error)})`,
      { cause: error },
    );
  }
}

/** What went wrong connecting to `target`, in words: a timeout, a refusal, an unknown host, or pg's own message. */
function connectProblem(error: unknown, target: DatabaseTarget, elapsed: number): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (elapsed >= target.connectTimeout || message === 'timeout expired') {
    return `no answer within ${target.connectTimeout / 1000} s (the connect timeout; --connect-timeout <s> waits longer): check the host and port, and that no firewall drops the connection`;
  }
  if (code === 'ECONNREFUSED') return 'the connection was refused (ECONNREFUSED): is PostgreSQL running and listening on that port?';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `the host name cannot be resolved (${code}): check ${target.from}`;
  return message;
}

/**
 * Connects to `target`, waiting at most its connect timeout.
 * @throws {Error} saying what went wrong, naming the host and port (never the password).
 */
export async function openDatabase(target: DatabaseTarget): Promise<CliDatabase> {
  const { Client } = await loadPg();
  // Every wait is bounded: connecting, and each statement (a silent connection fails the command).
  // The server is told the same bound, so that a session the command gave up on (its answers lost
  // to a silent network) ends there too, its transaction rolled back and its locks freed.
  const client = new Client({
    connectionString: target.url,
    connectionTimeoutMillis: target.connectTimeout,
    query_timeout: target.statementTimeout,
    statement_timeout: target.statementTimeout,
    idle_in_transaction_session_timeout: target.statementTimeout,
    keepAlive: true,
    application_name: 'paygate-auth-cli',
  });
  // A connection lost mid-command fails that command's query, reported below; pg also emits the
  // loss as an event, which with no listener would end the process with a stack trace instead.
  client.on('error', () => undefined);
  const started = performance.now();
  try {
    await client.connect();
  } catch (error) {
    const elapsed = performance.now() - started;
    await client.end().catch(() => undefined);
    throw new Error(`cannot connect to the database at ${where(target.url)}: ${connectProblem(error, target, elapsed)}`, { cause: error });
  }
  return Object.assign(client, {
    statementTimeout: target.statementTimeout,
    closeTimeout: Math.min(target.connectTimeout, target.statementTimeout),
    drop: () => client.connection.stream.destroy(),
  });
}

/**
 * Closes `db`: pg sends the server its goodbye and waits for the server to close its side. Across a
 * partition that answer never comes, so past `closeTimeout` milliseconds (the shorter of the
 * connect and statement timeouts) the socket is dropped and the close is done.
 */
export async function closeDatabase(db: CliDatabase): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const unanswered = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      db.drop();
      resolve();
    }, db.closeTimeout);
  });
  try {
    await Promise.race([db.end().catch(() => undefined), unanswered]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `true` when `error`, or an error it was caused by, is a statement that got no answer in time:
 * `pg`'s `query_timeout`, the library's {@link StatementTimeoutError}, or the server's cancel of
 * a statement past `statement_timeout` (SQLSTATE 57014).
 */
function isStatementTimeout(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth += 1) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (current instanceof StatementTimeoutError || code === '57014' || message === 'Query read timeout') return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The database lacks a table the command reads: it was not migrated (or not in this schema). */
export class TablesMissingError extends Error {
  override readonly name = 'TablesMissingError';
  readonly code = 'tables_missing' as const;
}

/** Runs `work` on the database, closing it after; a missing schema is reported with its remedy. */
export async function withDatabase<T>(target: DatabaseTarget, work: (db: CliDatabase) => Promise<T>): Promise<T> {
  const db = await openDatabase(target);
  try {
    return await work(db);
  } catch (error) {
    const state = (error as { code?: unknown } | null)?.code ?? (error as { cause?: { code?: unknown } } | null)?.cause?.code;
    if (state === '42P01') throw new TablesMissingError('the tables are missing: run "paygate-auth migrate" first', { cause: error });
    if (isStatementTimeout(error)) {
      throw new Error(
        `the database at ${where(target.url)} gave no answer within ${target.statementTimeout / 1000} s (the statement timeout; --statement-timeout <s> waits longer, up to ${MAX_CONNECT_TIMEOUT}): check the network to the database and that it is up, then run the command again`,
        { cause: error },
      );
    }
    throw error;
  } finally {
    await closeDatabase(db);
  }
}

/** The database holds a schema newer than this paygate-auth knows: a change is refused. */
export class SchemaNewerError extends Error {
  override readonly name = 'SchemaNewerError';
  readonly code = 'schema_newer' as const;
}

/**
 * Resolves when no area of `areas` in the database is newer than this paygate-auth knows; else
 * rejects with a {@link SchemaNewerError} naming the area and both versions. A command that
 * changes the tables calls it first: an older command line than the one that migrated them
 * may write what the newer schema means otherwise. A ledger it cannot read (missing, not
 * granted) is left to the command itself.
 */
export async function requireKnownSchema(db: CliDatabase, areas: readonly SchemaArea[]): Promise<void> {
  let rows: Record<string, unknown>[];
  try {
    ({ rows } = await db.query(`SELECT area, max(version) AS version FROM ${TABLES.migrations} GROUP BY area ORDER BY area`));
  } catch (error) {
    const state = (error as { code?: unknown } | null)?.code;
    if (state === '42P01' || state === '42501' || state === '42703') return;
    throw error;
  }
  const known = SCHEMA_VERSIONS as Readonly<Record<string, number>>;
  for (const row of rows) {
    const area = String(row.area);
    const found = Number(row.version);
    const newest = (areas as readonly string[]).includes(area) ? known[area] : undefined;
    if (newest !== undefined && found > newest) {
      throw new SchemaNewerError(
        `the database has ${quote(area)} schema version ${found}, newer than ${newest}, the newest this paygate-auth knows: nothing was changed; run the paygate-auth that migrated it (or upgrade this one)`,
      );
    }
  }
}
