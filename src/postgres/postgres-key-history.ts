/**
 * Key history shared through PostgreSQL: at each flush, what changed in every attached verifier's
 * history since the last flush (`keyHistoryChanges`) is merged into one table, the retention is
 * applied, and the rows changed since the last flush (any instance's) are taken back into each
 * verifier (`mergeKeyHistory`). The table is read whole once, at start-up. So all instances share
 * when a key was first seen and first used, a restart keeps them, and a breach one instance
 * reported is not reported again by another, at a cost that grows with what changed, not with the
 * table. All of it runs beside verification, never in it: a database that is down delays the
 * sharing, nothing else.
 */
import type { KeyHistoryEntry, Verifier } from '../index.js';
import {
  functionOption,
  isStorableText,
  methodsOption,
  numberOption,
  quote,
  rejectUnknownOptions,
  optionNames,
} from '../internal/index.js';
import {
  type ChangedKeyHistoryRows,
  type KeyHistoryRows,
  type RefusedKeyRow,
  pruneKeyHistory,
  readChangedKeyHistory,
  readKeyHistoryRows,
  sweepKeyHistory,
  writeKeyHistory,
} from './key-history-table.js';
import { type SqlClient, checkClient, withSession } from './sql-client.js';
import { type TableFollower, poller } from './table-follower.js';
import { shielded } from './hook.js';

/** The members of {@link PostgresKeyHistoryOptions}: any other is refused, naming the nearest. */
const POSTGRES_KEY_HISTORY_OPTION_NAMES = optionNames<PostgresKeyHistoryOptions>({
  flushInterval: true,
  statementTimeout: true,
  onError: true,
  onRecovered: true,
  onEvent: true,
});

/** What the key history calls on a verifier. */
export type KeyHistoryVerifier = Pick<Verifier, 'keyHistoryChanges' | 'mergeKeyHistory' | 'registry'>;

/** What a {@link PostgresKeyHistory} reports besides its stalls. */
export interface KeyHistoryRowRefusedEvent extends RefusedKeyRow {
  /**
   * A row of the table the verifier's rules refuse (written by hand, say): skipped, the others
   * shared. Reported by each instance when it reads the row (at start-up, or once it changed),
   * once per row and reason. Also a key of a verifier's history the table cannot hold (its
   * `kid`, from a JWKS, holds U+0000 or a lone surrogate): not written, reported once.
   */
  readonly type: 'key_history_row_refused';
}

/** Options of {@link postgresKeyHistory}. */
export interface PostgresKeyHistoryOptions {
  /**
   * Milliseconds between flushes (what changed in each verifier's history written, the rows
   * changed since the last flush read back).
   * A breach found by one instance may be reported again by another within this time. 100 to
   * 600 000.
   * @default 10000
   */
  readonly flushInterval?: number | undefined;
  /**
   * Milliseconds each statement may take, the wait for a pooled connection included; past it the
   * connection is destroyed. 10 to 600 000.
   * @default 5000
   */
  readonly statementTimeout?: number | undefined;
  /**
   * Receives each stall of the flushes (the first failure after a success), once, such as a
   * database that is down or rows a verifier refuses; the flush is retried (after 250 ms,
   * doubling up to `flushInterval`). Must not throw (what it throws is ignored).
   * @default one line to console.error
   */
  readonly onError?: ((error: unknown) => void) | undefined;
  /**
   * Called once when a flush succeeds again after a stall reported to `onError`.
   * @default one line to console.error when `onError` is not given either
   */
  readonly onRecovered?: (() => void) | undefined;
  /**
   * Receives each row of the table that is skipped (a {@link KeyHistoryRowRefusedEvent}), once
   * per row and reason. Must not throw (what it throws is ignored).
   * @default one line to console.error
   */
  readonly onEvent?: ((event: KeyHistoryRowRefusedEvent) => void) | undefined;
}

/** The key history of every attached verifier, kept in one table. */
export interface PostgresKeyHistory {
  /**
   * Takes the table as read at start-up into `verifier` now (the rows of the issuers it trusts;
   * attached after the first flush, at the next flush), and shares its history at every flush
   * after.
   * @returns a function that detaches it (its history since the last flush is not written).
   * @throws {ClosedError} after `close()` (`code` `closed`): nothing would share its history.
   */
  attach(verifier: KeyHistoryVerifier): () => void;
  /**
   * Writes what changed in every attached verifier's history now, applies the retention, then
   * reads the rows changed since the last flush back into each of them.
   * @throws the database's error (the background flushes report theirs to `onError` instead).
   * @throws {ClosedError} after `close()` (`code` `closed`), writing nothing.
   */
  flush(): Promise<void>;
  /** Stops flushing, after a last flush (a failure of which goes to `onError`). Called again, it does nothing. */
  close(): Promise<void>;
}

const OWNER = 'postgresKeyHistory';
const LOG_PREFIX = 'paygate-auth/postgres: key history:';

/** Milliseconds between two sweeps of the keys of issuers no attached verifier trusts (a pass over the table). */
const SWEEP_INTERVAL = 3_600_000;

/**
 * Milliseconds the retention's cut-off moves before a flush that withdrew no key runs the
 * retention again: a key withdrawn past it stays in the table at most this much longer.
 */
const PRUNE_STEP = 60_000;

/** Refused rows remembered as reported, at most (the oldest are forgotten, and reported again if read again). */
const REPORTED_KEPT = 10_000;

function checkVerifier(verifier: unknown): KeyHistoryVerifier {
  return methodsOption<KeyHistoryVerifier>(
    'attach',
    'verifier',
    verifier,
    ['keyHistoryChanges', 'mergeKeyHistory'],
    'a Verifier (createVerifier())',
  );
}

/** The entries of the issuers `verifier` trusts: a row of any other issuer costs it no memory. */
function trustedBy(verifier: KeyHistoryVerifier, entries: readonly KeyHistoryEntry[]): KeyHistoryEntry[] {
  const registry = verifier.registry;
  return entries.filter((entry) => registry.get(entry.issuer) !== undefined);
}

/** The flushes run as a table follower that only polls: every `flushInterval`, retried on failure. */
class SharedKeyHistory implements PostgresKeyHistory {
  readonly #db: SqlClient;
  readonly #follower: TableFollower;
  readonly #onError: (error: unknown) => void;
  readonly #attached = new Set<KeyHistoryVerifier>();
  readonly #onEvent: (event: KeyHistoryRowRefusedEvent) => void;
  /** The refused rows reported already: the reason, by row. */
  readonly #reported = new Map<string, string>();
  /** The table as read at start-up, until the first flush; `null` after it. */
  #initial: readonly KeyHistoryEntry[] | null = [];
  /** Verifiers attached after the first flush: the next flush reads the table whole for them. */
  readonly #unread = new Set<KeyHistoryVerifier>();
  /** Each attached verifier's history version written (`keyHistoryChanges(after)`). */
  readonly #written = new Map<KeyHistoryVerifier, number>();
  /** The last change id read; -1 before the start-up read. */
  #through = -1;
  /** When the keys of issuers no verifier trusts were last swept (`Date.now()`). */
  #swept = Number.NEGATIVE_INFINITY;
  /** The retention's cut-off when it last ran (ms, the verifiers' clock); -Infinity before the first flush. */
  #prunedBefore = Number.NEGATIVE_INFINITY;

  constructor(db: SqlClient, options: PostgresKeyHistoryOptions) {
    this.#db = db;
    functionOption(OWNER, 'onEvent', options.onEvent);
    this.#onEvent = shielded(
      options.onEvent ??
        ((event) =>
          console.error(
            `${LOG_PREFIX} row (${quote(event.issuer)}, ${quote(event.kid)}) is skipped: ${event.reason}; the others are shared`,
          )),
    );
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
      work: () => (this.#through < 0 ? this.#readAll() : this.#writeAndRead()),
    }));
  }

  /** Reads the table (rejecting when that fails), then flushes every `flushInterval`. */
  start(): Promise<void> {
    return this.#follower.start();
  }

  attach(verifier: KeyHistoryVerifier): () => void {
    this.#follower.refuseClosed('attach()');
    const attached = checkVerifier(verifier);
    if (this.#initial === null) this.#unread.add(attached);
    else this.#merge(attached, this.#initial);
    this.#attached.add(attached);
    return () => {
      this.#attached.delete(attached);
      this.#unread.delete(attached);
      this.#written.delete(attached);
    };
  }

  #merge(verifier: KeyHistoryVerifier, entries: readonly KeyHistoryEntry[]): void {
    try {
      verifier.mergeKeyHistory(trustedBy(verifier, entries), { stored: true });
    } catch (error) {
      // Rows the verifier refuses (written by hand, say) are reported; the next flush tries again.
      this.#onError(error);
    }
  }

  /** The start-up read: the table whole, once. */
  async #readAll(): Promise<void> {
    const { entries, refused, through } = await readChangedKeyHistory(this.#db, -1, this.#follower.timeout);
    if (this.#follower.closed) return;
    this.#report(entries, refused);
    this.#initial = entries;
    this.#through = through;
  }

  /** One flush at a time; calls made while one runs share one flush after it. */
  flush(): Promise<void> {
    return this.#follower.reload('flush()');
  }

  /**
   * Writes what changed in each attached verifier's history since it was last written, applies
   * the retention when it has work, then reads the rows changed since the last read into every
   * verifier (the table whole for a verifier attached since the last flush). One connection for
   * the whole flush, each statement bounded.
   */
  async #writeAndRead(): Promise<void> {
    const { all, changed } = await withSession(this.#db, this.#follower.timeout, (session) => this.#flushOn(session));
    if (this.#follower.closed) return;
    this.#report(changed.entries, changed.refused);
    this.#through = changed.through;
    this.#initial = null;
    for (const verifier of this.#attached) {
      if (all !== null && this.#unread.delete(verifier)) this.#merge(verifier, all.entries);
      this.#merge(verifier, changed.entries);
    }
  }

  /** The statements of a flush, on `session`: the writes, the retention, the reads. */
  async #flushOn(session: SqlClient): Promise<{ all: KeyHistoryRows | null; changed: ChangedKeyHistoryRows }> {
    const timeout = this.#follower.timeout;
    const written = new Set<string>();
    const withdrawing = new Set<string>();
    let withdrawnBefore = Number.POSITIVE_INFINITY;
    for (const verifier of [...this.#attached]) {
      const changes = verifier.keyHistoryChanges(this.#written.get(verifier) ?? 0);
      // One statement per verifier: one INSERT … ON CONFLICT may not touch a row twice.
      await writeKeyHistory(session, this.#storable(changes.entries), timeout);
      // Detached during the write: nothing more is written for it, and it is not kept.
      if (this.#attached.has(verifier)) this.#written.set(verifier, changes.through);
      for (const entry of changes.entries) {
        written.add(entry.issuer);
        if (entry.withdrawn !== null) withdrawing.add(entry.issuer);
      }
      withdrawnBefore = Math.min(withdrawnBefore, changes.withdrawnBefore);
    }
    if (this.#attached.size > 0) {
      await this.#prune(session, withdrawnBefore, written, withdrawing, timeout);
      await this.#sweep(session, withdrawnBefore, timeout);
    }
    const all = this.#unread.size > 0 ? await readKeyHistoryRows(session, null, timeout) : null;
    return { all, changed: await readChangedKeyHistory(session, this.#through, timeout) };
  }

  /**
   * The retention, when it has work: at the first flush (for every issuer written: rows written
   * by hand, say, or by an older version); after, for the issuers a key was just withdrawn of (only
   * a withdrawal adds a withdrawn key), and once the retention's cut-off has moved by
   * {@link PRUNE_STEP} since it last ran (keys withdrawn past it). A flush that only records uses
   * sends no statement for it.
   */
  async #prune(
    session: SqlClient,
    withdrawnBefore: number,
    written: ReadonlySet<string>,
    withdrawing: ReadonlySet<string>,
    timeout: number,
  ): Promise<void> {
    const first = this.#prunedBefore === Number.NEGATIVE_INFINITY;
    if (!first && withdrawing.size === 0 && withdrawnBefore - this.#prunedBefore < PRUNE_STEP) return;
    await pruneKeyHistory(session, withdrawnBefore, [...(first ? written : withdrawing)], timeout);
    this.#prunedBefore = withdrawnBefore;
  }

  /**
   * At most once per {@link SWEEP_INTERVAL}: deletes the keys of the issuers no attached verifier
   * trusts, unused since `unusedBefore` (the rows of removed issuers, and rows written for none).
   */
  async #sweep(session: SqlClient, unusedBefore: number, timeout: number): Promise<void> {
    const now = Date.now();
    if (now - this.#swept < SWEEP_INTERVAL) return;
    const trusted = new Set<string>();
    for (const verifier of this.#attached) for (const issuer of verifier.registry.issuers) trusted.add(issuer);
    await sweepKeyHistory(session, [...trusted], unusedBefore, timeout);
    this.#swept = now;
  }

  /**
   * The entries the table can hold; each other one (a `kid` a JWKS wrote with `\u0000` or a lone
   * surrogate: PostgreSQL refuses the statement that holds it, so one such key would stop every
   * flush) is left out and reported, once, as a refused row.
   */
  #storable(entries: readonly KeyHistoryEntry[]): readonly KeyHistoryEntry[] {
    if (entries.every((entry) => isStorableText(entry.issuer) && isStorableText(entry.kid))) return entries;
    const kept: KeyHistoryEntry[] = [];
    const refused: RefusedKeyRow[] = [];
    for (const entry of entries) {
      const field = isStorableText(entry.issuer) ? (isStorableText(entry.kid) ? null : 'kid') : 'issuer';
      if (field === null) kept.push(entry);
      else {
        const reason = `not written: its ${field} holds U+0000 or a lone surrogate, which PostgreSQL cannot store; the verifier keeps it, and the other keys are shared`;
        refused.push({ issuer: entry.issuer, kid: entry.kid, reason });
      }
    }
    this.#report([], refused);
    return kept;
  }

  /**
   * Reports each refused row read, once per row and reason; a row read and accepted is forgotten
   * (the map is bounded by {@link REPORTED_KEPT}).
   */
  #report(accepted: readonly KeyHistoryEntry[], refused: readonly RefusedKeyRow[]): void {
    if (this.#reported.size > 0) for (const entry of accepted) this.#reported.delete(JSON.stringify([entry.issuer, entry.kid]));
    for (const row of refused) {
      const key = JSON.stringify([row.issuer, row.kid]);
      if (this.#reported.get(key) === row.reason) continue;
      this.#reported.delete(key);
      this.#reported.set(key, row.reason);
      if (this.#reported.size > REPORTED_KEPT) this.#reported.delete(this.#reported.keys().next().value as string);
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
