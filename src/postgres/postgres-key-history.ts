/**
 * Key history shared through PostgreSQL: every attached verifier's `keyHistory()` is merged into
 * one table now and then, and the merged rows are taken back into each verifier
 * (`mergeKeyHistory`). So all instances share when a key was first seen and first used, a restart
 * keeps them, and a breach one instance reported is not reported again by another. All of it runs
 * beside verification, never in it: a database that is down delays the sharing, nothing else.
 */
import type { KeyHistoryEntry, Verifier } from '../index.js';
import { functionOption, methodsOption, numberOption, quote, rejectUnknownOptions } from '../internal/index.js';
import { type RefusedKeyRow, readKeyHistoryRows, writeKeyHistory } from './key-history-table.js';
import { type SqlClient, checkClient } from './sql-client.js';
import { type TableFollower, poller } from './table-follower.js';

/** The members of {@link PostgresKeyHistoryOptions}: any other is refused, naming the nearest. */
const POSTGRES_KEY_HISTORY_OPTION_NAMES: ReadonlySet<string> = new Set([
  'flushInterval',
  'statementTimeout',
  'onError',
  'onRecovered',
  'onEvent',
]);

/** What the key history calls on a verifier. */
export type KeyHistoryVerifier = Pick<Verifier, 'keyHistory' | 'mergeKeyHistory'>;

/** What a {@link PostgresKeyHistory} reports besides its stalls. */
export interface KeyHistoryRowRefusedEvent extends RefusedKeyRow {
  /**
   * A row of the table the verifier's rules refuse (written by hand, say): skipped, the others
   * shared. Reported once per row and reason by each instance.
   */
  readonly type: 'key_history_row_refused';
}

/** Options of {@link postgresKeyHistory}. */
export interface PostgresKeyHistoryOptions {
  /**
   * Milliseconds between flushes (each verifier's history written, the merged table read back).
   * A breach found by one instance may be reported again by another within this time. 100 to
   * 600 000.
   * @default 10000
   */
  readonly flushInterval?: number;
  /**
   * Milliseconds each statement may take, the wait for a pooled connection included; past it the
   * connection is destroyed. 10 to 600 000.
   * @default 5000
   */
  readonly statementTimeout?: number;
  /**
   * Receives each stall of the flushes (the first failure after a success), once, such as a
   * database that is down or rows a verifier refuses; the flush is retried (after 250 ms,
   * doubling up to `flushInterval`). Must not throw.
   * @default one line to console.error
   */
  readonly onError?: (error: unknown) => void;
  /**
   * Called once when a flush succeeds again after a stall reported to `onError`.
   * @default one line to console.error when `onError` is not given either
   */
  readonly onRecovered?: () => void;
  /**
   * Receives each row of the table that is skipped (a {@link KeyHistoryRowRefusedEvent}), once
   * per row and reason. Must not throw.
   * @default one line to console.error
   */
  readonly onEvent?: (event: KeyHistoryRowRefusedEvent) => void;
}

/** The key history of every attached verifier, kept in one table. */
export interface PostgresKeyHistory {
  /**
   * Takes the history last read from the table into `verifier` now, and shares its history at
   * every flush after.
   * @returns a function that detaches it (its history since the last flush is not written).
   */
  attach(verifier: KeyHistoryVerifier): () => void;
  /**
   * Writes every attached verifier's history now, then reads the table back into each of them.
   * @throws the database's error (the background flushes report theirs to `onError` instead).
   */
  flush(): Promise<void>;
  /** Stops flushing, after a last flush (a failure of which goes to `onError`). */
  close(): Promise<void>;
}

const OWNER = 'postgresKeyHistory';
const LOG_PREFIX = 'paygate-auth/postgres: key history:';

function checkVerifier(verifier: unknown): KeyHistoryVerifier {
  return methodsOption<KeyHistoryVerifier>(
    'attach',
    'verifier',
    verifier,
    ['keyHistory', 'mergeKeyHistory'],
    'a Verifier (createVerifier())',
  );
}

/** The flushes run as a table follower that only polls: every `flushInterval`, retried on failure. */
class SharedKeyHistory implements PostgresKeyHistory {
  readonly #db: SqlClient;
  readonly #follower: TableFollower;
  readonly #onError: (error: unknown) => void;
  readonly #attached = new Set<KeyHistoryVerifier>();
  readonly #onEvent: (event: KeyHistoryRowRefusedEvent) => void;
  /** The refused rows reported already (row and reason). */
  readonly #reported = new Set<string>();
  /** The table as last read. */
  #rows: readonly KeyHistoryEntry[] = [];

  constructor(db: SqlClient, options: PostgresKeyHistoryOptions) {
    this.#db = db;
    functionOption(OWNER, 'onEvent', options.onEvent);
    this.#onEvent =
      options.onEvent ??
      ((event) =>
        console.error(
          `${LOG_PREFIX} row (${quote(event.issuer)}, ${quote(event.kid)}) is skipped: ${event.reason}; the others are shared`,
        ));
    ({ follower: this.#follower, onError: this.#onError } = poller(db, {
      owner: OWNER,
      logPrefix: LOG_PREFIX,
      interval: numberOption(OWNER, 'flushInterval', options.flushInterval, 10_000, {
        min: 100,
        max: 600_000,
        integer: true,
        unit: 'milliseconds',
      }),
      statementTimeout: options.statementTimeout,
      onError: options.onError,
      onRecovered: options.onRecovered,
      work: () => this.#writeAndRead(),
    }));
  }

  /** Reads the table (rejecting when that fails), then flushes every `flushInterval`. */
  start(): Promise<void> {
    return this.#follower.start();
  }

  attach(verifier: KeyHistoryVerifier): () => void {
    const attached = checkVerifier(verifier);
    try {
      attached.mergeKeyHistory(this.#rows);
    } catch (error) {
      // Rows the verifier refuses (written by hand, say) are reported; the next flush tries again.
      this.#onError(error);
    }
    this.#attached.add(attached);
    return () => {
      this.#attached.delete(attached);
    };
  }

  /** One flush at a time; calls made while one runs share one flush after it. */
  flush(): Promise<void> {
    return this.#follower.reload();
  }

  /** Writes each attached verifier's history, then reads the table back into all of them. */
  async #writeAndRead(): Promise<void> {
    const timeout = this.#follower.timeout;
    // One statement per verifier: one INSERT … ON CONFLICT may not touch a row twice.
    for (const verifier of [...this.#attached]) await writeKeyHistory(this.#db, verifier.keyHistory(), timeout);
    const { entries: rows, refused } = await readKeyHistoryRows(this.#db, null, timeout);
    if (this.#follower.closed) return;
    this.#report(refused);
    this.#rows = rows;
    for (const verifier of this.#attached) verifier.mergeKeyHistory(rows);
  }

  /** Reports each refused row once (the set is bounded: rows are few, and a fixed row's key is forgotten). */
  #report(refused: readonly RefusedKeyRow[]): void {
    const now = new Set(refused.map((row) => JSON.stringify([row.issuer, row.kid, row.reason])));
    for (const key of this.#reported) if (!now.has(key)) this.#reported.delete(key);
    for (const row of refused) {
      const key = JSON.stringify([row.issuer, row.kid, row.reason]);
      if (this.#reported.has(key)) continue;
      this.#reported.add(key);
      this.#onEvent({ type: 'key_history_row_refused', ...row });
    }
  }

  async close(): Promise<void> {
    if (this.#follower.closed) return;
    await this.flush().catch((error: unknown) => this.#follower.stall(error));
    await this.#follower.close();
    this.#attached.clear();
  }
}

/**
 * Starts sharing key histories through `db`: reads the table (so that a verifier attached next
 * starts from it), then flushes every `flushInterval`. Rejects when that first read fails;
 * afterwards, a stall goes to `onError` once (and its end to `onRecovered`) and the flush is
 * retried (after 250 ms, doubling up to `flushInterval`). Verification never waits on it.
 *
 * @param db A `pg.Pool` (see `poolSettings`), a `pg.Client` or PGlite, migrated
 * (`migrate(db, { only: 'keys' })` is enough).
 * @throws {TypeError} for a bad option.
 * @example
 * ```ts
 * const keys = await postgresKeyHistory(pool);
 * keys.attach(verifier);
 * // at shutdown: await keys.close(); (a last flush)
 * ```
 */
export async function postgresKeyHistory(db: SqlClient, options: PostgresKeyHistoryOptions = {}): Promise<PostgresKeyHistory> {
  rejectUnknownOptions('postgresKeyHistory', options, POSTGRES_KEY_HISTORY_OPTION_NAMES);
  const shared = new SharedKeyHistory(checkClient(db, OWNER), options);
  await shared.start();
  return shared;
}
