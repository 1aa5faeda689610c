/**
 * Following a table from every instance: a channel of the instance's listener (one `LISTEN`
 * connection with a heartbeat, shared by every follower), a read on a notification that names a
 * change past the one applied (at most one every 250 ms), a poll every `pollInterval` as the
 * fallback, a read after the listener reconnects, a retry with doubling delay after a failed
 * read, a stall reported once and its end once. The operator controls and the PostgreSQL issuer
 * registry both follow their table with it; what a read does is theirs.
 */
import { describeValue, functionOption, numberOption } from '../internal/index.js';
import type { NotificationSource } from './notification-connection.js';
import { NotificationListener, type PostgresListener } from './notification-listener.js';
import { type SqlClient, checkStatementTimeout } from './sql-client.js';
import { ClosedError, calledAfterClose } from './closed-error.js';
import { oneLine, shielded } from './hook.js';

/** How an instance follows a table: shared by `postgresControls` and `postgresRegistry`. */
export interface FollowOptions {
  /**
   * How it hears of changes: the instance's listener (what `postgresListener()` returns, shared
   * with its other followers: one `LISTEN` connection for all); or a function resolving a new
   * connected `pg.Client` (or a client checked out of a pool) at each call, called again after a
   * drop, for a connection of its own; `false` to poll only. A connection of its own is ended (or
   * released, destroyed) when it drops and by `close()`; a shared listener is the caller's to close.
   * @default a connection of its own: `() => db.connect()` when `db` is a `pg.Pool` (one
   * connection kept out of it while listening); PGlite's own `listen()`; otherwise polling only
   */
  readonly listen?: PostgresListener | NotificationSource | false | undefined;
  /**
   * Milliseconds between reads of the table: with `statementTimeout`, the longest a missed
   * notification delays a change. 100 to 600 000.
   * @default 5000
   */
  readonly pollInterval?: number | undefined;
  /**
   * Milliseconds before reading again after a read failed, and (with a connection of its own)
   * before listening again after the connection dropped; doubled at each failure, up to
   * `pollInterval`. 10 to 60 000.
   * @default 250
   */
  readonly reconnectDelay?: number | undefined;
  /**
   * Milliseconds each read, write, `LISTEN` and heartbeat may take, the wait for a pooled
   * connection included; past it the connection is destroyed. 10 to 600 000.
   * @default 5000
   */
  readonly statementTimeout?: number | undefined;
  /**
   * Milliseconds between heartbeats (`SELECT 1`) on a `LISTEN` connection of its own. One that
   * gets no answer within `statementTimeout` replaces the connection. 100 to 600 000. Not with a
   * shared listener (the listener's own).
   * @default 5000
   */
  readonly heartbeatInterval?: number | undefined;
}

/** What a follower does, and whom it tells. */
export interface FollowerHooks {
  /** Names the caller in option errors (`postgresControls`). */
  readonly owner: string;
  /** The `NOTIFY` channel of the table. */
  readonly channel: string;
  /** Reads the table and applies what changed; each statement bounded by the follower's `timeout`. */
  readonly read: () => Promise<void>;
  /**
   * `true` when a notification's payload names a change past the one applied, so that it is worth
   * a read; anything else (a change applied already, a payload that names none) is ignored. Any
   * role may `NOTIFY`: the payload is hostile.
   * @default every notification is worth a read
   */
  readonly wants?: (payload: string | undefined) => boolean;
  /** The first failure after a success (a read, a heartbeat, a reconnection), once per stall. */
  readonly onStall: (error: unknown) => void;
  /** The background work succeeds again after a stall (listening again too, when it listens). */
  readonly onRecovered: () => void;
}

/**
 * The least time from the start of one read to a read a notification asks for, in milliseconds:
 * notifications coming faster are served by one read at the end of the spacing, so a flood of
 * them (any role may `NOTIFY`) costs at most four reads a second.
 */
export const NOTIFIED_READ_SPACING = 250;

/** The change id a notification's payload names: a whole number of at most 15 digits, else `undefined`. */
export function notifiedId(payload: string | undefined): number | undefined {
  return payload !== undefined && /^[0-9]{1,15}$/.test(payload) ? Number(payload) : undefined;
}

/** Follows one table: listens, polls, retries, reports stalls. */
export class TableFollower {
  /** Milliseconds each statement may take (`statementTimeout`). */
  readonly timeout: number;
  readonly #hooks: FollowerHooks;
  /** Where notifications come from; `undefined` when polling only. */
  readonly #listener: NotificationListener | undefined;
  /** `true` when the listener is this follower's own (closed with it). */
  readonly #ownsListener: boolean;
  readonly #pollInterval: number;
  readonly #reconnectDelay: number;
  /** Stops listening on the channel; `null` while not listening on it. */
  #unlisten: (() => Promise<void>) | null = null;
  #timers: ReturnType<typeof setInterval>[] = [];
  #retry: ReturnType<typeof setTimeout> | undefined;
  #delay: number;
  #closed = false;
  #started = false;
  #stalled = false;
  #reading: Promise<void> | null = null;
  #again: Promise<void> | null = null;
  /** When the last read started (ms), and the read a notification asked for while spacing. */
  #lastRead = Number.NEGATIVE_INFINITY;
  #spaced: ReturnType<typeof setTimeout> | undefined;

  /** Checks the options (a `TypeError` naming a bad one); starts nothing. */
  constructor(db: SqlClient, options: FollowOptions, hooks: FollowerHooks) {
    const { owner } = hooks;
    this.#hooks = hooks;
    this.#pollInterval = numberOption(owner, 'pollInterval', options.pollInterval, 5000, {
      min: 100,
      max: 600_000,
      integer: true,
      unit: 'milliseconds',
    });
    this.#reconnectDelay = numberOption(owner, 'reconnectDelay', options.reconnectDelay, 250, {
      min: 10,
      max: 60_000,
      integer: true,
      unit: 'milliseconds',
    });
    this.timeout = checkStatementTimeout(options.statementTimeout, owner);
    this.#delay = this.#reconnectDelay;
    const { listen } = options;
    if (listen instanceof NotificationListener) {
      if (options.heartbeatInterval !== undefined) {
        throw new TypeError(
          `${owner}: heartbeatInterval must be left out with a shared listener, got ${describeValue(options.heartbeatInterval)}: it is the listener's, give it to postgresListener()`,
        );
      }
      this.#listener = listen.canListen ? listen : undefined;
      this.#ownsListener = false;
    } else if (typeof listen === 'object' && listen !== null) {
      throw new TypeError(
        `${owner}: listen must be what postgresListener() returns, a function opening a connection (such as () => pool.connect()), or false; got ${describeValue(listen)}, not a postgresListener()`,
      );
    } else {
      const own = new NotificationListener(
        db,
        {
          ...(listen === undefined ? {} : { listen: listen as NotificationSource | false }),
          heartbeatInterval: options.heartbeatInterval,
          statementTimeout: this.timeout,
          reconnectDelay: this.#reconnectDelay,
          maxReconnectDelay: this.#pollInterval,
        },
        owner,
      );
      this.#listener = own.canListen ? own : undefined;
      this.#ownsListener = true;
    }
  }

  /** `true` while the `LISTEN` connection is up, listening on the table's channel. */
  get listening(): boolean {
    return this.#unlisten !== null && (this.#listener?.listening ?? false);
  }

  /** `true` from a stall reported until its recovery. */
  get stalled(): boolean {
    return this.#stalled;
  }

  /**
   * Listens, reads once, then polls. Rejects (and closes) when the first `LISTEN` or read fails,
   * or `close()` is called meanwhile (a {@link ClosedError}); rejects, starting nothing, when
   * called a second time or after `close()` (a {@link ClosedError}).
   */
  async start(): Promise<void> {
    const { owner } = this.#hooks;
    if (this.#closed) throw new ClosedError(owner, 'it cannot start again (make a new one)');
    if (this.#started) throw new Error(`${owner}: start() was called already; call it once`);
    this.#started = true;
    const closedMeanwhile = (): void => {
      if (this.#closed) throw new ClosedError(owner, 'close() was called while it started');
    };
    try {
      await this.#listen();
      closedMeanwhile();
      await this.reload();
      closedMeanwhile();
    } catch (error) {
      // Closed meanwhile included: a channel listened on since is left, and nothing polls.
      await this.close();
      throw error;
    }
    this.every(this.#pollInterval, () => this.#background());
  }

  /** Runs `work` every `ms` milliseconds until `close()`; the timer keeps no process alive. */
  every(ms: number, work: () => void): void {
    if (this.#closed) return;
    const timer = setInterval(work, ms);
    timer.unref?.();
    this.#timers.push(timer);
  }

  /** A stall: reported once, until the work succeeds again. */
  stall(error: unknown): void {
    if (this.#closed || this.#stalled) return;
    this.#stalled = true;
    this.#hooks.onStall(error);
  }

  /** Background work succeeded: a stall, if any, is over once listening is back too. */
  #working(): void {
    if (!this.#stalled || (this.#listener?.dropsConnections === true && !this.listening)) return;
    this.#stalled = false;
    this.#hooks.onRecovered();
  }

  #background(): void {
    this.reload().then(
      () => this.#working(),
      (error: unknown) => {
        this.stall(error);
        this.#scheduleRetry();
      },
    );
  }

  /**
   * A notification: read if it names a change past the one applied, at most once per
   * {@link NOTIFIED_READ_SPACING} from the start of the last read (later ones within it share one).
   */
  #notified(payload: string | undefined): void {
    if (this.#closed || this.#spaced !== undefined || !(this.#hooks.wants?.(payload) ?? true)) return;
    const wait = this.#lastRead + NOTIFIED_READ_SPACING - Date.now();
    if (wait <= 0) {
      this.#background();
      return;
    }
    this.#spaced = setTimeout(() => {
      this.#spaced = undefined;
      this.#background();
    }, wait);
    this.#spaced.unref?.();
  }

  async #listen(): Promise<void> {
    if (this.#listener === undefined) return;
    this.#unlisten = await this.#listener.listen(
      this.#hooks.channel,
      (payload) => this.#notified(payload),
      () => this.#background(),
      (error) => this.stall(error),
    );
  }

  /** Reads again after the current delay (doubled for the next failure). */
  #scheduleRetry(): void {
    if (this.#closed || this.#retry !== undefined) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.#recover();
    }, this.#delay);
    this.#retry.unref?.();
    this.#delay = Math.min(this.#delay * 2, this.#pollInterval);
  }

  async #recover(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.reload();
      this.#delay = this.#reconnectDelay;
      this.#working();
    } catch (error) {
      this.stall(error);
      this.#scheduleRetry();
    }
  }

  /**
   * Reads now. One read runs at a time; calls made while one runs share one read after it (a row
   * committed during a read may be missed by it). After `close()` nothing is read: the call
   * rejects with a {@link ClosedError} naming `call`, the caller's method.
   */
  reload(call = 'reload()'): Promise<void> {
    if (this.#closed) return Promise.reject(calledAfterClose(this.#hooks.owner, call));
    if (this.#reading === null) {
      this.#lastRead = Date.now();
      this.#reading = this.#hooks.read().finally(() => {
        this.#reading = null;
      });
      return this.#reading;
    }
    if (this.#again === null) {
      this.#again = this.#reading
        .catch(() => undefined)
        .then(() => {
          this.#again = null;
          return this.reload(call);
        });
    }
    return this.#again;
  }

  /** Throws a {@link ClosedError} naming `call` after `close()`: for what would do work later. */
  refuseClosed(call: string): void {
    if (this.#closed) throw calledAfterClose(this.#hooks.owner, call);
  }

  /** `true` once `close()` was called: a read that ends after it applies nothing. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Stops listening, polling and retrying, and resolves once a read in flight has ended (within its
   * `statementTimeout`): nothing it writes lands after `close()`.
   */
  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
    clearTimeout(this.#retry);
    clearTimeout(this.#spaced);
    this.#spaced = undefined;
    const unlisten = this.#unlisten;
    this.#unlisten = null;
    await unlisten?.();
    if (this.#ownsListener) await this.#listener?.close();
    await this.#reading?.catch(() => undefined);
  }
}

/** What a {@link poller} takes: its work, its interval, and whom it tells. */
export interface PollerSettings {
  /** Names the caller in option errors and starts its log lines. */
  readonly owner: string;
  readonly logPrefix: string;
  /** Milliseconds between runs of `work`. */
  readonly interval: number;
  /** Milliseconds each statement may take. @default 5000 */
  readonly statementTimeout?: number | undefined;
  /** Each stall, once. @default one line to console.error */
  readonly onError?: ((error: unknown) => void) | undefined;
  /** The end of a stall. @default one line to console.error when `onError` is not given either */
  readonly onRecovered?: (() => void) | undefined;
  /** One run; each statement bounded by the follower's `timeout`. */
  readonly work: () => Promise<void>;
}

/**
 * A follower that only polls (the key history's flushes, the heartbeats): `work` every
 * `interval`, retried on failure, each stall reported once; and the `onError` it reports to.
 */
export function poller(db: SqlClient, settings: PollerSettings): { follower: TableFollower; onError: (error: unknown) => void } {
  const { owner, logPrefix } = settings;
  functionOption(owner, 'onError', settings.onError);
  functionOption(owner, 'onRecovered', settings.onRecovered);
  const onError = shielded(settings.onError ?? ((error: unknown) => console.error(`${logPrefix} ${oneLine(error)} (retrying)`)));
  const onRecovered = shielded(
    settings.onRecovered ??
      (settings.onError === undefined ? () => console.error(`${logPrefix} the database answers again`) : () => undefined),
  );
  const follower = new TableFollower(
    db,
    {
      listen: false,
      pollInterval: settings.interval,
      ...(settings.statementTimeout === undefined ? {} : { statementTimeout: settings.statementTimeout }),
    },
    { owner, channel: '', read: settings.work, onStall: onError, onRecovered },
  );
  return { follower, onError };
}
