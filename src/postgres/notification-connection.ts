/**
 * The dedicated connection a table follower (operator controls, the issuer registry) `LISTEN`s on, opened by a function (by default one
 * checked out of the `pg.Pool` and kept), or PGlite's own `listen()`. A heartbeat (a bounded
 * `SELECT 1` every few seconds) finds a connection that went silent without closing; it is then
 * destroyed and reported as a drop.
 */
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
interface InProcessListener {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

/** What listening needs from the caller: how to stop, and how to learn that the connection dropped. */
export interface Listening {
  stop(): Promise<void>;
}

/** Hooks and bounds of a {@link Listening}. */
export interface ListenHooks {
  /** The `NOTIFY` channel listened on. */
  readonly channel: string;
  /** A notification on the channel, with its payload (hostile: any role may `NOTIFY`). */
  readonly onNotify: (payload: string | undefined) => void;
  /** The connection dropped or stopped answering: it is closed already; listen again. */
  readonly onDrop: (error: Error | undefined) => void;
  /** Milliseconds between heartbeats. */
  readonly heartbeatInterval: number;
  /** Milliseconds `LISTEN` and each heartbeat may take. */
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

/**
 * Opens `source`'s connection and `LISTEN`s on `hooks.channel`, both within
 * `hooks.timeout`; then sends a heartbeat every `hooks.heartbeatInterval`.
 */
export async function listenOn(source: NotificationSource, hooks: ListenHooks): Promise<Listening> {
  const opening = source();
  const connection = await within(opening, hooks.timeout, 'opening the LISTEN connection').catch((error: unknown) => {
    // Opened after all, too late: close it when it comes.
    opening.then((late) => close(late, error instanceof Error ? error : undefined)).catch(() => undefined);
    throw error;
  });
  let live = true;
  let beating = false;
  const heartbeat = setInterval(() => {
    if (beating || !live) return;
    beating = true;
    within(connection.query('SELECT 1'), hooks.timeout, 'the LISTEN connection missed its heartbeat').then(
      () => {
        beating = false;
      },
      (error: unknown) => drop(error instanceof Error ? error : new Error(String(error))),
    );
  }, hooks.heartbeatInterval);
  heartbeat.unref?.();
  const drop = (error?: Error): void => {
    if (!live) return;
    live = false;
    clearInterval(heartbeat);
    void close(connection, error ?? new Error('the listening connection ended'));
    hooks.onDrop(error);
  };
  connection.on('notification', (message) => {
    if (message.channel === hooks.channel) hooks.onNotify(message.payload);
  });
  connection.on('error', (error) => drop(error));
  connection.on('end', () => drop());
  try {
    await within(connection.query(`LISTEN ${hooks.channel}`), hooks.timeout, 'LISTEN');
  } catch (error) {
    live = false;
    clearInterval(heartbeat);
    await close(connection, error instanceof Error ? error : new Error(String(error)));
    throw error;
  }
  return {
    stop: async () => {
      if (!live) return;
      live = false;
      clearInterval(heartbeat);
      await close(connection);
    },
  };
}

/** PGlite's `listen()`: in-process, it never drops. */
export async function listenInProcess(db: InProcessListener, hooks: ListenHooks): Promise<Listening> {
  const unlisten = await db.listen(hooks.channel, (payload) => hooks.onNotify(payload));
  return { stop: () => unlisten() };
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
    throw new TypeError(`${owner}: listen must be a function opening a new connection each call (such as () => pool.connect()), or false`);
  }
  return listen;
}
