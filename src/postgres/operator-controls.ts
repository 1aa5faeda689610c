/**
 * Cluster-wide operator controls: `revokeKey`, `suspendIssuer`, `resumeIssuer` and `refresh`
 * recorded in PostgreSQL and applied, through each verifier's own methods, by every instance
 * attached. Notified instances read the rows after the last one they applied; all read every
 * `pollInterval` and after their listening connection comes back. Every read and every heartbeat
 * of the listening connection is bounded by `statementTimeout`. Verification never waits on the
 * database.
 */
import {
  capHint,
  findNearMiss,
  functionOption,
  methodsOption,
  numberOption,
  optionNames,
  quote,
  rejectUnknownOptions,
} from '../internal/index.js';
import type { Verifier } from '../index.js';
import {
  type ControlAction,
  type ControlRecord,
  type ControlState,
  NO_CONTROLS,
  compactControls,
  foldControls,
  readControlsAfter,
  recordControl,
} from './control-log.js';
import { CONTROLS_CHANNEL } from './schema.js';
import { type SqlClient, checkClient } from './sql-client.js';
import { notify, oneLine, shielded } from './hook.js';
import { type FollowOptions, TableFollower } from './table-follower.js';

/** The members of {@link PostgresControlsOptions}: any other is refused, naming the nearest. */
const POSTGRES_CONTROLS_OPTION_NAMES = optionNames<PostgresControlsOptions>({
  compactInterval: true,
  onError: true,
  onRecovered: true,
  listen: true,
  pollInterval: true,
  reconnectDelay: true,
  statementTimeout: true,
  heartbeatInterval: true,
  onEvent: true,
});

/** What the controls call on a verifier: its public operator methods and its registry. */
export type ControlledVerifier = Pick<Verifier, 'revokeKey' | 'suspendIssuer' | 'resumeIssuer' | 'refresh' | 'registry'>;

/** Options of {@link postgresControls}. */
export interface PostgresControlsOptions extends FollowOptions {
  /**
   * Milliseconds between compactions of the table by this instance (see `compact()`); `0` never.
   * 0, or 1000 to 86 400 000.
   * @default 3600000
   */
  readonly compactInterval?: number | undefined;
  /**
   * Receives each stall of the background work (the first failed read, heartbeat or reconnection
   * after a success), once, and each failure of a verifier method. Must not throw (what it throws is ignored).
   * @default one line to console.error
   */
  readonly onError?: ((error: unknown) => void) | undefined;
  /**
   * Called once when the background work succeeds again after a stall reported to `onError`.
   * @default one line to console.error when `onError` is not given either
   */
  readonly onRecovered?: (() => void) | undefined;
  /**
   * Receives each control left out because its issuer is a near miss of one the verifier
   * registers (a {@link ControlRowIgnoredEvent}: letter case, a trailing slash, … written by hand
   * in `psql`, say), once per action, issuer and `kid`. Must not throw (what it throws is ignored).
   * @default one line to console.error
   */
  readonly onEvent?: ((event: ControlRowIgnoredEvent) => void) | undefined;
}

/**
 * A control in force (a revocation, a suspension) or a key refresh just read, left out for a
 * verifier because its issuer is not registered there but nearly names one that is: the action
 * its writer meant does not happen. It is still applied if that exact issuer is registered later.
 */
export interface ControlRowIgnoredEvent {
  readonly type: 'control_row_ignored';
  readonly action: ControlAction;
  /** The issuer as stored: hostile text (a row written by hand). */
  readonly issuer: string;
  /** The key of `revoke_key`, as stored; `null` for the other actions. */
  readonly kid: string | null;
  readonly rule: 'near_miss_issuer';
  /** What is wrong, naming the registered issuer and how they differ, on one line (cut and escaped). */
  readonly reason: string;
}

/** Controls shared by every instance on one database. */
export interface PostgresControls {
  /**
   * Applies the current state to `verifier` now (revoked keys, suspended issuers), and every
   * change after. Actions on issuers `verifier` does not register are left out until it does (a
   * registry that changes while running): then the revocations and suspension in force are
   * applied at the next read, within `pollInterval`.
   * @returns a function that detaches it (nothing applied is undone).
   * @throws {ClosedError} after `close()` (`code` `closed`): nothing would be applied to it.
   */
  attach(verifier: ControlledVerifier): () => void;
  /** Records and broadcasts the revocation of `kid` of `issuer`. */
  revokeKey(issuer: string, kid: string): Promise<ControlRecord>;
  /** Records and broadcasts the suspension of `issuer`. */
  suspendIssuer(issuer: string): Promise<ControlRecord>;
  /** Records and broadcasts the end of `issuer`'s suspension. */
  resumeIssuer(issuer: string): Promise<ControlRecord>;
  /** Records and broadcasts a reload of `issuer`'s keys, done by every attached verifier. */
  refresh(issuer: string): Promise<ControlRecord>;
  /** Reads the actions not yet applied, and applies them, now. @throws {ClosedError} after `close()` (`code` `closed`). */
  reload(): Promise<void>;
  /**
   * Calls `listener` after each read that applied actions (`state().through` moved): what a
   * heartbeat reports. It must not throw (what it throws is ignored).
   * @returns a function that stops calling it.
   */
  onApplied(listener: () => void): () => void;
  /**
   * Folds the table into its current state now (one row per revoked key and per suspended
   * issuer); also run every `compactInterval`.
   */
  compact(): Promise<{ deleted: number; kept: number }>;
  /** The state last read. */
  state(): ControlState;
  /** `true` while the `LISTEN` connection is up. */
  readonly listening: boolean;
  /** Stops listening and polling. */
  close(): Promise<void>;
}

/** What one attached verifier has had applied. */
interface Applied {
  readonly verifier: ControlledVerifier;
  readonly revoked: Set<string>;
  readonly suspended: Set<string>;
  /** The controls left out here whose issuer was looked up among the near misses. */
  readonly looked: Set<string>;
}

/** Most actions one read takes; more are read by the next. */
const READ_BATCH = 1000;

const OWNER = 'postgresControls';

function checkVerifier(verifier: unknown): ControlledVerifier {
  const checked = methodsOption<ControlledVerifier>(
    'attach',
    'verifier',
    verifier,
    ['revokeKey', 'suspendIssuer', 'resumeIssuer', 'refresh'],
    'a Verifier (createVerifier())',
  );
  methodsOption('attach', 'verifier.registry', checked.registry, ['has'], 'an IssuerRegistry');
  return checked;
}

const LOG_PREFIX = 'paygate-auth/postgres: operator controls:';

/**
 * The action id a notification's payload names (`recordControl` sends `{"id": …, "action": …,
 * "issuer": …}`), else `undefined`. A payload is at most 8000 bytes (PostgreSQL's bound).
 */
function notifiedControl(payload: string | undefined): number | undefined {
  if (payload === undefined || !payload.startsWith('{')) return undefined;
  try {
    const id = (JSON.parse(payload) as { id?: unknown } | null)?.id;
    return typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? id : undefined;
  } catch {
    return undefined;
  }
}

/** {@link Controls}'s own `#applyHeld`, for {@link applyHeldControls}. */
let applyHeld: (controls: Controls) => void;

class Controls implements PostgresControls {
  static {
    applyHeld = (controls) => controls.#applyHeld();
  }

  readonly #db: SqlClient;
  readonly #follower: TableFollower;
  readonly #timeout: number;
  readonly #compactInterval: number;
  readonly #onError: (error: unknown) => void;
  readonly #onEvent: (event: ControlRowIgnoredEvent) => void;
  /** The controls reported to `onEvent`: each once. */
  readonly #reported = new Set<string>();
  readonly #attached = new Set<Applied>();
  readonly #appliedListeners = new Set<() => void>();
  #state: ControlState = NO_CONTROLS;

  constructor(db: SqlClient, options: PostgresControlsOptions) {
    this.#db = db;
    this.#compactInterval = numberOption(OWNER, 'compactInterval', options.compactInterval, 3_600_000, {
      min: 1000,
      max: 86_400_000,
      integer: true,
      unit: 'milliseconds',
      orZero: true,
    });
    functionOption(OWNER, 'onError', options.onError);
    functionOption(OWNER, 'onRecovered', options.onRecovered);
    functionOption(OWNER, 'onEvent', options.onEvent);
    this.#onEvent = shielded(
      options.onEvent ??
        ((event) => console.error(`${LOG_PREFIX} control ${event.action} of issuer ${quote(event.issuer)} is left out: ${event.reason}`)),
    );
    this.#onError = shielded(options.onError ?? ((error) => console.error(`${LOG_PREFIX} ${oneLine(error)} (retrying)`)));
    const onRecovered = shielded(
      options.onRecovered ??
        (options.onError === undefined ? () => console.error(`${LOG_PREFIX} the database answers again`) : () => undefined),
    );
    this.#follower = new TableFollower(db, options, {
      owner: OWNER,
      channel: CONTROLS_CHANNEL,
      read: () => this.#readAndApply(),
      // Only an action past the one applied is worth a read.
      wants: (payload) => {
        const id = notifiedControl(payload);
        return id !== undefined && id > this.#state.through;
      },
      onStall: this.#onError,
      onRecovered,
    });
    this.#timeout = this.#follower.timeout;
  }

  get listening(): boolean {
    return this.#follower.listening;
  }

  async start(): Promise<void> {
    await this.#follower.start();
    if (this.#compactInterval > 0) {
      this.#follower.every(this.#compactInterval, () => void this.compact().catch((error: unknown) => this.#follower.stall(error)));
    }
  }

  /**
   * Reads and applies the actions not yet applied. One read runs at a time, each bounded by
   * `statementTimeout`; calls made while one runs share one read after it.
   */
  reload(): Promise<void> {
    return this.#follower.reload();
  }

  async #readAndApply(): Promise<void> {
    const before = this.#state;
    let state = before;
    let fresh: ControlRecord[] = [];
    /** The compaction mark under which the table is being read from its start. */
    let mark: number | undefined;
    for (;;) {
      const read = await readControlsAfter(this.#db, state.through, READ_BATCH, this.#timeout);
      if (state.through === 0) mark = read.compactedThrough;
      else if (read.compactedThrough > Math.max(state.through, mark ?? 0)) {
        // Rows this instance had not read may have been folded away: read the (small) table whole.
        // Only a compaction newer than the one it reads under does so, or a compacted table
        // keeping more than one batch would be read from its start for ever.
        state = NO_CONTROLS;
        fresh = [];
        continue;
      }
      state = foldControls(read.records, state);
      fresh.push(...read.records.filter((record) => record.id > before.through));
      if (read.records.length < READ_BATCH) break;
    }
    if (this.#follower.closed) return;
    this.#state = state;
    for (const applied of this.#attached) this.#apply(applied, fresh);
    if (state.through !== before.through) for (const listener of this.#appliedListeners) notify(listener);
  }

  /** Brings every attached verifier to the state held, without reading: for issuers just registered. */
  #applyHeld(): void {
    if (this.#follower.closed) return;
    for (const applied of this.#attached) this.#apply(applied, []);
  }

  onApplied(listener: () => void): () => void {
    functionOption(OWNER, 'onApplied', listener);
    this.#appliedListeners.add(listener);
    return () => {
      this.#appliedListeners.delete(listener);
    };
  }

  /** Calls one verifier method; a throw or a rejection goes to `onError`, the other actions still apply. */
  #call(action: () => unknown): void {
    try {
      const result = action();
      if (result instanceof Promise) result.catch(this.#onError);
    } catch (error) {
      this.#onError(error);
    }
  }

  /** Brings `applied` to the current state; runs the key refreshes among `fresh` (actions just read). */
  #apply(applied: Applied, fresh: readonly ControlRecord[]): void {
    const { verifier } = applied;
    const known = (issuer: string): boolean => verifier.registry.has(issuer);
    for (const { issuer, kid } of this.#state.revoked) {
      const id = `${issuer}\u0000${kid}`;
      // An issuer not registered here yet (a live registry may add it) gets it at a later read.
      if (applied.revoked.has(id)) continue;
      if (!known(issuer)) {
        this.#lookForNearMiss(applied, 'revoke_key', issuer, kid);
        continue;
      }
      applied.revoked.add(id);
      this.#call(() => verifier.revokeKey(issuer, kid));
    }
    const suspended = new Set(this.#state.suspended);
    for (const issuer of suspended) {
      if (applied.suspended.has(issuer)) continue;
      if (!known(issuer)) {
        this.#lookForNearMiss(applied, 'suspend_issuer', issuer, null);
        continue;
      }
      applied.suspended.add(issuer);
      this.#call(() => verifier.suspendIssuer(issuer));
    }
    for (const issuer of applied.suspended) {
      if (suspended.has(issuer)) continue;
      applied.suspended.delete(issuer);
      this.#call(() => verifier.resumeIssuer(issuer));
    }
    const refreshed = new Set<string>();
    for (const { action, issuer } of fresh) {
      if (action !== 'refresh_keys' || refreshed.has(issuer)) continue;
      if (!known(issuer)) {
        this.#lookForNearMiss(applied, action, issuer, null);
        continue;
      }
      refreshed.add(issuer);
      this.#call(() => verifier.refresh(issuer));
    }
  }

  /**
   * Reports the control left out for `applied`'s verifier when its issuer nearly names one the
   * verifier registers: once per control, looked up once per verifier.
   */
  #lookForNearMiss(applied: Applied, action: ControlAction, issuer: string, kid: string | null): void {
    const key = `${action}\u0000${issuer}\u0000${kid ?? ''}`;
    if (applied.looked.has(key)) return;
    applied.looked.add(key);
    const registered: unknown = (applied.verifier.registry as { issuers?: unknown }).issuers;
    if (this.#reported.has(key) || !Array.isArray(registered)) return;
    const near = findNearMiss(issuer, registered as readonly string[]);
    if (near === undefined) return;
    this.#reported.add(key);
    const reason = capHint(
      `issuer ${quote(issuer)} is not registered but nearly names registered issuer ${quote(near.candidate)} (${near.difference}): record the action for the registered issuer`,
    );
    this.#onEvent({ type: 'control_row_ignored', action, issuer, kid, rule: 'near_miss_issuer', reason });
  }

  attach(verifier: ControlledVerifier): () => void {
    this.#follower.refuseClosed('attach()');
    const applied: Applied = { verifier: checkVerifier(verifier), revoked: new Set(), suspended: new Set(), looked: new Set() };
    this.#apply(applied, []);
    this.#attached.add(applied);
    return () => {
      this.#attached.delete(applied);
    };
  }

  revokeKey(issuer: string, kid: string): Promise<ControlRecord> {
    return this.#record(recordControl(this.#db, { action: 'revoke_key', issuer, kid }, this.#timeout));
  }

  suspendIssuer(issuer: string): Promise<ControlRecord> {
    return this.#record(recordControl(this.#db, { action: 'suspend_issuer', issuer }, this.#timeout));
  }

  resumeIssuer(issuer: string): Promise<ControlRecord> {
    return this.#record(recordControl(this.#db, { action: 'resume_issuer', issuer }, this.#timeout));
  }

  refresh(issuer: string): Promise<ControlRecord> {
    return this.#record(recordControl(this.#db, { action: 'refresh_keys', issuer }, this.#timeout));
  }

  /** Applies a recorded action here at once, without waiting for its notification. */
  async #record(recording: Promise<ControlRecord>): Promise<ControlRecord> {
    const record = await recording;
    await this.reload().catch((error: unknown) => this.#follower.stall(error));
    return record;
  }

  async compact(): Promise<{ deleted: number; kept: number }> {
    const { deleted, kept } = await compactControls(this.#db, this.#timeout);
    return { deleted, kept };
  }

  state(): ControlState {
    return this.#state;
  }

  async close(): Promise<void> {
    await this.#follower.close();
    this.#attached.clear();
  }
}

/**
 * For `postgresFollowers`, as its registry applies a change: brings the controls `controls` holds
 * (what `postgresControls()` resolved) to every verifier attached to it at once, without a read,
 * so an issuer just registered gets its suspension or revocation in the same turn as its entry.
 */
export function applyHeldControls(controls: PostgresControls): void {
  if (controls instanceof Controls) applyHeld(controls);
}

/**
 * Starts operator controls on `db`: listens for changes, loads the current state, polls, and
 * compacts the table now and then. Rejects when the first read (or the first `LISTEN`) fails;
 * afterwards, a stall goes to `onError` once (and its end to `onRecovered`) and is retried.
 *
 * @param db A `pg.Pool` (see `poolSettings`), a `pg.Client` or PGlite, migrated
 * (`migrate(db, { only: 'controls' })` is enough).
 * @example
 * ```ts
 * const controls = await postgresControls(pool);
 * controls.attach(verifier);
 * await controls.revokeKey('https://auth.acme.example', 'acme-2026-05'); // every instance, within a second
 * ```
 */
export async function postgresControls(db: SqlClient, options: PostgresControlsOptions = {}): Promise<PostgresControls> {
  rejectUnknownOptions('postgresControls', options, POSTGRES_CONTROLS_OPTION_NAMES);
  const controls = new Controls(checkClient(db, OWNER), options);
  await controls.start();
  return controls;
}
