/**
 * The example gateway's settings, from the environment, every one checked before anything starts:
 * a value refused is a {@link SettingError} naming the variable, the value found and the values
 * accepted, so the gateway stops at once (exit code 2), before it opens the database.
 *
 *   PORT                          0 to 65535, 0 for any free port (default 3000)
 *   PAYGATE_SHUTDOWN_DRAIN_MS     0 to 600000 (default 10000)
 *   DATABASE_URL                  a postgres:// or postgresql:// URL; unset or empty: in memory
 *
 * Tuning, read with DATABASE_URL and checked either way (milliseconds, whole numbers; each sets the
 * option of paygate-auth/postgres named, within that option's bounds):
 *   PAYGATE_IDEMPOTENCY_LEASE_MS  PostgresIdempotencyStore leaseTime, 100 to 86400000 (default 30000)
 *   PAYGATE_IDEMPOTENCY_WAIT_MS   PostgresIdempotencyStore pendingWait, 0 to 600000 (default 10000)
 *   PAYGATE_STATEMENT_TIMEOUT_MS  statementTimeout of the pool, stores and followers, 10 to 600000 (default 5000)
 *   PAYGATE_CONNECT_TIMEOUT_MS    poolSettings connectTimeout, 10 to 600000 (default 2000)
 *   PAYGATE_CONTROLS_POLL_MS      the controls' pollInterval, 100 to 600000 (default 5000)
 *   PAYGATE_REGISTRY_POLL_MS      the registry's pollInterval, 100 to 600000 (default 5000)
 *   PAYGATE_KEY_HISTORY_FLUSH_MS  the key history's flushInterval, 100 to 600000 (default 10000)
 *   PAYGATE_HEARTBEAT_MS          postgresHeartbeat interval, 100 to 600000 (default 2000)
 *   PAYGATE_INSTANCE_NAME         postgresHeartbeat name, 1 to 200 characters without control
 *                                 characters (default <host>:<pid>)
 */
import { quote } from 'paygate-auth';
import { DEFAULT_DRAIN_MS } from './node-server.mjs';

/**
 * A setting from the environment refused (`code` `invalid_setting`): its message names the
 * variable, the values accepted, the value found and what to do.
 */
export class SettingError extends Error {
  name = 'SettingError';
  code = 'invalid_setting';
  /**
   * @param {string} variable the environment variable
   * @param {string} expected what it must be
   * @param {string} found the value found, as the message shows it (quoted, or described)
   */
  constructor(variable, expected, found) {
    super(`${variable} must be ${expected}, got ${found}: correct it, or unset it for the default`);
    this.variable = variable;
  }
}

/** The tuning variables: the option each sets, its default and its bounds (those of the option). */
export const TUNING = {
  leaseTime: { variable: 'PAYGATE_IDEMPOTENCY_LEASE_MS', fallback: 30_000, min: 100, max: 86_400_000 },
  pendingWait: { variable: 'PAYGATE_IDEMPOTENCY_WAIT_MS', fallback: 10_000, min: 0, max: 600_000 },
  statementTimeout: { variable: 'PAYGATE_STATEMENT_TIMEOUT_MS', fallback: 5000, min: 10, max: 600_000 },
  connectTimeout: { variable: 'PAYGATE_CONNECT_TIMEOUT_MS', fallback: 2000, min: 10, max: 600_000 },
  controlsPollInterval: { variable: 'PAYGATE_CONTROLS_POLL_MS', fallback: 5000, min: 100, max: 600_000 },
  registryPollInterval: { variable: 'PAYGATE_REGISTRY_POLL_MS', fallback: 5000, min: 100, max: 600_000 },
  flushInterval: { variable: 'PAYGATE_KEY_HISTORY_FLUSH_MS', fallback: 10_000, min: 100, max: 600_000 },
  heartbeatInterval: { variable: 'PAYGATE_HEARTBEAT_MS', fallback: 2000, min: 100, max: 600_000 },
};

/** The longest PAYGATE_INSTANCE_NAME (postgresHeartbeat's bound). */
const MAX_INSTANCE_NAME = 200;

/** `env[variable]` as a whole number from `min` to `max`, or `fallback` when unset or empty. */
function wholeNumber(env, variable, { fallback, min, max }, kind = 'a whole number of milliseconds') {
  const text = env[variable];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) throw new SettingError(variable, `${kind} from ${min} to ${max}`, quote(text));
  return value;
}

/**
 * DATABASE_URL, or `undefined` when unset or empty (in memory). Refuses one that is no
 * `postgres://` or `postgresql://` URL: `pg` would take `localhost:5432/db` for a database named
 * after the port on host 5432, and ignore a misspelt scheme. The message names the scheme found,
 * never the rest (a password).
 */
function databaseUrl(env) {
  const url = env.DATABASE_URL;
  if (url === undefined || url === '') return undefined;
  let scheme;
  try {
    scheme = new URL(url).protocol;
  } catch {
    scheme = undefined;
  }
  if (scheme === 'postgres:' || scheme === 'postgresql:') return url;
  const found = scheme === undefined ? 'a value that is no URL' : `the scheme ${quote(scheme)}`;
  throw new SettingError('DATABASE_URL', 'a postgres:// URL (postgres://user:password@host:port/database)', found);
}

/** PAYGATE_INSTANCE_NAME, or `undefined` when unset or empty (the heartbeat's default name). */
function instanceName(env) {
  const name = env.PAYGATE_INSTANCE_NAME;
  if (name === undefined || name === '') return undefined;
  if (name.length > MAX_INSTANCE_NAME || /[\u0000-\u001f\u007f]/.test(name)) {
    throw new SettingError('PAYGATE_INSTANCE_NAME', `1 to ${MAX_INSTANCE_NAME} characters without control characters`, quote(name));
  }
  return name;
}

/**
 * Every setting the gateway reads from `env`, checked: `{ port, drainMs, databaseUrl, tuning,
 * instanceName }` (`databaseUrl` `undefined`: in memory; `tuning` keyed by the option each sets).
 * @throws {SettingError} naming the first variable refused.
 */
export function readSettings(env) {
  const port = wholeNumber(env, 'PORT', { fallback: 3000, min: 0, max: 65_535 }, 'a port number (0 for any free port)');
  const drainMs = wholeNumber(env, 'PAYGATE_SHUTDOWN_DRAIN_MS', { fallback: DEFAULT_DRAIN_MS, min: 0, max: 600_000 });
  const url = databaseUrl(env);
  const tuning = Object.fromEntries(Object.entries(TUNING).map(([option, rule]) => [option, wholeNumber(env, rule.variable, rule)]));
  return { port, drainMs, databaseUrl: url, tuning, instanceName: instanceName(env) };
}
