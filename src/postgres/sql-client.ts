/**
 * The database client the PostgreSQL stores take: anything with `query(text, params) → { rows }`,
 * such as a `pg.Pool`, a `pg.Client` or PGlite. Nothing here loads `pg`.
 */

/** A row as the driver returns it. */
export type SqlRow = Record<string, unknown>;

/** Runs one statement with `$1`-style parameters. */
export interface SqlClient {
  query(text: string, params?: unknown[]): Promise<{ rows: SqlRow[] }>;
}

/** A connection checked out of a pool: give it back with `release()`. */
export interface PooledSqlClient extends SqlClient {
  release(destroy?: boolean | Error): void;
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
  if (value === undefined) return DEFAULT_STATEMENT_TIMEOUT;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 10 || value > 600_000) {
    throw new TypeError(`${where}: statementTimeout must be a whole number of milliseconds from 10 to 600000, got ${String(value)}`);
  }
  return value;
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
 * Runs one statement and waits at most `timeout` milliseconds for it, the wait for a pooled
 * connection included. On a pool, the statement runs on a connection checked out for it; when the
 * bound passes, that connection is released with the error (the pool destroys it) and the promise
 * rejects with a {@link StatementTimeoutError}. On a single connection (a `pg.Client`, PGlite) the
 * promise rejects and the statement is left to its connection.
 */
export function queryWithin(db: SqlClient, timeout: number, text: string, params?: unknown[]): Promise<{ rows: SqlRow[] }> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let session: PooledSqlClient | undefined;
    const giveBack = (error?: Error): void => {
      const held = session;
      session = undefined;
      held?.release(error);
    };
    const timer = setTimeout(() => {
      settled = true;
      const error = new StatementTimeoutError(`no answer from the database within ${timeout} ms`);
      giveBack(error);
      reject(error);
    }, timeout);
    const settle = (finish: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      finish();
    };
    const run = async (): Promise<{ rows: SqlRow[] }> => {
      if (!isPool(db)) return db.query(text, params);
      const connected = await db.connect();
      if (settled) {
        connected.release();
        return { rows: [] };
      }
      session = connected;
      try {
        const result = await connected.query(text, params);
        giveBack();
        return result;
      } catch (error) {
        giveBack(error instanceof Error ? error : new Error(String(error)));
        throw error;
      }
    };
    run().then(
      (result) => settle(() => resolve(result)),
      (error: unknown) => settle(() => reject(error)),
    );
  });
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
    throw new TypeError(`${where}: db must have a query(text, params) method (a pg.Pool, a pg.Client or PGlite)`);
  }
  return db as SqlClient;
}

/**
 * Runs `work` on one session: a connection checked out of a pool (released after), or `db`
 * itself when it is one connection already (a `pg.Client`, PGlite).
 */
export async function withSession<T>(db: SqlClient, work: (session: SqlClient) => Promise<T>): Promise<T> {
  if (!isPool(db)) return work(db);
  const session = await db.connect();
  let broken: Error | undefined;
  try {
    return await work(session);
  } catch (error) {
    broken = error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    session.release(broken);
  }
}

/** Runs `work` in one transaction on one session: committed when it resolves, rolled back when it throws. */
export async function inTransaction<T>(db: SqlClient, work: (session: SqlClient) => Promise<T>): Promise<T> {
  return withSession(db, async (session) => {
    await session.query('BEGIN');
    try {
      const result = await work(session);
      await session.query('COMMIT');
      return result;
    } catch (error) {
      await session.query('ROLLBACK').catch(() => {
        // The connection is gone: the server rolls the transaction back itself.
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
