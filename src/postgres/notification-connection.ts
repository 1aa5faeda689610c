/**
 * The one connection an instance's listener (see notification-listener.ts) `LISTEN`s on, for
 * every channel, opened by a function (by default one checked out of the `pg.Pool` and kept), or
 * PGlite's own `listen()`. A heartbeat (a bounded `SELECT 1` every few seconds) finds a
 * connection that went silent without closing; it is then destroyed and reported as a drop.
 */
import { describeValue } from '../internal/index.js';
import { type SqlClient, isPool, within } from './sql-client.js';

/** A notification as `pg` delivers it. */
export interface NotificationMessage {
  readonly channel: string;
  readonly payload?: string | undefined;
}

/** A connection that can `LISTEN`: a `pg.Client`, or a client checked out of a `pg.Pool`. */
export interface NotificationConnection {
  query(text: string): Promise<unknown>;
  on(event: 'notification', listener: (message: NotificationMessage) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  /** A pooled client's: given back (destroyed) when listening stops or it fails. */
  release?(destroy?: boolean | Error): void;
  /** A plain client's: closed when listening stops or it fails. */
  end?(): Promise<void>;
}

/** Opens a new dedicated connection each time it is called (after a drop, too). */
export type NotificationSource = () => Promise<NotificationConnection>;

/** PGlite's in-process notifications. */
export interface InProcessListener {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

/** One open `LISTEN` connection: the channels it listens on can change while it is up. */
export interface Listening {
  /** `LISTEN` on one more channel, within the connection's bound; a failure drops the connection. */
  listen(channel: string): Promise<void>;
  /** `UNLISTEN` a channel, within the connection's bound; a failure drops the connection. */
  unlisten(channel: string): Promise<void>;
  /** Closes the connection (no drop is reported). */
  stop(): Promise<void>;
}

/** Hooks and bounds of a {@link Listening}. */
export interface ListenHooks {
  /** The `NOTIFY` channels listened on from the start (checked identifiers). */
  readonly channels: readonly string[];
  /** A notification on a channel, with its payload (hostile: any role may `NOTIFY`). */
  readonly onNotify: (channel: string, payload: string | undefined) => void;
  /** The connection dropped or stopped answering after it was up: it is closed already; listen again. */
  readonly onDrop: (error: Error) => void;
  /** Milliseconds between heartbeats. */
  readonly heartbeatInterval: number;
  /** Milliseconds opening the connection, `LISTEN` and each heartbeat may take. */
  readonly timeout: number;
}

function close(connection: NotificationConnection, error?: Error): Promise<void> {
  if (typeof connection.release === 'function') {
    connection.release(error ?? true);
    return Promise.resolve();
  }
  // Not awaited: on a connection that went silent, ending waits for an answer that never comes.
  if (typeof connection.end === 'function') connection.end().catch(() => undefined);
  return Promise.resolve();
}

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/**
 * Opens `source`'s connection and `LISTEN`s on `hooks.channels` in one round trip, each within
 * `hooks.timeout`; then sends a heartbeat every `hooks.heartbeatInterval`. A failure before it
 * resolves rejects it (nothing is reported to `onDrop`).
 */
export async function listenOn(source: NotificationSource, hooks: ListenHooks): Promise<Listening> {
  const opening = source();
  const connection = await within(opening, hooks.timeout, 'opening the LISTEN connection').catch((error: unknown) => {
    // Opened after all, too late: close it when it comes.
    opening.then((late) => close(late, asError(error))).catch(() => undefined);
    throw error;
  });
  let live = true;
  let up = false;
  let beating = false;
  const heartbeat = setInterval(() => {
    if (beating || !live) return;
    beating = true;
    bounded('SELECT 1', 'the LISTEN connection missed its heartbeat').then(
      () => {
        beating = false;
      },
      () => undefined,
    );
  }, hooks.heartbeatInterval);
  heartbeat.unref?.();
  const stop = (error?: Error): void => {
    live = false;
    clearInterval(heartbeat);
    void close(connection, error);
  };
  const drop = (error: Error): void => {
    if (!live) return;
    stop(error);
    if (up) hooks.onDrop(error);
  };
  /** A statement on the connection within the bound; a failure drops the connection. */
  const bounded = (text: string, what: string): Promise<void> =>
    within(connection.query(text), hooks.timeout, what).then(
      () => undefined,
      (error: unknown) => {
        drop(asError(error));
        throw error;
      },
    );
  connection.on('notification', (message) => hooks.onNotify(message.channel, message.payload));
  connection.on('error', (error) => drop(error));
  connection.on('end', () => drop(new Error('the LISTEN connection ended')));
  if (hooks.channels.length > 0) await bounded(hooks.channels.map((channel) => `LISTEN ${channel}`).join('; '), 'LISTEN');
  if (!live) throw new Error('the LISTEN connection ended');
  up = true;
  return {
    listen: (channel) => (live ? bounded(`LISTEN ${channel}`, 'LISTEN') : Promise.reject(new Error('the LISTEN connection is closed'))),
    unlisten: (channel) => (live ? bounded(`UNLISTEN ${channel}`, 'UNLISTEN') : Promise.resolve()),
    stop: () => {
      if (live) stop();
      return Promise.resolve();
    },
  };
}

/** PGlite's `listen()` on one channel: in-process, it never drops. Resolves the function that stops it. */
export function listenInProcess(db: InProcessListener, channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
  return db.listen(channel, onNotify);
}

/** `true` for PGlite (or any client with an in-process `listen(channel, callback)`). */
export function isInProcessListener(db: unknown): db is InProcessListener {
  return typeof (db as Partial<InProcessListener>).listen === 'function';
}

/**
 * The source of the `LISTEN` connection: `listen` as it is (a function opening a new connection
 * each call); without it, `db`'s own connections when it is a pool; `undefined` for none.
 */
export function notificationSource(
  listen: NotificationSource | false | undefined,
  db: SqlClient,
  owner: string,
): NotificationSource | undefined {
  if (listen === false) return undefined;
  if (listen === undefined) return isPool(db) ? () => db.connect() as unknown as Promise<NotificationConnection> : undefined;
  if (typeof listen !== 'function') {
    throw new TypeError(
      `${owner}: listen must be a function opening a new connection each call (such as () => pool.connect()), or false, got ${describeValue(listen)}`,
    );
  }
  return listen;
}
