/**
 * The dedicated connection operator controls `LISTEN` on: taken from a factory, a `pg.Pool`
 * (one connection checked out and kept), or PGlite's own `listen()`.
 *
 * @module paygate-auth/postgres
 */
import { CONTROLS_CHANNEL } from './schema.js';
import { type SqlClient, type SqlPool, isPool } from './sql-client.js';

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
  /** A pooled client's: given back (destroyed) when the controls stop or it fails. */
  release?(destroy?: boolean | Error): void;
  /** A plain client's: closed when the controls stop or it fails. */
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

/** Hooks of a {@link Listening}. */
export interface ListenHooks {
  readonly onNotify: () => void;
  /** The connection dropped: it is closed already; listen again. */
  readonly onDrop: (error: Error | undefined) => void;
}

function close(connection: NotificationConnection, error?: Error): Promise<void> {
  if (typeof connection.release === 'function') {
    connection.release(error ?? true);
    return Promise.resolve();
  }
  return typeof connection.end === 'function' ? connection.end().catch(() => undefined) : Promise.resolve();
}

/** Opens `source`'s connection and `LISTEN`s on the controls' channel. */
export async function listenOn(source: NotificationSource, hooks: ListenHooks): Promise<Listening> {
  const connection = await source();
  let live = true;
  const drop = (error?: Error): void => {
    if (!live) return;
    live = false;
    void close(connection, error ?? new Error('the listening connection ended'));
    hooks.onDrop(error);
  };
  connection.on('notification', (message) => {
    if (message.channel === CONTROLS_CHANNEL) hooks.onNotify();
  });
  connection.on('error', (error) => drop(error));
  connection.on('end', () => drop());
  try {
    await connection.query(`LISTEN ${CONTROLS_CHANNEL}`);
  } catch (error) {
    live = false;
    await close(connection, error instanceof Error ? error : new Error(String(error)));
    throw error;
  }
  return {
    stop: async () => {
      if (!live) return;
      live = false;
      await close(connection);
    },
  };
}

/** PGlite's `listen()`: in-process, it never drops. */
export async function listenInProcess(db: InProcessListener, hooks: ListenHooks): Promise<Listening> {
  const unlisten = await db.listen(CONTROLS_CHANNEL, () => hooks.onNotify());
  return { stop: () => unlisten() };
}

/** `true` for PGlite (or any client with an in-process `listen(channel, callback)`). */
export function isInProcessListener(db: unknown): db is InProcessListener {
  return typeof (db as Partial<InProcessListener>).listen === 'function';
}

/** What the `listen` option of the controls takes. */
export type ListenOption = NotificationSource | SqlPool | NotificationConnection | false;

function isConnection(value: unknown): value is NotificationConnection {
  const candidate = value as Partial<NotificationConnection> | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.on === 'function' && typeof candidate.query === 'function';
}

/**
 * The source of `listen`: a factory as it is; a pool's connections; one connected client (used
 * once: after it drops, there is nothing to reconnect with, and polling carries on alone).
 * Without `listen`, `db`'s own connections when it is a pool; `undefined` when there is none.
 */
export function notificationSource(listen: ListenOption | undefined, db: SqlClient): NotificationSource | undefined {
  if (listen === false) return undefined;
  if (typeof listen === 'function') return listen;
  const pool = listen ?? db;
  if (isPool(pool)) return () => pool.connect() as unknown as Promise<NotificationConnection>;
  if (listen === undefined) return undefined;
  if (!isConnection(listen)) throw new TypeError('postgresControls: listen must be a function opening a connected pg.Client, a pg.Pool, a connected pg.Client, or false');
  let given: NotificationConnection | undefined = listen;
  return async () => {
    const connection = given;
    given = undefined;
    if (connection === undefined) throw new Error('the listening pg.Client dropped and cannot be reopened (give listen a function to reconnect); polling only');
    return connection;
  };
}
