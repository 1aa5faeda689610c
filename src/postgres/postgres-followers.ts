/**
 * Everything an instance follows in PostgreSQL, started by one call: the issuer registry, the
 * operator controls and the key history, the first two on ONE `LISTEN` connection (the
 * instance's listener). `attach(verifier)` attaches all three, in the order they depend on: the
 * registry first (the controls act only on issuers the verifier registers), then the controls,
 * then the key history; and each registry applied brings the controls in force to the issuers it
 * adds at once.
 */
import type { Verifier } from '../index.js';
import { describeValue, optionNames, rejectUnknownOptions } from '../internal/index.js';
import { NotificationListener, type PostgresListener, type PostgresListenerOptions } from './notification-listener.js';
import {
  type ControlledVerifier,
  type PostgresControls,
  type PostgresControlsOptions,
  applyHeldControls,
  postgresControls,
} from './operator-controls.js';
import {
  type KeyHistoryVerifier,
  type PostgresKeyHistory,
  type PostgresKeyHistoryOptions,
  postgresKeyHistory,
} from './postgres-key-history.js';
import { type PostgresRegistry, type PostgresRegistryOptions, postgresRegistry } from './postgres-registry.js';
import { type SqlClient, checkClient } from './sql-client.js';

/** A follower's options inside {@link PostgresFollowersOptions}: how it listens is the listener's. */
type Followed<T> = Omit<T, 'listen' | 'heartbeatInterval'>;

/**
 * Options of {@link postgresFollowers}: the listener's (`listen`, `heartbeatInterval`,
 * `statementTimeout`, `reconnectDelay`, `maxReconnectDelay`), then each follower's own, or `false`
 * for one not followed. `statementTimeout` is also each follower's unless it names its own.
 */
export interface PostgresFollowersOptions extends PostgresListenerOptions {
  /** `postgresRegistry` options; `false` to keep the registry the verifier was made with. @default {} */
  readonly registry?: Followed<PostgresRegistryOptions> | false | undefined;
  /** `postgresControls` options; `false` for none. @default {} */
  readonly controls?: Followed<PostgresControlsOptions> | false | undefined;
  /** `postgresKeyHistory` options; `false` for none. @default {} */
  readonly keyHistory?: PostgresKeyHistoryOptions | false | undefined;
}

/** What a verifier attached to every follower must have. */
export type FollowedVerifier = Pick<Verifier, 'setRegistry'> & ControlledVerifier & KeyHistoryVerifier;

/** A follower: `undefined` when the options say `false` for it, maybe `undefined` when they may. */
type Started<O, K extends string, T> = O extends { readonly [P in K]: false }
  ? undefined
  : false extends (K extends keyof O ? O[K] : never)
    ? T | undefined
    : T;

/** The followers of one instance, on one listener (`O`: the options they were started with). */
export interface PostgresFollowers<O extends PostgresFollowersOptions = PostgresFollowersOptions> {
  /** The instance's one `LISTEN` connection (give it to anything else that listens). */
  readonly listener: PostgresListener;
  /** The issuer registry followed; `undefined` with `registry: false`. */
  readonly registry: Started<O, 'registry', PostgresRegistry>;
  /** The operator controls; `undefined` with `controls: false`. */
  readonly controls: Started<O, 'controls', PostgresControls>;
  /** The key history shared; `undefined` with `keyHistory: false`. */
  readonly keyHistory: Started<O, 'keyHistory', PostgresKeyHistory>;
  /**
   * Attaches every follower to `verifier`: the registry (now applied), the controls in force, the
   * key history.
   * @returns a function that detaches it from all of them.
   * @throws {TypeError} when `verifier` is not a Verifier (then none is attached).
   */
  attach(verifier: FollowedVerifier): () => void;
  /** Stops every follower (the key history after a last flush), then the listener. */
  close(): Promise<void>;
}

const OWNER = 'postgresFollowers';

const FOLLOWERS_OPTION_NAMES = optionNames<PostgresFollowersOptions>({
  registry: true,
  controls: true,
  keyHistory: true,
  listen: true,
  heartbeatInterval: true,
  statementTimeout: true,
  reconnectDelay: true,
  maxReconnectDelay: true,
});

/** A follower's options: the instance's listener, and the listener's `statementTimeout` unless it has its own. */
function followed<T extends object>(
  name: string,
  options: T | false | undefined,
  listener: PostgresListener | undefined,
  statementTimeout: number | undefined,
): (T & { listen?: PostgresListener }) | undefined {
  if (options === false) return undefined;
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new TypeError(`${OWNER}: ${name} must be an options object or false (to follow no ${name}), got ${describeValue(options)}`);
  }
  for (const key of ['listen', 'heartbeatInterval'] as const) {
    if (options !== undefined && key in options) {
      throw new TypeError(`${OWNER}: ${name}.${key}: the followers share one listener; give ${key} beside ${name}, not in it`);
    }
  }
  // The listener's bound unless the follower names its own: `statementTimeout: undefined` names none.
  const own = options === undefined ? undefined : (options as { readonly statementTimeout?: unknown }).statementTimeout;
  return {
    ...options,
    ...(own === undefined && statementTimeout !== undefined ? { statementTimeout } : {}),
    ...(listener === undefined ? {} : { listen: listener }),
  } as T & { listen?: PostgresListener };
}

class Followers {
  readonly listener: PostgresListener;
  readonly registry: PostgresRegistry | undefined;
  readonly controls: PostgresControls | undefined;
  readonly keyHistory: PostgresKeyHistory | undefined;

  constructor(
    listener: PostgresListener,
    registry: PostgresRegistry | undefined,
    controls: PostgresControls | undefined,
    keyHistory: PostgresKeyHistory | undefined,
  ) {
    this.listener = listener;
    this.registry = registry;
    this.controls = controls;
    this.keyHistory = keyHistory;
  }

  attach(verifier: FollowedVerifier): () => void {
    const detach: (() => void)[] = [];
    try {
      if (this.registry !== undefined) detach.push(this.registry.attach(verifier));
      if (this.controls !== undefined) detach.push(this.controls.attach(verifier));
      if (this.keyHistory !== undefined) detach.push(this.keyHistory.attach(verifier));
    } catch (error) {
      for (const undo of detach) undo();
      throw error;
    }
    return () => {
      for (const undo of detach) undo();
    };
  }

  async close(): Promise<void> {
    await Promise.all([this.registry?.close(), this.controls?.close(), this.keyHistory?.close()]);
    await this.listener.close();
  }
}

/**
 * Starts what this instance follows in `db` on one `LISTEN` connection: the issuer registry, the
 * operator controls and the key history (each as its own function starts it). Rejects, having
 * closed what it started, when one of them fails to start.
 *
 * @param db A `pg.Pool` (see `poolSettings`), a `pg.Client` or PGlite, migrated (`migrate(db)`).
 * @throws {TypeError} for a bad option, naming it.
 * @example
 * ```ts
 * const followers = await postgresFollowers(pool, { keyHistory: { flushInterval: 10_000 } });
 * const verifier = createVerifier({ registry: followers.registry.registry(), audience });
 * followers.attach(verifier); // the registry, the controls and the key history
 * // at shutdown: await followers.close();
 * ```
 */
export async function postgresFollowers<const O extends PostgresFollowersOptions = Record<never, never>>(
  db: SqlClient,
  options: O = {} as O,
): Promise<PostgresFollowers<O>> {
  checkClient(db, OWNER);
  rejectUnknownOptions(OWNER, options, FOLLOWERS_OPTION_NAMES);
  const { registry, controls, keyHistory, ...listenerOptions } = options;
  const listener = new NotificationListener(db, listenerOptions, OWNER);
  const { statementTimeout } = listenerOptions;
  const settings = {
    registry: followed('registry', registry, listener, statementTimeout),
    controls: followed('controls', controls, listener, statementTimeout),
    keyHistory: followed('keyHistory', keyHistory, undefined, statementTimeout),
  };
  const started = await Promise.allSettled([
    settings.registry && postgresRegistry(db, settings.registry),
    settings.controls && postgresControls(db, settings.controls),
    settings.keyHistory && postgresKeyHistory(db, settings.keyHistory),
  ]);
  const failed = started.find((result) => result.status === 'rejected');
  const [registryStarted, controlsStarted, keyHistoryStarted] = started.map((result) =>
    result.status === 'fulfilled' ? result.value : undefined,
  ) as [PostgresRegistry | undefined, PostgresControls | undefined, PostgresKeyHistory | undefined];
  const followers = new Followers(listener, registryStarted, controlsStarted, keyHistoryStarted);
  if (failed !== undefined) {
    await followers.close().catch(() => undefined);
    throw failed.reason;
  }
  if (registryStarted !== undefined && controlsStarted !== undefined) {
    // The controls act only on issuers a verifier registers: each registry applied brings the
    // controls held to the issuers it adds in the same turn (no verification runs between the
    // entry and its suspension or revocation), then reads for any recorded since. A failed read
    // is the controls' own poll's to retry and report.
    registryStarted.onApplied(() => {
      applyHeldControls(controlsStarted);
      void controlsStarted.reload().catch(() => undefined);
    });
  }
  return followers as unknown as PostgresFollowers<O>;
}
