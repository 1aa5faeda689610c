/**
 * Which driver failures mean "the database cannot be reached right now" (answered 503 and
 * retried) rather than a fault of the statement or the schema (thrown as they are).
 */
import { StorageUnavailableError } from '../payment-links/index.js';
import { StatementTimeoutError } from './sql-client.js';

/** SQLSTATE classes of a server that is down, busy or shutting down, or of a transaction to retry. */
const TRANSIENT_CLASSES: ReadonlySet<string> = new Set(['08', '40', '53', '57', '58']);
/** Lock not available, read-only transaction (a standby), too many connections. */
const TRANSIENT_STATES: ReadonlySet<string> = new Set(['55P03', '25006', '53300']);
/** Driver messages of a connection that failed, ended or timed out. */
const CONNECTION_MESSAGE = /connect|terminat|timeout|timed out|closed|ended|not queryable|socket/i;

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** The SQLSTATE of `error`, when it is a server error. */
export function errorState(error: unknown): string | undefined {
  return sqlState(error);
}

/** `true` for the error of a table that is not there (SQLSTATE 42P01: an area not migrated). */
export function isMissingTable(error: unknown): boolean {
  return sqlState(error) === '42P01';
}

/** `true` when `error` says the database is unreachable, overloaded or restarting. */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof StorageUnavailableError || error instanceof StatementTimeoutError) return true;
  const state = sqlState(error);
  if (state !== undefined) return TRANSIENT_CLASSES.has(state.slice(0, 2)) || TRANSIENT_STATES.has(state);
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return true;
  return CONNECTION_MESSAGE.test(error.message);
}

/** `error` as a {@link StorageUnavailableError} when it is one of unavailability; otherwise `error` itself. */
export function storageFailure(error: unknown, doing: string): unknown {
  if (error instanceof StorageUnavailableError || !isUnavailable(error)) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new StorageUnavailableError(`PostgreSQL is unavailable (${doing}): ${reason}`, { cause: error });
}
