/**
 * {@link PostgresDirectory}: the payment-link handler's directory (departments, stores, shoppers,
 * payment methods) in PostgreSQL, so that every instance, and every restart, resolves a reference
 * to the same UUID.
 */
import { oneLineJson, optionNames, quote, rejectUnknownOptions } from '../internal/index.js';
import {
  type Department,
  type Directory,
  InMemoryDirectory,
  type PaymentMethodSettings,
  type Shopper,
  type Store,
  type TenantSeed,
} from '../payment-links/index.js';
import { ConfigurationError, parseTenantErn } from '../index.js';
import { storageFailure } from './database-errors.js';
import { DirectoryCache } from './directory-cache.js';
import { TABLES } from './schema.js';
import { type SqlClient, type SqlRow, checkClient, checkStatementTimeout, inTransaction, jsonColumn, queryWithin } from './sql-client.js';
import type { FollowOptions } from './table-follower.js';

/** The members of {@link PostgresDirectoryOptions}: any other is refused, naming the nearest. */
const POSTGRES_DIRECTORY_OPTION_NAMES = optionNames<PostgresDirectoryOptions>({
  cacheSize: true,
  statementTimeout: true,
  listen: true,
  pollInterval: true,
  reconnectDelay: true,
  heartbeatInterval: true,
});

const OWNER = 'PostgresDirectory';

/**
 * Options of {@link PostgresDirectory}. `listen`, `pollInterval`, `reconnectDelay` and
 * `heartbeatInterval` govern the notifications that empty its cache once
 * {@link PostgresDirectory.start} was called. Here `pollInterval` is how often the whole cache
 * is emptied whatever the notifications (default 60 000 ms): a lost notification cannot keep an
 * answer longer; a connection gone silent is found by the heartbeat sooner.
 */
export interface PostgresDirectoryOptions extends FollowOptions {
  /**
   * Milliseconds between two emptyings of the whole cache, whatever the notifications: a lost
   * notification cannot keep an answer longer. 100 to 600 000.
   * @default 60000
   */
  readonly pollInterval?: number | undefined;
  /**
   * Most answers (a tenant's payment methods, a department, a store, a shopper's UUID) kept in the
   * process once {@link PostgresDirectory.start} was called; the least recently used go first.
   * 1 to 10 000 000.
   * @default 10000
   */
  readonly cacheSize?: number | undefined;
  /**
   * Milliseconds each lookup may take, the wait for a pooled connection included; past it the
   * request is answered 503 `storage_unavailable` and the connection is destroyed. The same bound
   * holds each statement of {@link PostgresDirectory.seed} on a pool: past it the connection is
   * destroyed, nothing is committed, and `seed()` rejects with a `StorageUnavailableError`.
   * 10 to 600 000.
   * @default 5000
   */
  readonly statementTimeout?: number | undefined;
}

function randomUuid(): string {
  return globalThis.crypto.randomUUID();
}

/** A tenant with no row: no method configured. */
const NO_METHODS: PaymentMethodSettings = Object.freeze({ allowed: Object.freeze([]), blocked: Object.freeze([]) });

/** A JSON column's value, or `undefined` when it is text that is no JSON. */
function parsedJson(value: unknown): unknown {
  try {
    return jsonColumn(value);
  } catch {
    return undefined;
  }
}

/**
 * A tenant row's `allowed_methods` or `blocked_methods`: a JSON array of non-empty codes, as
 * `seed` writes it. Anything else (a row written by hand) fails that tenant's links as a
 * configuration error rather than reading as `[]`: a blocked list misread would offer the methods
 * it blocks. Other tenants are not affected.
 */
function codes(value: unknown, tenant: string, column: string): readonly string[] {
  const parsed = parsedJson(value);
  if (Array.isArray(parsed) && parsed.every((code) => typeof code === 'string' && code !== '')) return Object.freeze([...parsed]);
  const found = parsed === undefined ? quote(String(value)) : quote(oneLineJson(parsed));
  throw new ConfigurationError(
    `${OWNER}: tenant ${quote(tenant)}: ${column} holds ${found}, expected a JSON array of payment-method codes such as ["visa","mc"]; seed the tenant again or correct the row`,
  );
}

/**
 * A {@link Directory} on PostgreSQL (run `migrate(db, { only: 'directory' })` first).
 * {@link PostgresDirectory.seed} writes the tenants' configuration; a reference seeded without a
 * UUID gets one at its first seeding, kept by every later one. A shopper first seen by a request
 * is registered with one statement that every instance agrees on: two instances seeing a new
 * customer at once return the same UUID.
 *
 * After {@link PostgresDirectory.start}, answers are kept in the process (at most `cacheSize`)
 * and a link costs no directory read: a trigger notifies every instance of each change to the
 * tenants, stores and departments (seeded or written by hand) and of a shopper's UUID changed or
 * removed, and each instance empties its cache then (within about 250 ms), and at each poll. While
 * the `LISTEN` connection is down, every lookup reads the database. Without `start()` every
 * lookup reads.
 *
 * @example
 * ```ts
 * const directory = new PostgresDirectory(pool);
 * await directory.seed(tenants);   // at every start of every instance: idempotent
 * await directory.start();         // cache, emptied on every change; directory.close() at shutdown
 * const createLink = createPaymentLinkHandler({ payPageUrl, directory, store, idempotency });
 * ```
 */
export class PostgresDirectory implements Directory {
  readonly #db: SqlClient;
  readonly #statementTimeout: number;
  readonly #cache: DirectoryCache;

  /** @param db A `pg.Pool`, a `pg.Client` or PGlite. */
  constructor(db: SqlClient, options: PostgresDirectoryOptions = {}) {
    rejectUnknownOptions('PostgresDirectory', options, POSTGRES_DIRECTORY_OPTION_NAMES);
    this.#db = checkClient(db, OWNER);
    this.#statementTimeout = checkStatementTimeout(options.statementTimeout, OWNER);
    this.#cache = new DirectoryCache(db, { ...options, owner: OWNER, maxEntries: options.cacheSize });
  }

  /**
   * Listens for the directory's changes (by default on a connection kept out of the pool; PGlite's
   * own `listen()`) and keeps answers from then on. A `pg.Client` without `listen` keeps none.
   * @throws the error of the first `LISTEN` (a `StatementTimeoutError` past `statementTimeout`); nothing is kept then.
   * @throws {Error} when called a second time, or after {@link PostgresDirectory.close}.
   */
  async start(): Promise<void> {
    await this.#cache.start();
  }

  /** Stops listening and forgets what was kept; lookups read the database from then on. */
  async close(): Promise<void> {
    await this.#cache.close();
  }

  /** `true` while answers are kept: started, and the `LISTEN` connection up. */
  get caching(): boolean {
    return this.#cache.trusted;
  }

  async #query(doing: string, text: string, params: unknown[]): Promise<SqlRow[]> {
    try {
      return (await queryWithin(this.#db, this.#statementTimeout, text, params)).rows;
    } catch (error) {
      throw storageFailure(error, doing);
    }
  }

  /**
   * Writes `tenants` (checked as `InMemoryDirectory` checks them), in one transaction: payment
   * methods, stores (by position; the first is the default), departments and shoppers. A UUID
   * given replaces the one stored; one left out keeps the stored one, or is drawn once.
   * Concurrent seedings from several instances agree.
   * @throws {TypeError} naming the seed entry at fault. @throws {StorageUnavailableError} when the
   * database cannot be reached, or a statement got no answer within `statementTimeout` (its
   * `cause` is then the `StatementTimeoutError`); nothing was committed.
   */
  async seed(tenants: readonly TenantSeed[]): Promise<void> {
    new InMemoryDirectory(tenants);
    try {
      await inTransaction(this.#db, this.#statementTimeout, async (session) => {
        for (const seed of tenants) {
          const tenant = parseTenantErn(seed.tenant).ern;
          await session.query(
            `INSERT INTO ${TABLES.tenants} (tenant, allowed_methods, blocked_methods) VALUES ($1, $2, $3)
             ON CONFLICT (tenant) DO UPDATE SET allowed_methods = EXCLUDED.allowed_methods, blocked_methods = EXCLUDED.blocked_methods`,
            [tenant, JSON.stringify(seed.paymentMethods?.allowed ?? []), JSON.stringify(seed.paymentMethods?.blocked ?? [])],
          );
          const stores = seed.stores ?? [];
          if (stores.length > 0) {
            // The seed's order is the stores' order (the first is the default), whatever it was:
            // the stored ones step aside (negative positions), the seeded ones take 0, 1, …, and
            // those no longer seeded follow them in their order.
            await session.query(`UPDATE ${TABLES.stores} SET position = -1 - position WHERE tenant = $1`, [tenant]);
            for (const [position, store] of stores.entries()) {
              await session.query(
                `INSERT INTO ${TABLES.stores} (tenant, id, name, position) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (tenant, id) DO UPDATE SET name = EXCLUDED.name, position = EXCLUDED.position`,
                [tenant, store.id.toLowerCase(), store.name ?? `Store ${position + 1}`, position],
              );
            }
            await session.query(
              `UPDATE ${TABLES.stores} kept SET position = $2 + aside.rank - 1
                 FROM (SELECT id, row_number() OVER (ORDER BY position DESC) AS rank FROM ${TABLES.stores} WHERE tenant = $1 AND position < 0) aside
                WHERE kept.tenant = $1 AND kept.id = aside.id`,
              [tenant, stores.length],
            );
          }
          for (const department of seed.departments ?? []) {
            await session.query(
              `INSERT INTO ${TABLES.departments} (tenant, ref, id, store_id) VALUES ($1, $2, $3, $4)
               ON CONFLICT (tenant, ref) DO UPDATE SET store_id = EXCLUDED.store_id${department.id === undefined ? '' : ', id = EXCLUDED.id'}`,
              [tenant, department.ref, department.id?.toLowerCase() ?? randomUuid(), department.store?.toLowerCase() ?? null],
            );
          }
          for (const shopper of seed.shoppers ?? []) {
            await session.query(
              `INSERT INTO ${TABLES.shoppers} (tenant, ref, id) VALUES ($1, $2, $3) ON CONFLICT (tenant, ref) DO ${shopper.id === undefined ? 'NOTHING' : 'UPDATE SET id = EXCLUDED.id'}`,
              [tenant, shopper.ref, shopper.id?.toLowerCase() ?? randomUuid()],
            );
          }
        }
      });
    } catch (error) {
      throw storageFailure(error, 'seeding the directory');
    }
  }

  async findDepartment(tenant: string, ref: string): Promise<Department | null> {
    return this.#cache.get(`d\u0000${tenant}\u0000${ref}`, async () => {
      const rows = await this.#query(
        'reading a department',
        `SELECT id, store_id FROM ${TABLES.departments} WHERE tenant = $1 AND ref = $2`,
        [tenant, ref],
      );
      const row = rows[0];
      if (row === undefined) return null;
      return Object.freeze({ ref, id: String(row.id), storeId: row.store_id === null ? null : String(row.store_id) });
    });
  }

  async storeFor(tenant: string, department: Department): Promise<Store | null> {
    return this.#cache.get(`s\u0000${tenant}\u0000${department.storeId ?? ''}`, async () => {
      const rows =
        department.storeId === null
          ? await this.#query('reading a store', `SELECT id, name FROM ${TABLES.stores} WHERE tenant = $1 ORDER BY position LIMIT 1`, [
              tenant,
            ])
          : await this.#query('reading a store', `SELECT id, name FROM ${TABLES.stores} WHERE tenant = $1 AND id = $2`, [
              tenant,
              department.storeId,
            ]);
      const row = rows[0];
      return row === undefined ? null : Object.freeze({ id: String(row.id), name: String(row.name) });
    });
  }

  /**
   * The shopper `ref` of `tenant`; a new one is registered with `newId`. One statement reads or
   * registers it (`INSERT … ON CONFLICT DO NOTHING`, else the stored row): an instance that loses
   * the race reads the winner's UUID.
   */
  async resolveShopper(tenant: string, ref: string, newId: string): Promise<Shopper> {
    const shopper = await this.#cache.get(`c\u0000${tenant}\u0000${ref}`, async () => {
      // A registration still uncommitted when this statement began is not seen by its read; look again.
      for (let attempt = 0; attempt < 3; attempt++) {
        const rows = await this.#query(
          'registering a shopper',
          `WITH registered AS (
             INSERT INTO ${TABLES.shoppers} (tenant, ref, id) VALUES ($1, $2, $3) ON CONFLICT (tenant, ref) DO NOTHING RETURNING id
           )
           SELECT id FROM registered UNION ALL SELECT id FROM ${TABLES.shoppers} WHERE tenant = $1 AND ref = $2`,
          [tenant, ref, newId],
        );
        if (rows[0] !== undefined) return Object.freeze({ ref, id: String(rows[0].id) });
      }
      return null;
    });
    if (shopper === null) {
      throw new Error(`${OWNER}: a shopper was neither registered nor found after 3 attempts (registrations racing it); retry the request`);
    }
    return shopper;
  }

  async paymentMethods(tenant: string): Promise<PaymentMethodSettings> {
    const settings = await this.#cache.get(`m\u0000${tenant}`, async () => {
      const rows = await this.#query(
        'reading payment methods',
        `SELECT allowed_methods, blocked_methods FROM ${TABLES.tenants} WHERE tenant = $1`,
        [tenant],
      );
      const row = rows[0];
      if (row === undefined) return NO_METHODS;
      return Object.freeze({
        allowed: codes(row.allowed_methods, tenant, 'allowed_methods'),
        blocked: codes(row.blocked_methods, tenant, 'blocked_methods'),
      });
    });
    return settings as PaymentMethodSettings;
  }
}
