/**
 * The database client the PostgreSQL stores take: anything with `query(text, params) → { rows }`,
 * such as a `pg.Pool`, a `pg.Client` or PGlite. Nothing here loads `pg`.
 */
import { describeHolder, numberOption } from '../internal/index.js';

/** A row as the driver returns it. */
export type SqlRow = Record<string, unknown>;

/** Runs one statement with `$1`-style parameters. */
export interface SqlClient {
  query(text: string, params?: unknown[]): Promise<{ rows: SqlRow[] }>;
}

/** A connection checked out of a pool: give it back with `release()`. */
export interface PooledSqlClient extends SqlClient {
  release(destroy?: boolean | Error): void;
  /**
   * A `pg` client reports a connection lost between statements as an `error` event, which the
   * pool does not listen to while the client is checked out.
   */
  on?(event: 'error', listener: (error: Error) => void): unknown;
  removeListener?(event: 'error', listener: (error: Error) => void): unknown;
}

/** A pool (`pg.Pool`): `connect()` checks out one connection. */
export interface SqlPool extends SqlClient {
  connect(): Promise<PooledSqlClient>;
  readonly idleCount: number;
}

/** Milliseconds a statement may take, waiting for a connection included, unless told otherwise. */
export const DEFAULT_STATEMENT_TIMEOUT = 5000;

/** Checks a `statementTimeout` option (whole milliseconds, 10 to 600 000). */
export function checkStatementTimeout(value: unknown, where: string): number {
  return numberOption(where, 'statementTimeout', value, DEFAULT_STATEMENT_TIMEOUT, {
    min: 10,
    max: 600_000,
    integer: true,
    unit: 'milliseconds',
  });
}

/**
 * A statement that got no answer within its bound. The connection it waited on was destroyed,
 * not returned to the pool: a connection that went silent is never handed out again.
 */
export class StatementTimeoutError extends Error {
  override readonly name = 'StatementTimeoutError';
  readonly code = 'statement_timeout' as const;
}

/**
 * `promise`, or a {@link StatementTimeoutError} after `ms` milliseconds; `onTimeout` runs first,
 * with that error (to destroy the connection that went silent). `promise` is left to settle on
 * its own, unobserved.
 */
export function within<T>(promise: Promise<T>, ms: number, what: string, onTimeout?: (error: StatementTimeoutError) => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new StatementTimeoutError(`${what}: no answer within ${ms} ms`);
      onTimeout?.(error);
      reject(error);
    }, ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** `pg`'s `query(config)`: a statement with a `name` is parsed once per connection and run by name after. */
interface PreparingClient {
  query(config: { readonly name: string; readonly text: string; readonly values: unknown[] }): Promise<{ rows: SqlRow[] }>;
}

/**
 * One connection of a pool, checked out at the first statement and held for the next ones, each
 * statement bounded by `timeout` milliseconds (the first one's bound includes the wait for the
 * connection). When a bound passes, the connection is released with the error, so the pool
 * destroys it, and every later statement rejects with that error at once.
 */
class BoundedSession implements SqlClient {
  readonly #pool: SqlPool;
  readonly #timeout: number;
  #connection: Promise<PooledSqlClient> | undefined;
  #held: PooledSqlClient | undefined;
  #released = false;
  #failure: Error | undefined;
  /** The connection dropped between statements (a server shut down, say): destroy it at release. */
  #lost: Error | undefined;
  readonly #onError = (error: Error): void => {
    this.#lost ??= error;
  };

  constructor(pool: SqlPool, timeout: number) {
    this.#pool = pool;
    this.#timeout = timeout;
  }

  query(text: string, params?: unknown[]): Promise<{ rows: SqlRow[] }> {
    return this.#run((connection) => connection.query(text, params));
  }

  /** `text` as `pg`'s named prepared statement `name`: parsed and planned once per connection. */
  queryPrepared(name: string, text: string, params: unknown[]): Promise<{ rows: SqlRow[] }> {
    return this.#run((connection) => (connection as PooledSqlClient & PreparingClient).query({ name, text, values: params }));
  }

  #run(statement: (connection: PooledSqlClient) => Promise<{ rows: SqlRow[] }>): Promise<{ rows: SqlRow[] }> {
    if (this.#released) return Promise.reject(this.#failure ?? new Error('the session was released'));
    return within(this.#checkOut().then(statement), this.#timeout, 'PostgreSQL', (error) => this.release(error));
  }

  #checkOut(): Promise<PooledSqlClient> {
    this.#connection ??= this.#pool.connect().then((connection) => {
      if (this.#released) {
        // Handed out after the bound passed: unused, so it goes back to the pool as it is.
        connection.release();
        throw this.#failure ?? new Error('the session was released');
      }
      this.#held = connection;
      connection.on?.('error', this.#onError);
      return connection;
    });
    return this.#connection;
  }

  /** Gives the connection back; with an error, the pool destroys it. Later calls do nothing. */
  release(error?: Error): void {
    if (this.#released) return;
    this.#released = true;
    this.#failure = error;
    const held = this.#held;
    this.#held = undefined;
    held?.removeListener?.('error', this.#onError);
    held?.release(error ?? this.#lost);
  }
}

/**
 * Runs one statement and waits at most `timeout` milliseconds for it, the wait for a pooled
 * connection included. On a pool, the statement runs on a connection checked out for it; when the
 * bound passes, that connection is released with the error (the pool destroys it) and the promise
 * rejects with a {@link StatementTimeoutError}. On a single connection (a `pg.Client`, PGlite) the
 * promise rejects and the statement is left to its connection.
 */
export function queryWithin(db: SqlClient, timeout: number, text: string, params?: unknown[]): Promise<{ rows: SqlRow[] }> {
  if (!isPool(db)) return within(db.query(text, params), timeout, 'PostgreSQL');
  return withSession(db, timeout, (session) => session.query(text, params));
}

/**
 * {@link queryWithin}, and on a pool (`pg.Pool`) the statement is `pg`'s named prepared statement
 * `name`: each connection sends `text` to be parsed and planned once, then runs it by name (the
 * server skips parsing and, from the sixth run, planning). `text` must be the same at every call
 * with `name`. A single connection runs `text` as {@link queryWithin} does.
 */
export function queryPreparedWithin(
  db: SqlClient,
  timeout: number,
  name: string,
  text: string,
  params: unknown[],
): Promise<{ rows: SqlRow[] }> {
  if (!isPool(db)) return queryWithin(db, timeout, text, params);
  return withSession(db, timeout, (session) => (session as BoundedSession).queryPrepared(name, text, params));
}

/** `true` for a pool whose `connect()` checks out a connection (a `pg.Pool`, not a `pg.Client`). */
export function isPool(db: unknown): db is SqlPool {
  return (
    typeof db === 'object' &&
    db !== null &&
    typeof (db as Partial<SqlPool>).connect === 'function' &&
    typeof (db as Partial<SqlPool>).idleCount === 'number'
  );
}

/** Checks that `db` can run statements. */
export function checkClient(db: unknown, where: string): SqlClient {
  if (typeof db !== 'object' || db === null || typeof (db as Partial<SqlClient>).query !== 'function') {
    throw new TypeError(
      `${where}: db must have a query(text, params) method (a pg.Pool, a pg.Client or PGlite), got ${describeHolder(db, 'query')}`,
    );
  }
  return db as SqlClient;
}

/**
 * Runs `work` on one session. On a pool, that is one connection checked out for it and released
 * after, each statement bounded by `timeout` milliseconds (the first one's wait for the connection
 * included): past a bound the connection is destroyed and the statement rejects with a
 * {@link StatementTimeoutError}, as does every later one. A single connection (a `pg.Client`,
 * PGlite) is the session itself, unbounded here: it cannot be replaced, so its own settings
 * (pg's `query_timeout`) bound it.
 */
export async function withSession<T>(db: SqlClient, timeout: number, work: (session: SqlClient) => Promise<T>): Promise<T> {
  if (!isPool(db)) return work(db);
  const session = new BoundedSession(db, timeout);
  try {
    const result = await work(session);
    session.release();
    return result;
  } catch (error) {
    session.release(error instanceof Error ? error : new Error(String(error)));
    throw error;
  }
}

/**
 * Runs `work` in one transaction on one session ({@link withSession}): committed when it resolves,
 * rolled back when it throws. On a pool the server is told the same bound (`statement_timeout`
 * and `idle_in_transaction_session_timeout`, for this transaction only), so that a transaction
 * whose client went silent is rolled back by the server, its locks freed, within the bound.
 */
export async function inTransaction<T>(db: SqlClient, timeout: number, work: (session: SqlClient) => Promise<T>): Promise<T> {
  return withSession(db, timeout, async (session) => {
    await session.query('BEGIN');
    try {
      if (isPool(db)) {
        await session.query(
          `SELECT set_config('statement_timeout', $1, true), set_config('idle_in_transaction_session_timeout', $1, true)`,
          [String(timeout)],
        );
      }
      const result = await work(session);
      await session.query('COMMIT');
      return result;
    } catch (error) {
      await session.query('ROLLBACK').catch(() => {
        // The connection is gone or silent: the server rolls the transaction back itself.
      });
      throw error;
    }
  });
}

/** A `json` column as the driver gives it: parsed already (pg, PGlite) or as text. */
export function jsonColumn(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}

/** A `bigint` column: pg gives text, PGlite a number or bigint. */
export function numberColumn(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}
