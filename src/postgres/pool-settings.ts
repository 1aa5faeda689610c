/**
 * The `pg.Pool` settings that bound every wait on the network: a connection attempt, a
 * statement, and a connection that went silent without closing.
 */
import { describeValue, numberOption, optionNames, rejectUnknownOptions } from '../internal/index.js';
import { DEFAULT_STATEMENT_TIMEOUT, checkStatementTimeout } from './sql-client.js';

/** The members of {@link PoolSettingsOptions}: any other is refused, naming the nearest. */
const POOL_SETTINGS_OPTION_NAMES = optionNames<PoolSettingsOptions>({ statementTimeout: true, connectTimeout: true, max: true });

/** Options of {@link poolSettings}. */
export interface PoolSettingsOptions {
  /**
   * Milliseconds a statement may run: the client stops waiting (`query_timeout`, and the
   * connection is destroyed) and the server cancels it (`statement_timeout`). 10 to 600 000.
   * @default 5000
   */
  readonly statementTimeout?: number | undefined;
  /**
   * Milliseconds to wait for a connection: a new one to answer, or a free one in a full pool.
   * @default 2000
   */
  readonly connectTimeout?: number | undefined;
  /**
   * Most connections of the pool.
   * @default 10
   */
  readonly max?: number | undefined;
}

/** What {@link poolSettings} returns: a `pg.PoolConfig` (its member names; every time in milliseconds). */
export interface PoolSettings {
  /** The `postgres://` URL given. */
  readonly connectionString: string;
  /** Most connections (`max`). */
  readonly max: number;
  /** Milliseconds to wait for a connection (`connectTimeout`). */
  readonly connectionTimeoutMillis: number;
  /** Milliseconds the client waits for a statement before destroying its connection (`statementTimeout`). */
  readonly query_timeout: number;
  /** Milliseconds the server lets a statement run before cancelling it (`statementTimeout`). */
  readonly statement_timeout: number;
  /** TCP keep-alive on every connection, so that a dead peer is found. */
  readonly keepAlive: true;
  /** Milliseconds of silence before the first keep-alive probe: 10 000. */
  readonly keepAliveInitialDelayMillis: number;
  /** Milliseconds an idle connection stays in the pool: 30 000. */
  readonly idleTimeoutMillis: number;
}

/**
 * Settings for `new pg.Pool(…)` with every wait bounded:
 * - `connectionTimeoutMillis`: a connection attempt to a host that does not answer, or a full pool;
 * - `query_timeout`: a statement on a connection that went silent (the connection is destroyed,
 *   not returned to the pool); `statement_timeout`: the same bound, enforced by the server;
 * - `keepAlive` after 10 s idle: the kernel finds a dead peer of an idle connection (the
 *   `LISTEN` connection's included) instead of keeping it for the OS default of hours;
 * - `idleTimeoutMillis` 30 s: idle connections are renewed now and then.
 * @example
 * ```ts
 * const pool = new pg.Pool(poolSettings(process.env.DATABASE_URL));
 * pool.on('error', () => {}); // a connection cut while idle: the pool drops it
 * ```
 */
export function poolSettings(connectionString: string, options: PoolSettingsOptions = {}): PoolSettings {
  rejectUnknownOptions('poolSettings', options, POOL_SETTINGS_OPTION_NAMES);
  if (typeof connectionString !== 'string' || connectionString === '')
    throw new TypeError(
      `poolSettings: connectionString must be a postgres:// URL (such as process.env.DATABASE_URL), got ${describeValue(connectionString)}`,
    );
  const statementTimeout = checkStatementTimeout(options.statementTimeout ?? DEFAULT_STATEMENT_TIMEOUT, 'poolSettings');
  const connectTimeout = numberOption('poolSettings', 'connectTimeout', options.connectTimeout, 2000, {
    min: 10,
    max: 600_000,
    integer: true,
    unit: 'milliseconds',
  });
  const max = numberOption('poolSettings', 'max', options.max, 10, { min: 1, max: 10_000, integer: true });
  return {
    connectionString,
    max,
    connectionTimeoutMillis: connectTimeout,
    query_timeout: statementTimeout,
    statement_timeout: statementTimeout,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    idleTimeoutMillis: 30_000,
  };
}
