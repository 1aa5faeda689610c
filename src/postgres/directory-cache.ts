/**
 * The in-process cache of `PostgresDirectory`: answers kept per key (a tenant's payment methods,
 * a department, a store, a shopper's UUID), at most `maxEntries` of them (least recently used go
 * first), emptied by the directory's `NOTIFY` and by each poll.
 *
 * Trusted only while the `LISTEN` connection is up: while it is down (or not opened yet, or
 * closed) every lookup reads the database and nothing is kept; a new connection empties the
 * cache before it listens, so nothing kept before a drop outlives it. An answer read while the
 * cache was emptied is not kept either, so a read that raced a change cannot bring it back.
 * This is the one place the directory listens.
 */
import { LRUCache } from 'lru-cache';
import { numberOption } from '../internal/index.js';
import { type NotificationSource, isInProcessListener, notificationSource } from './notification-connection.js';
import { NotificationListener } from './notification-listener.js';
import { DIRECTORY_CHANNEL } from './schema-names.js';
import type { SqlClient } from './sql-client.js';
import { type FollowOptions, TableFollower } from './table-follower.js';

/** What the cache is told at its creation. */
export interface DirectoryCacheSettings extends FollowOptions {
  /** Most answers kept. @default 10000 */
  readonly maxEntries: number | undefined;
  /** Names the owner in option errors. */
  readonly owner: string;
}

function checkSize(owner: string, value: unknown): number {
  return numberOption(owner, 'cacheSize', value, 10_000, { min: 1, max: 10_000_000, integer: true, unit: 'answers' });
}

/** Answers of the directory kept in the process, while a notification can empty them. */
export class DirectoryCache {
  readonly #entries: LRUCache<string, object>;
  readonly #follower: TableFollower;
  /** Counts the emptyings: an answer read across one is not kept. */
  #generation = 0;
  #started = false;

  /** Checks the options (a `TypeError` naming a bad one); listens only from {@link DirectoryCache.start}. */
  constructor(db: SqlClient, settings: DirectoryCacheSettings) {
    const { owner } = settings;
    this.#entries = new LRUCache({ max: checkSize(owner, settings.maxEntries) });
    // A shared listener (postgresFollowers's): a drop is a stall, which empties the cache.
    const shared = settings.listen instanceof NotificationListener ? settings.listen : undefined;
    const inProcess = shared === undefined && settings.listen === undefined && isInProcessListener(db);
    const source =
      shared !== undefined || inProcess
        ? undefined
        : notificationSource(settings.listen as NotificationSource | false | undefined, db, owner);
    const listen = shared ?? (source === undefined ? (inProcess ? undefined : false) : this.#emptiedFirst(source));
    this.#follower = new TableFollower(
      db,
      // `??`, not a default spread first: a `pollInterval: undefined` given keeps the default too.
      { ...settings, pollInterval: settings.pollInterval ?? 60_000, listen },
      {
        owner,
        channel: DIRECTORY_CHANNEL,
        read: async () => this.#empty(),
        onStall: () => this.#empty(),
        onRecovered: () => undefined,
      },
    );
  }

  /** Each new `LISTEN` connection empties the cache before it is used: changes missed while down are not trusted. */
  #emptiedFirst(source: NotificationSource): NotificationSource {
    return () => {
      this.#empty();
      return source();
    };
  }

  #empty(): void {
    this.#generation += 1;
    this.#entries.clear();
  }

  /** `true` while answers may be kept and given: started, not closed, listening. */
  get trusted(): boolean {
    return this.#started && !this.#follower.closed && this.#follower.listening;
  }

  /** Listens on the directory's channel; rejects when the first `LISTEN` fails. */
  async start(): Promise<void> {
    await this.#follower.start();
    this.#started = true;
  }

  /** Stops listening; every lookup reads from then on. */
  async close(): Promise<void> {
    this.#empty();
    await this.#follower.close();
  }

  /**
   * The answer kept for `key`, else `read()`'s, kept when not `null` and the cache was trusted
   * and not emptied while it was read.
   */
  async get<T extends object>(key: string, read: () => Promise<T | null>): Promise<T | null> {
    const trusted = this.trusted;
    if (trusted) {
      const kept = this.#entries.get(key);
      if (kept !== undefined) return kept as T;
    }
    const generation = this.#generation;
    const value = await read();
    if (value !== null && trusted && this.trusted && generation === this.#generation) this.#entries.set(key, value);
    return value;
  }
}
