/**
 * The issuer registry kept in PostgreSQL, followed by every instance. At start-up an instance
 * reads the table once; then, on each notification, each poll and each reconnection, it reads in
 * one statement the id of the last change and the current rows of the issuers changed since the
 * one it applied (found through the audit, the change log), so a change costs a read of the rows
 * it changed, not of the table. It judges those rows (and those they collide with, or no longer
 * do), and hands the registry to each attached verifier (`setRegistry`). What an instance holds
 * is the table's content as of one change id, never a replay of the audit: a running instance and
 * one started now hold the same registry, and each load reports its digest. While the database
 * is unreachable the last registry loaded stays in force; verification never waits on the
 * database.
 */
import type { IssuerRegistry, RegistryChange, Verifier } from '../index.js';
import { checkAllowedHosts, describeHolder, functionOption, quote, rejectUnknownOptions, optionNames } from '../internal/index.js';
import { readRegistryChanges, readRegistrySnapshot } from './issuer-table.js';
import { RegistryDigest } from './registry-digest.js';
import { type AppliedRows, type RefusedRow, type RefusedRowRule, RegistryRows } from './registry-rows.js';
import { REGISTRY_CHANNEL } from './schema.js';
import { type SqlClient, checkClient } from './sql-client.js';
import { notify, oneLine, shielded } from './hook.js';
import { type FollowOptions, TableFollower, notifiedId } from './table-follower.js';

/** The members of {@link PostgresRegistryOptions}: any other is refused, naming the nearest. */
const POSTGRES_REGISTRY_OPTION_NAMES = optionNames<PostgresRegistryOptions>({
  onEvent: true,
  jwksAllowedHosts: true,
  listen: true,
  pollInterval: true,
  reconnectDelay: true,
  statementTimeout: true,
  heartbeatInterval: true,
});

/** What a {@link PostgresRegistry} reports. */
export type RegistryEvent =
  | {
      /** A registry was read with changes past the last one applied, and applied. */
      readonly type: 'registry_loaded';
      /** How many issuers it registers. */
      readonly issuers: number;
      /** What changed from the registry held before (all `added` at the first load). */
      readonly change: RegistryChange;
      /** The id of the last change it includes. */
      readonly through: number;
      /**
       * SHA-256 (hex) of the entries applied: the same on every instance holding the same
       * registry (see `registryDigest`).
       */
      readonly digest: string;
      /** How many rows are left out now (those this load read reported as `registry_row_refused` first). */
      readonly refused: number;
    }
  | {
      /**
       * A row of the table the registry refuses, left out (reported at start-up, and at each load
       * that reads it or a row it collides with); its issuer is refused as unknown, the other
       * rows apply. `refused` lists every row left out.
       */
      readonly type: 'registry_row_refused';
      /** The row's key (its `issuer` column), as stored: hostile text, cut and escape it to log it. */
      readonly row: string;
      /** The rule it breaks. */
      readonly rule: RefusedRowRule;
      /** What is wrong, on one line (cut and escaped), naming the field. */
      readonly reason: string;
    }
  | {
      /** The database cannot be read: the last registry loaded stays in force. Once per stall. */
      readonly type: 'registry_stale';
      /** Why, on one line. */
      readonly error: string;
      /** Milliseconds since the epoch of the last good read: the registry in force is as of then. */
      readonly since: number;
      /** How many issuers the registry in force registers. */
      readonly issuers: number;
    }
  | {
      /** The database is read again after a `registry_stale`. */
      readonly type: 'registry_recovered';
      /** Milliseconds from the last good read before the stall to this one. */
      readonly staleForMs: number;
    };

/** Options of {@link postgresRegistry}: how it follows the table (as operator controls do), and its events. */
export interface PostgresRegistryOptions extends FollowOptions {
  /**
   * Receives each {@link RegistryEvent}. Must not throw (what it throws is ignored).
   * @default one line to console.error for each event but `registry_loaded`
   */
  readonly onEvent?: ((event: RegistryEvent) => void) | undefined;
  /**
   * Hosts a registered `jwksUri` may name although they are special-purpose addresses or names,
   * as `new IssuerRegistry(entries, { jwksAllowedHosts })` takes them. The registries loaded carry
   * them, and a verifier attached downloads by them unless it was given its own.
   * @default [] (none)
   */
  readonly jwksAllowedHosts?: readonly string[] | undefined;
}

/** The registry of one instance, following the table. */
export interface PostgresRegistry {
  /** The registry last loaded (it may register no issuer). */
  registry(): IssuerRegistry;
  /**
   * Applies the registry loaded to `verifier` now (`verifier.setRegistry`), and every change after.
   * @returns a function that detaches it (the registry it holds stays).
   * @throws {ClosedError} after `close()` (`code` `closed`): the verifier would not follow the table.
   */
  attach(verifier: Pick<Verifier, 'setRegistry'>): () => void;
  /** Reads the table now, and applies what changed. @throws {ClosedError} after `close()` (`code` `closed`). */
  reload(): Promise<void>;
  /**
   * Calls `listener` after each load applied (each `registry_loaded`): what a heartbeat reports.
   * It must not throw (what it throws is ignored).
   * @returns a function that stops calling it.
   */
  onApplied(listener: () => void): () => void;
  /** `true` while the `LISTEN` connection is up. */
  readonly listening: boolean;
  /** Milliseconds since the epoch of the last good read of the table; `null` before any. */
  readonly loadedAt: number | null;
  /**
   * The id of the last registry change the registry in force includes (the attached verifiers
   * hold it already); `0` for none.
   */
  readonly through: number;
  /** SHA-256 (hex) of the entries in force, as `registry_loaded` reported it. */
  readonly digest: string;
  /** The rows the last load left out, and why (their issuers are refused as unknown). */
  readonly refused: readonly RefusedRow[];
  /**
   * Stops listening and polling; attached verifiers keep the registry they hold, and `registry()`
   * still returns it. Called again, it does nothing.
   */
  close(): Promise<void>;
}

const OWNER = 'postgresRegistry';

/** Most changes read row by row; after more (an instance long cut off), the table is read whole. */
const CHANGES_READ = 1000;
const LOG_PREFIX = 'paygate-auth/postgres: issuer registry:';

function logEvent(event: RegistryEvent): void {
  if (event.type === 'registry_row_refused') {
    console.error(
      `${LOG_PREFIX} row ${quote(event.row)} is left out (${event.rule}): ${event.reason}; the issuers it names are refused (unknown_issuer) until it is fixed or removed`,
    );
  } else if (event.type === 'registry_stale') {
    console.error(
      `${LOG_PREFIX} the database cannot be read (${event.error}); keeping the ${event.issuers} issuers loaded at ${new Date(event.since).toISOString()} (retrying)`,
    );
  } else if (event.type === 'registry_recovered') {
    console.error(`${LOG_PREFIX} the database answers again after ${event.staleForMs} ms`);
  }
}

class FollowedRegistry implements PostgresRegistry {
  readonly #db: SqlClient;
  readonly #follower: TableFollower;
  readonly #onEvent: (event: RegistryEvent) => void;
  readonly #attached = new Set<Pick<Verifier, 'setRegistry'>>();
  readonly #jwksAllowedHosts: readonly string[];
  readonly #appliedListeners = new Set<() => void>();
  readonly #rows: RegistryRows;
  readonly #digester = new RegistryDigest();
  #registry: IssuerRegistry;
  #through = -1;
  #digest = '';
  #refused: readonly RefusedRow[] = [];
  #loadedAt: number | null = null;
  /** The last good read before the stall reported. */
  #staleSince = 0;

  constructor(db: SqlClient, options: PostgresRegistryOptions) {
    this.#db = db;
    functionOption(OWNER, 'onEvent', options.onEvent);
    this.#jwksAllowedHosts = [...checkAllowedHosts(OWNER, 'jwksAllowedHosts', options.jwksAllowedHosts)];
    this.#rows = new RegistryRows(this.#jwksAllowedHosts);
    this.#registry = this.#rows.registry;
    this.#onEvent = shielded(options.onEvent ?? logEvent);
    this.#follower = new TableFollower(db, options, {
      owner: OWNER,
      channel: REGISTRY_CHANNEL,
      read: () => this.#read(),
      // The trigger's payload is the change id: only one past the change applied is worth a read.
      wants: (payload) => {
        const id = notifiedId(payload);
        return id !== undefined && id > this.#through;
      },
      onStall: (error) => {
        this.#staleSince = this.#loadedAt ?? Date.now();
        this.#onEvent({ type: 'registry_stale', error: oneLine(error), since: this.#staleSince, issuers: this.#registry.size });
      },
      onRecovered: () => this.#onEvent({ type: 'registry_recovered', staleForMs: Date.now() - this.#staleSince }),
    });
  }

  get listening(): boolean {
    return this.#follower.listening;
  }

  get loadedAt(): number | null {
    return this.#loadedAt;
  }

  get through(): number {
    return Math.max(this.#through, 0);
  }

  get digest(): string {
    return this.#digest;
  }

  get refused(): readonly RefusedRow[] {
    return this.#refused;
  }

  start(): Promise<void> {
    return this.#follower.start();
  }

  registry(): IssuerRegistry {
    return this.#registry;
  }

  reload(): Promise<void> {
    return this.#follower.reload();
  }

  /**
   * At the first read, the table whole; after it, the rows changed since the change applied (the
   * table whole when there were more than {@link CHANGES_READ} changes, or when the last change id
   * is below the one applied: an audit that is not the one followed). Nothing when no change
   * came.
   */
  async #read(): Promise<void> {
    const timeout = this.#follower.timeout;
    let applied: AppliedRows;
    let through: number;
    const changes = this.#through < 0 ? null : await readRegistryChanges(this.#db, this.#through, CHANGES_READ, timeout);
    if (changes !== null && changes.through === this.#through) {
      this.#loadedAt = Date.now();
      return;
    }
    if (changes?.rows != null && changes.through > this.#through) {
      if (this.#follower.closed) return;
      applied = this.#rows.apply(changes.rows, changes.removed ?? []);
      through = changes.through;
    } else {
      const snapshot = await readRegistrySnapshot(this.#db, timeout);
      if (this.#follower.closed) return;
      const keys = new Set(snapshot.rows.map((row) => row.issuer));
      applied = this.#rows.apply(
        snapshot.rows,
        [...this.#rows.keys()].filter((key) => !keys.has(key)),
      );
      through = snapshot.through;
    }
    const { registry: next, refused, change, judged } = applied;
    // The digest first: until the verifiers are told, `through`, `registry()` and `digest` (what
    // the heartbeat writes, and a fleet wait reads) keep naming the registry they hold.
    const digest = await this.#digester.update(next, applied.touched);
    if (this.#follower.closed) return;
    this.#registry = next;
    this.#through = through;
    this.#digest = digest;
    this.#refused = Object.freeze(refused);
    const failures: unknown[] = [];
    for (const verifier of this.#attached) {
      try {
        verifier.setRegistry(next);
      } catch (error) {
        failures.push(error);
      }
    }
    this.#loadedAt = Date.now();
    for (const { row, rule, reason } of judged) this.#onEvent({ type: 'registry_row_refused', row, rule, reason });
    this.#onEvent({ type: 'registry_loaded', issuers: next.size, change, through, digest: this.#digest, refused: refused.length });
    for (const listener of this.#appliedListeners) notify(listener);
    if (failures.length > 0) throw failures.length === 1 ? failures[0] : new AggregateError(failures, 'setRegistry failed');
  }

  onApplied(listener: () => void): () => void {
    functionOption(OWNER, 'onApplied', listener);
    this.#appliedListeners.add(listener);
    return () => {
      this.#appliedListeners.delete(listener);
    };
  }

  attach(verifier: Pick<Verifier, 'setRegistry'>): () => void {
    this.#follower.refuseClosed('attach()');
    if (typeof (verifier as Partial<Verifier> | null)?.setRegistry !== 'function') {
      throw new TypeError(`attach: verifier must be a Verifier (createVerifier()), got ${describeHolder(verifier, 'setRegistry')}`);
    }
    verifier.setRegistry(this.#registry);
    this.#attached.add(verifier);
    return () => {
      this.#attached.delete(verifier);
    };
  }

  async close(): Promise<void> {
    await this.#follower.close();
    this.#attached.clear();
    this.#appliedListeners.clear();
  }
}

/**
 * Starts following the issuer registry kept in `db`: listens for changes, loads the registry,
 * polls. Rejects when the first read (or the first `LISTEN`) fails; afterwards an unreachable
 * database keeps the last registry in force, reported once per stall (`registry_stale`), and is
 * retried with a doubling delay.
 *
 * @param db A `pg.Pool` (see `poolSettings`), a `pg.Client` or PGlite, migrated
 * (`migrate(db, { only: 'registry' })` is enough).
 * @example
 * ```ts
 * const registry = await postgresRegistry(pool);
 * registry.attach(verifier); // every change by `addIssuer`, `updateIssuer`, `removeIssuer`, within a second
 * ```
 */
export async function postgresRegistry(db: SqlClient, options: PostgresRegistryOptions = {}): Promise<PostgresRegistry> {
  rejectUnknownOptions('postgresRegistry', options, POSTGRES_REGISTRY_OPTION_NAMES);
  const registry = new FollowedRegistry(checkClient(db, OWNER), options);
  await registry.start();
  return registry;
}
