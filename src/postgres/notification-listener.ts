/**
 * One listener per instance: every channel an instance follows (the issuer registry, the operator
 * controls, and any other) is served by ONE `LISTEN` connection with one heartbeat. A follower
 * calls `listen(channel, onNotification, onReconnect)`; when the connection drops or goes silent,
 * each follower hears of it (`onDrop`), the listener opens a new connection after a delay
 * (doubling up to `maxReconnectDelay`), `LISTEN`s on every channel again in one round trip, and
 * calls each `onReconnect`, so that each follower reads what it missed. On PGlite the channels
 * are PGlite's own `listen()`; with no way to listen (`listen: false`, a single `pg.Client`),
 * `listen()` keeps nothing open and the followers poll.
 */
import {
  type InProcessListener,
  type Listening,
  type NotificationSource,
  isInProcessListener,
  listenInProcess,
  listenOn,
  notificationSource,
} from './notification-connection.js';
import { type SqlClient, checkClient, checkStatementTimeout } from './sql-client.js';
import { describeValue, functionOption, numberOption, optionNames, rejectUnknownOptions } from '../internal/index.js';
import { notify } from './hook.js';

/** Options of {@link postgresListener}. */
export interface PostgresListenerOptions {
  /**
   * Opens the `LISTEN` connection: a function resolving a new connected `pg.Client` (or a client
   * checked out of a pool) at each call, called again after a drop; `false` to listen on nothing
   * (the followers then poll only). The connection is ended (or released, destroyed) when it
   * drops, when no channel is listened on any more, and by `close()`.
   * @default `() => db.connect()` when `db` is a `pg.Pool` (one connection kept out of it while
   * listening); PGlite's own `listen()`; otherwise none (polling only)
   */
  readonly listen?: NotificationSource | false | undefined;
  /**
   * Milliseconds between heartbeats (`SELECT 1`) on the `LISTEN` connection. One that gets no
   * answer within `statementTimeout` replaces the connection. 100 to 600 000.
   * @default 5000
   */
  readonly heartbeatInterval?: number | undefined;
  /**
   * Milliseconds opening the connection, `LISTEN` (every channel at once) and each heartbeat may
   * take, the wait for a pooled connection included. 10 to 600 000.
   * @default 5000
   */
  readonly statementTimeout?: number | undefined;
  /**
   * Milliseconds before opening a new connection after a drop; doubled at each failed attempt, up
   * to `maxReconnectDelay`. 10 to 60 000.
   * @default 250
   */
  readonly reconnectDelay?: number | undefined;
  /**
   * The longest wait between two attempts to open a new connection, in milliseconds. 100 to
   * 600 000.
   * @default 5000
   */
  readonly maxReconnectDelay?: number | undefined;
}

/** The one `LISTEN` connection of an instance, shared by its followers. */
const LISTENER_OPTION_NAMES = optionNames<PostgresListenerOptions>({
  listen: true,
  heartbeatInterval: true,
  statementTimeout: true,
  reconnectDelay: true,
  maxReconnectDelay: true,
});

export interface PostgresListener {
  /**
   * Listens on `channel` (a lower-case SQL identifier) until the function it resolves is called:
   * `onNotification` receives each notification's payload (hostile text: any role may `NOTIFY`);
   * `onReconnect` is called once the connection is back after a drop (notifications sent
   * meanwhile are lost: read what changed); `onDrop` when it drops or stops answering. None may
   * throw (what they throw is ignored). Opens the connection if none is open.
   * @throws when the connection cannot be opened, or `LISTEN` gets no answer, within `statementTimeout`.
   */
  listen(
    channel: string,
    onNotification: (payload: string | undefined) => void,
    onReconnect: () => void,
    onDrop?: (error: Error) => void,
  ): Promise<() => Promise<void>>;
  /** `true` while the `LISTEN` connection is up (PGlite: while a channel is listened on). */
  readonly listening: boolean;
  /**
   * Closes the connection and stops every channel; reconnects no more. A connection being opened
   * is ended once open: `close()` resolves after it (within `statementTimeout`).
   */
  close(): Promise<void>;
}

/** One call of `listen()`. */
interface Subscription {
  readonly onNotification: (payload: string | undefined) => void;
  readonly onReconnect: () => void;
  readonly onDrop: ((error: Error) => void) | undefined;
}

/** A channel name: a lower-case identifier, so that it is never quoted nor folded. */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

const OWNER = 'postgresListener';

/** The listener {@link postgresListener} makes; the followers take nothing else. */
export class NotificationListener implements PostgresListener {
  /** `true` when it has a connection that may drop (not PGlite, not polling only). */
  readonly dropsConnections: boolean;
  /** `true` when it can listen at all (a connection, or PGlite's `listen()`). */
  readonly canListen: boolean;
  readonly #source: NotificationSource | undefined;
  readonly #inProcess: InProcessListener | undefined;
  readonly #heartbeatInterval: number;
  readonly #timeout: number;
  readonly #reconnectDelay: number;
  readonly #maxReconnectDelay: number;
  readonly #channels = new Map<string, Set<Subscription>>();
  /** PGlite: each channel's own `unlisten`. */
  readonly #inProcessChannels = new Map<string, Promise<() => Promise<void>>>();
  #connection: Listening | null = null;
  #connecting: Promise<Listening> | null = null;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #delay: number;
  #closed = false;

  /** Checks the options (a `TypeError` naming a bad one, as `owner`); opens nothing. */
  constructor(db: SqlClient, options: PostgresListenerOptions, owner = OWNER) {
    rejectUnknownOptions(owner, options, LISTENER_OPTION_NAMES);
    this.#heartbeatInterval = numberOption(owner, 'heartbeatInterval', options.heartbeatInterval, 5000, {
      min: 100,
      max: 600_000,
      integer: true,
      unit: 'milliseconds',
    });
    this.#timeout = checkStatementTimeout(options.statementTimeout, owner);
    this.#reconnectDelay = numberOption(owner, 'reconnectDelay', options.reconnectDelay, 250, {
      min: 10,
      max: 60_000,
      integer: true,
      unit: 'milliseconds',
    });
    this.#maxReconnectDelay = numberOption(owner, 'maxReconnectDelay', options.maxReconnectDelay, 5000, {
      min: 100,
      max: 600_000,
      integer: true,
      unit: 'milliseconds',
    });
    this.#delay = this.#reconnectDelay;
    this.#inProcess = options.listen === undefined && isInProcessListener(db) ? db : undefined;
    this.#source = this.#inProcess === undefined ? notificationSource(options.listen, db, owner) : undefined;
    this.dropsConnections = this.#source !== undefined;
    this.canListen = this.dropsConnections || this.#inProcess !== undefined;
  }

  get listening(): boolean {
    if (this.#inProcess !== undefined) return this.#channels.size > 0;
    return this.#connection !== null;
  }

  async listen(
    channel: string,
    onNotification: (payload: string | undefined) => void,
    onReconnect: () => void,
    onDrop?: (error: Error) => void,
  ): Promise<() => Promise<void>> {
    if (typeof channel !== 'string' || !CHANNEL.test(channel)) {
      throw new TypeError(`${OWNER}: channel must be a lower-case identifier (a-z, 0-9, _; at most 63), got ${describeValue(channel)}`);
    }
    for (const [name, hook] of [
      ['onNotification', onNotification ?? null],
      ['onReconnect', onReconnect ?? null],
      ['onDrop', onDrop],
    ] as const) {
      functionOption(OWNER, name, hook);
    }
    if (this.#closed) throw new Error(`${OWNER}: closed`);
    const subscription: Subscription = { onNotification, onReconnect, onDrop };
    const fresh = !this.#channels.has(channel);
    const subscribers = this.#channels.get(channel) ?? new Set<Subscription>();
    subscribers.add(subscription);
    this.#channels.set(channel, subscribers);
    try {
      if (fresh) await this.#open(channel);
      else await this.#inProcessChannels.get(channel);
      // A channel listened on by a connection still opening is listened on once it is open.
      if (this.#source !== undefined && this.#connection === null) await this.#connect();
    } catch (error) {
      await this.#leave(channel, subscription);
      // The other channels, if any, still wait for a connection (this attempt took their turn).
      if (this.#connection === null) this.#scheduleReconnect();
      throw error;
    }
    let left = false;
    return () => {
      if (left) return Promise.resolve();
      left = true;
      return this.#leave(channel, subscription);
    };
  }

  /** Starts listening on a channel no one listened on. */
  async #open(channel: string): Promise<void> {
    if (this.#inProcess !== undefined) {
      const unlisten = listenInProcess(this.#inProcess, channel, (payload) => this.#dispatch(channel, payload));
      this.#inProcessChannels.set(channel, unlisten);
      await unlisten;
    } else if (this.#connection !== null) {
      await this.#connection.listen(channel);
    } else if (this.#source !== undefined && this.#connecting === null) {
      // Not waiting for a reconnection's delay: this caller waits on it. The channels that saw
      // the drop hear of the reconnection, as they would have at the end of the delay.
      const reconnecting = this.#retry !== undefined;
      clearTimeout(this.#retry);
      this.#retry = undefined;
      await this.#connect();
      if (reconnecting) this.#reconnected(channel);
    } else if (this.#connecting !== null) {
      const connection = await this.#connecting;
      await connection.listen(channel);
    }
  }

  /** Opens the connection listening on every channel (one open at a time). */
  #connect(): Promise<Listening> {
    const source = this.#source;
    if (this.#connection !== null) return Promise.resolve(this.#connection);
    if (source === undefined) return Promise.reject(new Error(`${OWNER}: nothing to listen on`));
    this.#connecting ??= listenOn(source, {
      channels: [...this.#channels.keys()],
      onNotify: (channel, payload) => this.#dispatch(channel, payload),
      onDrop: (error) => this.#dropped(error),
      heartbeatInterval: this.#heartbeatInterval,
      timeout: this.#timeout,
    })
      .then(async (connection) => {
        if (this.#closed || this.#channels.size === 0) {
          await connection.stop();
          throw new Error(`${OWNER}: closed`);
        }
        this.#connection = connection;
        this.#delay = this.#reconnectDelay;
        return connection;
      })
      .finally(() => {
        this.#connecting = null;
      });
    return this.#connecting;
  }

  #dispatch(channel: string, payload: string | undefined): void {
    for (const subscription of this.#channels.get(channel) ?? []) notify(() => subscription.onNotification(payload));
  }

  #dropped(error: Error): void {
    this.#connection = null;
    if (this.#closed) return;
    for (const subscribers of this.#channels.values()) {
      for (const { onDrop } of subscribers) if (onDrop !== undefined) notify(() => onDrop(error));
    }
    this.#scheduleReconnect();
  }

  /** Opens a new connection after the current delay (doubled for the next failure), then tells every follower. */
  #scheduleReconnect(): void {
    if (this.#closed || this.#source === undefined || this.#retry !== undefined || this.#channels.size === 0) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#connect().then(
        () => this.#reconnected(),
        () => this.#scheduleReconnect(),
      );
    }, this.#delay);
    this.#retry.unref?.();
    this.#delay = Math.min(this.#delay * 2, this.#maxReconnectDelay);
  }

  /** Tells every channel's followers (but those of `opened`, listened on just now) that the connection is back. */
  #reconnected(opened?: string): void {
    for (const [channel, subscribers] of this.#channels) {
      if (channel === opened) continue;
      for (const { onReconnect } of subscribers) notify(onReconnect);
    }
  }

  /** Ends one subscription; a channel no one listens on any more is left, and the connection with the last one. */
  async #leave(channel: string, subscription: Subscription): Promise<void> {
    const subscribers = this.#channels.get(channel);
    if (subscribers === undefined || !subscribers.delete(subscription) || subscribers.size > 0) return;
    this.#channels.delete(channel);
    const inProcess = this.#inProcessChannels.get(channel);
    this.#inProcessChannels.delete(channel);
    if (inProcess !== undefined) {
      await inProcess.then((unlisten) => unlisten()).catch(() => undefined);
      return;
    }
    const connection = this.#connection;
    if (connection === null) return;
    if (this.#channels.size === 0) {
      this.#connection = null;
      clearTimeout(this.#retry);
      this.#retry = undefined;
      await connection.stop();
    } else {
      await connection.unlisten(channel).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    const channels = [...this.#channels.entries()];
    for (const [channel, subscribers] of channels) for (const subscription of [...subscribers]) await this.#leave(channel, subscription);
    const connection = this.#connection;
    this.#connection = null;
    await connection?.stop();
    // A connection being opened (after a drop, say) is ended as soon as it is open, within the
    // bound of its opening: close() resolves once it is.
    await this.#connecting?.catch(() => undefined);
  }
}

/**
 * The `LISTEN` connection of this instance, to share between its followers (give it as their
 * `listen` option, or use `postgresFollowers`, which makes one). It opens the connection at the
 * first `listen()`, and closes it when no channel is listened on any more.
 *
 * @param db A `pg.Pool` (see `poolSettings`), a `pg.Client` or PGlite.
 * @throws {TypeError} for a bad option.
 * @example
 * ```ts
 * const listener = postgresListener(pool);
 * const registry = await postgresRegistry(pool, { listen: listener });
 * const controls = await postgresControls(pool, { listen: listener }); // the same connection
 * ```
 */
export function postgresListener(db: SqlClient, options: PostgresListenerOptions = {}): PostgresListener {
  return new NotificationListener(checkClient(db, OWNER), options);
}
