/**
 * Cluster-wide operator controls: `revokeKey`, `suspendIssuer`, `resumeIssuer` and `refresh`
 * recorded in PostgreSQL and applied, through each verifier's own methods, by every instance
 * attached. Notified instances re-read the table at once; all re-read it every `pollInterval`
 * and after their listening connection comes back. Verification never waits on the database.
 *
 * @module paygate-auth/postgres
 */
import type { Verifier } from '../core/verifier.js';
import {
  type ControlRecord,
  type ControlState,
  foldControls,
  readControlRecords,
  recordControl,
} from './control-log.js';
import { type ListenOption, type Listening, type NotificationSource, isInProcessListener, listenInProcess, listenOn, notificationSource } from './notification-connection.js';
import { type SqlClient, checkClient } from './sql-client.js';

/** What the controls call on a verifier: its public operator methods and its registry. */
export type ControlledVerifier = Pick<Verifier, 'revokeKey' | 'suspendIssuer' | 'resumeIssuer' | 'refresh' | 'registry'>;

/** Options of {@link postgresControls}. */
export interface PostgresControlsOptions {
  /**
   * Where the dedicated `LISTEN` connection comes from: a function opening a new connected
   * `pg.Client` each call (called again after a drop); a `pg.Pool` (one connection checked out);
   * one connected `pg.Client` (ended by `close()`; after a drop, polling only); or `false` to poll only.
   * @default a connection checked out of `db` when it is a `pg.Pool` (kept out of it while
   * listening); PGlite's own `listen()`; otherwise polling only
   */
  readonly listen?: ListenOption;
  /**
   * Milliseconds between re-reads of the table: the longest a missed notification delays an
   * action. 100 to 600 000.
   * @default 5000
   */
  readonly pollInterval?: number;
  /**
   * Milliseconds before listening again after the connection dropped; doubled at each failure, up
   * to `pollInterval`. 10 to 60 000.
   * @default 250
   */
  readonly reconnectDelay?: number;
  /**
   * Receives failures of the background work (a re-read, a reconnection, a key refresh). Must not throw.
   * @default one line to console.error when the database becomes unreachable, and one when it is back
   */
  readonly onError?: (error: unknown) => void;
}

/** Controls shared by every instance on one database. */
export interface PostgresControls {
  /**
   * Applies the current state to `verifier` now (revoked keys, suspended issuers), and every
   * change after. Actions on issuers `verifier` does not register are left out.
   * @returns a function that detaches it (nothing applied is undone).
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
  /** Re-reads the table and applies it now. */
  reload(): Promise<void>;
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
  readonly refreshes: Set<number>;
}

const OWNER = 'postgresControls';

function checkMs(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`${OWNER}: ${name} must be a whole number of milliseconds from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

function checkVerifier(verifier: unknown): ControlledVerifier {
  const candidate = verifier as Partial<ControlledVerifier> | null;
  const methods = ['revokeKey', 'suspendIssuer', 'resumeIssuer', 'refresh'] as const;
  if (typeof candidate !== 'object' || candidate === null || methods.some((method) => typeof candidate[method] !== 'function') || typeof candidate.registry?.has !== 'function') {
    throw new TypeError('attach: verifier must be a Verifier (createVerifier())');
  }
  return candidate as ControlledVerifier;
}

/** The default `onError`: one line when failures start, one when they stop. */
function quietReporter(): { report: (error: unknown) => void; recovered: () => void } {
  let failing = false;
  return {
    report: (error) => {
      if (failing) return;
      failing = true;
      console.error(`paygate-auth/postgres: operator controls: ${error instanceof Error ? error.message : String(error)} (retrying)`);
    },
    recovered: () => {
      if (!failing) return;
      failing = false;
      console.error('paygate-auth/postgres: operator controls: the database is reachable again');
    },
  };
}

class Controls implements PostgresControls {
  readonly #db: SqlClient;
  readonly #source: NotificationSource | undefined;
  readonly #inProcess: boolean;
  readonly #pollInterval: number;
  readonly #reconnectDelay: number;
  readonly #report: (error: unknown) => void;
  readonly #recovered: () => void;
  readonly #attached = new Set<Applied>();
  #state: ControlState = { revoked: [], suspended: [], refreshes: [] };
  #listening: Listening | null = null;
  #poll: ReturnType<typeof setInterval> | undefined;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #delay: number;
  #closed = false;
  #queued: Promise<void> | null = null;
  #tail: Promise<void> = Promise.resolve();

  constructor(db: SqlClient, options: PostgresControlsOptions) {
    this.#db = db;
    this.#pollInterval = checkMs('pollInterval', options.pollInterval, 5000, 100, 600_000);
    this.#reconnectDelay = checkMs('reconnectDelay', options.reconnectDelay, 250, 10, 60_000);
    this.#delay = this.#reconnectDelay;
    if (options.onError !== undefined && typeof options.onError !== 'function') throw new TypeError(`${OWNER}: onError must be a function`);
    const quiet = quietReporter();
    this.#report = options.onError ?? quiet.report;
    this.#recovered = options.onError === undefined ? quiet.recovered : () => {};
    this.#inProcess = options.listen === undefined && isInProcessListener(db);
    this.#source = notificationSource(options.listen, db);
  }

  get listening(): boolean {
    return this.#listening !== null;
  }

  async start(): Promise<void> {
    await this.#listen();
    try {
      await this.reload();
    } catch (error) {
      await this.close();
      throw error;
    }
    this.#poll = setInterval(() => this.#background(), this.#pollInterval);
    this.#poll.unref?.();
  }

  #background(): void {
    this.reload().then(this.#recovered, this.#report);
  }

  async #listen(): Promise<void> {
    const hooks = { onNotify: () => this.#background(), onDrop: (error: Error | undefined) => this.#dropped(error) };
    if (this.#inProcess) this.#listening = await listenInProcess(this.#db as unknown as Parameters<typeof listenInProcess>[0], hooks);
    else if (this.#source !== undefined) this.#listening = await listenOn(this.#source, hooks);
  }

  #dropped(error: Error | undefined): void {
    this.#listening = null;
    if (this.#closed) return;
    this.#report(error ?? new Error('the LISTEN connection ended'));
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#retry !== undefined) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.#reconnect();
    }, this.#delay);
    this.#retry.unref?.();
    this.#delay = Math.min(this.#delay * 2, this.#pollInterval);
  }

  async #reconnect(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.#listen();
      if (this.#closed) {
        await this.#listening?.stop();
        return;
      }
      this.#delay = this.#reconnectDelay;
      await this.reload();
      this.#recovered();
    } catch (error) {
      this.#report(error);
      if (this.#listening === null) this.#scheduleReconnect();
    }
  }

  /** Re-reads: one read at a time, and calls made while one runs share the next. */
  reload(): Promise<void> {
    if (this.#queued !== null) return this.#queued;
    const run = this.#tail.then(() => {
      this.#queued = null;
      return this.#readAndApply();
    });
    this.#queued = run;
    this.#tail = run.catch(() => undefined);
    return run;
  }

  async #readAndApply(): Promise<void> {
    if (this.#closed) return;
    this.#state = foldControls(await readControlRecords(this.#db));
    for (const applied of this.#attached) this.#apply(applied, false);
  }

  /** Calls one verifier method; a throw or a rejection goes to `onError`, the other actions still apply. */
  #call(action: () => unknown): void {
    try {
      const result = action();
      if (result instanceof Promise) result.catch(this.#report);
    } catch (error) {
      this.#report(error);
    }
  }

  #apply(applied: Applied, initial: boolean): void {
    const { verifier } = applied;
    const known = (issuer: string): boolean => verifier.registry.has(issuer);
    for (const { issuer, kid } of this.#state.revoked) {
      const id = `${issuer}\u0000${kid}`;
      if (applied.revoked.has(id)) continue;
      applied.revoked.add(id);
      if (known(issuer)) this.#call(() => verifier.revokeKey(issuer, kid));
    }
    const suspended = new Set(this.#state.suspended);
    for (const issuer of suspended) {
      if (applied.suspended.has(issuer) || !known(issuer)) continue;
      applied.suspended.add(issuer);
      this.#call(() => verifier.suspendIssuer(issuer));
    }
    for (const issuer of applied.suspended) {
      if (suspended.has(issuer)) continue;
      applied.suspended.delete(issuer);
      this.#call(() => verifier.resumeIssuer(issuer));
    }
    for (const { id, issuer } of this.#state.refreshes) {
      if (applied.refreshes.has(id)) continue;
      applied.refreshes.add(id);
      if (!initial && known(issuer)) this.#call(() => verifier.refresh(issuer));
    }
  }

  attach(verifier: ControlledVerifier): () => void {
    const applied: Applied = { verifier: checkVerifier(verifier), revoked: new Set(), suspended: new Set(), refreshes: new Set() };
    this.#apply(applied, true);
    this.#attached.add(applied);
    return () => {
      this.#attached.delete(applied);
    };
  }

  revokeKey(issuer: string, kid: string): Promise<ControlRecord> {
    return this.#record(recordControl(this.#db, { action: 'revoke_key', issuer, kid }));
  }

  suspendIssuer(issuer: string): Promise<ControlRecord> {
    return this.#record(recordControl(this.#db, { action: 'suspend_issuer', issuer }));
  }

  resumeIssuer(issuer: string): Promise<ControlRecord> {
    return this.#record(recordControl(this.#db, { action: 'resume_issuer', issuer }));
  }

  refresh(issuer: string): Promise<ControlRecord> {
    return this.#record(recordControl(this.#db, { action: 'refresh_keys', issuer }));
  }

  /** Applies a recorded action here at once, without waiting for its notification. */
  async #record(recording: Promise<ControlRecord>): Promise<ControlRecord> {
    const record = await recording;
    await this.reload().catch(this.#report);
    return record;
  }

  state(): ControlState {
    return this.#state;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#poll);
    clearTimeout(this.#retry);
    const listening = this.#listening;
    this.#listening = null;
    await listening?.stop();
    this.#attached.clear();
  }
}

/**
 * Starts operator controls on `db`: listens for changes, loads the current state, and polls.
 * Rejects when the first read (or the first `LISTEN`) fails; afterwards, failures go to `onError`
 * and are retried.
 *
 * @param db A `pg.Pool`, a `pg.Client` or PGlite, migrated ({@link migrate}).
 * @example
 * ```ts
 * const controls = await postgresControls(pool);
 * controls.attach(verifier);
 * await controls.revokeKey('https://auth.acme.example', 'acme-2026-05'); // every instance, within a second
 * ```
 */
export async function postgresControls(db: SqlClient, options: PostgresControlsOptions = {}): Promise<PostgresControls> {
  const controls = new Controls(checkClient(db, OWNER), options);
  await controls.start();
  return controls;
}
