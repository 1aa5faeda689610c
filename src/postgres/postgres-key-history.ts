/**
 * Key history shared through PostgreSQL: every attached verifier's `keyHistory()` is merged into
 * one table now and then, and the merged rows are taken back into each verifier
 * (`mergeKeyHistory`). So all instances share when a key was first seen and first used, a restart
 * keeps them, and a breach one instance reported is not reported again by another. All of it runs
 * beside verification, never in it: a database that is down delays the sharing, nothing else.
 */
import type { KeyHistoryEntry, Verifier } from '../index.js';
import { readKeyHistory, writeKeyHistory } from './key-history-table.js';
import { type SqlClient, checkClient, checkStatementTimeout } from './sql-client.js';

/** What the key history calls on a verifier. */
export type KeyHistoryVerifier = Pick<Verifier, 'keyHistory' | 'mergeKeyHistory'>;

/** Options of {@link postgresKeyHistory}. */
export interface PostgresKeyHistoryOptions {
  /**
   * Milliseconds between flushes (each verifier's history written, the merged table read back).
   * A breach found by one instance may be reported again by another within this time. 100 to
   * 3 600 000.
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
   * database that is down or rows a verifier refuses; the flushes go on at every `flushInterval`.
   * Must not throw.
   * @default one line to console.error
   */
  readonly onError?: (error: unknown) => void;
  /**
   * Called once when a flush succeeds again after a stall reported to `onError`.
   * @default one line to console.error when `onError` is not given either
   */
  readonly onRecovered?: () => void;
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

function checkFunction(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') throw new TypeError(`${OWNER}: ${name} must be a function`);
}

function checkFlushInterval(value: unknown): number {
  if (value === undefined) return 10_000;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 100 || value > 3_600_000) {
    throw new TypeError(`${OWNER}: flushInterval must be a whole number of milliseconds from 100 to 3600000, got ${String(value)}`);
  }
  return value;
}

function checkVerifier(verifier: unknown): KeyHistoryVerifier {
  const candidate = verifier as Partial<KeyHistoryVerifier> | null;
  if (typeof candidate?.keyHistory !== 'function' || typeof candidate.mergeKeyHistory !== 'function') {
    throw new TypeError('attach: verifier must be a Verifier (createVerifier())');
  }
  return candidate as KeyHistoryVerifier;
}

class SharedKeyHistory implements PostgresKeyHistory {
  readonly #db: SqlClient;
  readonly #timeout: number;
  readonly #onError: (error: unknown) => void;
  readonly #onRecovered: () => void;
  readonly #attached = new Set<KeyHistoryVerifier>();
  readonly #timer: ReturnType<typeof setInterval>;
  /** The table as last read. */
  #rows: readonly KeyHistoryEntry[];
  #flushing: Promise<void> | null = null;
  #again: Promise<void> | null = null;
  #stalled = false;
  #closed = false;

  constructor(db: SqlClient, rows: readonly KeyHistoryEntry[], timeout: number, flushInterval: number, options: PostgresKeyHistoryOptions) {
    this.#db = db;
    this.#rows = rows;
    this.#timeout = timeout;
    this.#onError =
      options.onError ?? ((error) => console.error(`${LOG_PREFIX} ${error instanceof Error ? error.message : String(error)} (retrying)`));
    this.#onRecovered =
      options.onRecovered ??
      (options.onError === undefined ? () => console.error(`${LOG_PREFIX} the database answers again`) : () => undefined);
    this.#timer = setInterval(() => void this.#background(), flushInterval);
    this.#timer.unref?.();
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

  /**
   * One flush at a time; calls made while one runs share one flush after it (so each sees the
   * history as it is when called).
   */
  flush(): Promise<void> {
    if (this.#flushing === null) {
      this.#flushing = this.#writeAndRead().finally(() => {
        this.#flushing = null;
      });
      return this.#flushing;
    }
    if (this.#again === null) {
      this.#again = this.#flushing
        .catch(() => undefined)
        .then(() => {
          this.#again = null;
          return this.flush();
        });
    }
    return this.#again;
  }

  async #writeAndRead(): Promise<void> {
    const verifiers = [...this.#attached];
    if (verifiers.length === 0) return;
    // One statement per verifier: one INSERT … ON CONFLICT may not touch a row twice.
    for (const verifier of verifiers) await writeKeyHistory(this.#db, verifier.keyHistory(), this.#timeout);
    this.#rows = await readKeyHistory(this.#db, { statementTimeout: this.#timeout });
    for (const verifier of this.#attached) verifier.mergeKeyHistory(this.#rows);
  }

  async #background(): Promise<void> {
    try {
      await this.flush();
    } catch (error) {
      // A stall is reported once; the next interval tries again.
      if (!this.#stalled) this.#onError(error);
      this.#stalled = true;
      return;
    }
    if (this.#stalled) {
      this.#stalled = false;
      this.#onRecovered();
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#background();
    this.#attached.clear();
  }
}

/**
 * Starts sharing key histories through `db`: reads the table (so that a verifier attached next
 * starts from it), then flushes every `flushInterval`. Rejects when that first read fails;
 * afterwards, a stall goes to `onError` once (and its end to `onRecovered`) and the next flush
 * tries again. Verification never waits on it.
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
  checkClient(db, OWNER);
  const flushInterval = checkFlushInterval(options.flushInterval);
  const timeout = checkStatementTimeout(options.statementTimeout, OWNER);
  checkFunction('onError', options.onError);
  checkFunction('onRecovered', options.onRecovered);
  const rows = await readKeyHistory(db, { statementTimeout: timeout });
  return new SharedKeyHistory(db, rows, timeout, flushInterval, options);
}
