/**
 * {@link PostgresIdempotencyStore}: `Idempotency-Key` records in PostgreSQL. The claim is one
 * `INSERT … ON CONFLICT DO UPDATE … WHERE` statement, so no interleaving of instances lets two
 * requests hold one key. A pending record names its holder's lease and when that lease ends; a
 * holder that died is replaced once its lease has ended.
 */
import {
  MAX_IDEMPOTENCY_KEY_TTL_SECONDS,
  MAX_IDEMPOTENCY_LEASE_MS,
  isJsonObject,
  numberOption,
  oneLineJson,
  optionNames,
  quote,
  rejectUnknownOptions,
} from '../internal/index.js';
import {
  type ClaimRequest,
  type ClaimResult,
  type IdempotencyStore,
  type Lease,
  type RecordedResponse,
  type StoredPaymentLink,
  toPaymentLink,
} from '../payment-links/index.js';
import { storageFailure } from './database-errors.js';
import { TABLES } from './schema.js';
import { type SqlClient, type SqlRow, checkClient, checkStatementTimeout, jsonColumn, numberColumn, queryWithin } from './sql-client.js';

/** The members of {@link PostgresIdempotencyStoreOptions}: any other is refused, naming the nearest. */
const POSTGRES_IDEMPOTENCY_STORE_OPTION_NAMES = optionNames<PostgresIdempotencyStoreOptions>({
  leaseTime: true,
  pendingWait: true,
  purgeBatch: true,
  statementTimeout: true,
});

/** Options of {@link PostgresIdempotencyStore}. */
export interface PostgresIdempotencyStoreOptions {
  /**
   * Milliseconds a pending claim is held for its request. When the instance running it dies, the
   * key can be claimed again this long after the claim. Keep it above the slowest creation.
   * @default 30000
   */
  readonly leaseTime?: number | undefined;
  /**
   * Milliseconds a request waits for another request holding its key with the same body to finish,
   * then replays its response; past this, it is answered `pending` (409 `idempotency_key_in_use`).
   * `0` answers at once.
   * @default 10000
   */
  readonly pendingWait?: number | undefined;
  /**
   * Most expired records {@link PostgresIdempotencyStore.purgeExpired} deletes in one statement.
   * @default 1000
   */
  readonly purgeBatch?: number | undefined;
  /**
   * Milliseconds each statement may take, the wait for a pooled connection included; past it
   * the call fails with `StorageUnavailableError` (503 `storage_unavailable`) and the connection is
   * destroyed. Keep it below `leaseTime`. 10 to 600 000.
   * @default 5000
   */
  readonly statementTimeout?: number | undefined;
}

const OWNER = 'PostgresIdempotencyStore';

/** The longest `leaseTime`, in milliseconds (a day). */
const MAX_LEASE_TIME = MAX_IDEMPOTENCY_LEASE_MS;

/**
 * The longest a record is kept, in milliseconds: 30 days, the longest `idempotencyKeyTtl` the
 * payment-link handler takes. The store writes no expiry later than this past the request's `now`.
 */
export const MAX_RECORD_LIFETIME = MAX_IDEMPOTENCY_KEY_TTL_SECONDS * 1000;

/**
 * How far ahead of `now` a stored lease end, and a stored expiry past {@link MAX_RECORD_LIFETIME},
 * is still honoured, in milliseconds: the longest lease, as a margin for clocks out of step. A
 * time later still was written by no store (by hand, say): it is read as passed, so the key is
 * neither held nor kept for ever.
 */
const READ_MARGIN = MAX_LEASE_TIME;

/** The expiry to write for `request`: its `expiresAt`, at most {@link MAX_RECORD_LIFETIME} past its `now`. */
export function recordExpiry(request: ClaimRequest): number {
  return Math.floor(Math.min(request.expiresAt, request.now + MAX_RECORD_LIFETIME));
}

/**
 * SQL: the record `r` has expired, or its lease ended, at `$now` (milliseconds); a time further
 * ahead than any store writes counts as passed.
 */
function passedSql(now: string): { expired: string; leaseEnded: string } {
  return {
    expired: `(r.expires_at <= ${now} OR r.expires_at > ${now} + ${MAX_RECORD_LIFETIME + READ_MARGIN})`,
    leaseEnded: `(r.lease_expires_at <= ${now} OR r.lease_expires_at > ${now} + ${MAX_LEASE_TIME + READ_MARGIN})`,
  };
}

function randomLease(): string {
  return globalThis.crypto.randomUUID();
}

/**
 * The response a completed record holds. One that names its link (written with the link by
 * `PostgresPaymentLinkStore`) has the link's own record as its body, read in the record's tenant.
 * @throws {Error} when the link it names is not stored in that tenant (deleted by hand, or a record
 *   written by hand naming another tenant's link), or when the response or the link's record is
 *   no JSON object (written by hand): nothing to replay.
 */
function recorded(row: SqlRow, request: ClaimRequest): RecordedResponse {
  const response = jsonColumn(row.response);
  if (!isJsonObject(response)) throw unreplayable(request, 'its response', response);
  if (row.names_link !== true) return response as unknown as RecordedResponse;
  // The link's own record, read as text as the response is: a JSON null stored there is not taken
  // for no link, and a JSON string is not parsed a second time (pg parses a json column itself).
  if (row.link === null || row.link === undefined) {
    throw new Error(
      `${OWNER}: the Idempotency-Key record of tenant ${quote(request.tenant)} names a payment link that is not stored in this tenant; ` +
        'it cannot be replayed (was the link deleted, or the record written, by hand?). Use a new key.',
    );
  }
  const link = jsonColumn(row.link);
  if (!isJsonObject(link)) throw unreplayable(request, 'the record of the payment link it names', link);
  const { status, headers } = response as unknown as RecordedResponse;
  return { status, headers, body: toPaymentLink(link as unknown as StoredPaymentLink) };
}

/** The refusal to replay a completed record whose `part` holds `found`, no JSON object. */
function unreplayable(request: ClaimRequest, part: string, found: unknown): Error {
  return new Error(
    `${OWNER}: the Idempotency-Key record of tenant ${quote(request.tenant)} cannot be replayed: ${part} must be a JSON object, got ${quote(oneLineJson(found))} (was it written by hand?). Use a new key.`,
  );
}

/** The claim's test of a record past its time, at `$7`. */
const CLAIMABLE = passedSql('$7');
/** The purge's, at `$1`. */
const PURGEABLE = passedSql('$1');

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A claim that found the record taken, for another look. */
const LOOK_AGAIN = Symbol('look again');

/**
 * An {@link IdempotencyStore} on PostgreSQL (run {@link migrate} first). Times are the handler's
 * clock (`ClaimRequest.now`): instances sharing a database should keep their clocks in step, to
 * well within `leaseTime`.
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  /** The client statements run on. */
  readonly db: SqlClient;
  readonly #leaseTime: number;
  readonly #pendingWait: number;
  readonly #purgeBatch: number;
  readonly #statementTimeout: number;

  /** @param db A `pg.Pool`, a `pg.Client` or PGlite. */
  constructor(db: SqlClient, options: PostgresIdempotencyStoreOptions = {}) {
    rejectUnknownOptions('PostgresIdempotencyStore', options, POSTGRES_IDEMPOTENCY_STORE_OPTION_NAMES);
    this.db = checkClient(db, OWNER);
    this.#leaseTime = numberOption(OWNER, 'leaseTime', options.leaseTime, 30_000, {
      min: 100,
      max: MAX_LEASE_TIME,
      integer: true,
      unit: 'milliseconds',
    });
    this.#pendingWait = numberOption(OWNER, 'pendingWait', options.pendingWait, 10_000, {
      min: 0,
      max: 600_000,
      integer: true,
      unit: 'milliseconds',
    });
    this.#purgeBatch = numberOption(OWNER, 'purgeBatch', options.purgeBatch, 1000, { min: 1, max: 1_000_000, integer: true });
    this.#statementTimeout = checkStatementTimeout(options.statementTimeout, OWNER);
  }

  async #query(doing: string, text: string, params: unknown[]): Promise<SqlRow[]> {
    try {
      return (await queryWithin(this.db, this.#statementTimeout, text, params)).rows;
    } catch (error) {
      throw storageFailure(error, doing);
    }
  }

  async claim(request: ClaimRequest): Promise<ClaimResult> {
    const started = Date.now();
    let pause = 10;
    for (;;) {
      const now = Math.floor(request.now) + (Date.now() - started);
      const result = await this.#claimOnce(request, now);
      if (result === LOOK_AGAIN) continue;
      const waited = Date.now() - started;
      if (result.state !== 'pending' || result.fingerprint !== request.fingerprint || waited >= this.#pendingWait) return result;
      await sleep(Math.min(pause, this.#pendingWait - waited));
      pause = Math.min(pause * 2, 200);
    }
  }

  /** One claim statement: the key's record after it, or {@link LOOK_AGAIN} when it was taken by a claim this statement could not see. */
  async #claimOnce(request: ClaimRequest, now: number): Promise<ClaimResult | typeof LOOK_AGAIN> {
    const lease = randomLease();
    const rows = await this.#query(
      'claiming an idempotency key',
      `WITH claimed AS (
         INSERT INTO ${TABLES.idempotency} AS r (tenant, key, state, fingerprint, lease, lease_expires_at, expires_at)
         VALUES ($1, $2, 'pending', $3, $4, $5, $6)
         ON CONFLICT (tenant, key) DO UPDATE
           SET state = 'pending', fingerprint = EXCLUDED.fingerprint, lease = EXCLUDED.lease,
               lease_expires_at = EXCLUDED.lease_expires_at, expires_at = EXCLUDED.expires_at, response = NULL, link_id = NULL
           WHERE ${CLAIMABLE.expired} OR (r.state = 'pending' AND ${CLAIMABLE.leaseEnded})
         RETURNING r.lease
       )
       SELECT 'claimed' AS state, NULL AS fingerprint, NULL::text AS response, lease, false AS names_link, NULL::text AS link FROM claimed
       UNION ALL
       SELECT state, fingerprint, response::text, NULL, link_id IS NOT NULL, (SELECT record::text FROM ${TABLES.links} WHERE id = link_id AND tenant = $1)
         FROM ${TABLES.idempotency}
        WHERE tenant = $1 AND key = $2 AND NOT EXISTS (SELECT 1 FROM claimed)`,
      [request.tenant, request.key, request.fingerprint, lease, now + this.#leaseTime, recordExpiry(request), now],
    );
    const row = rows[0];
    if (row === undefined) return LOOK_AGAIN;
    if (row.state === 'claimed') return { state: 'claimed', lease: { tenant: request.tenant, key: request.key, id: lease } };
    const fingerprint = String(row.fingerprint);
    if (row.state === 'completed') return { state: 'completed', fingerprint, response: recorded(row, request) };
    return { state: 'pending', fingerprint };
  }

  async complete(lease: Lease, response: RecordedResponse): Promise<void> {
    await this.#query(
      'completing an idempotency key',
      `UPDATE ${TABLES.idempotency} SET state = 'completed', response = $4, lease_expires_at = NULL
        WHERE tenant = $1 AND key = $2 AND lease = $3 AND state = 'pending'`,
      [lease.tenant, lease.key, lease.id, JSON.stringify(response)],
    );
  }

  async release(lease: Lease): Promise<void> {
    await this.#query(
      'releasing an idempotency key',
      `DELETE FROM ${TABLES.idempotency} WHERE tenant = $1 AND key = $2 AND lease = $3 AND state = 'pending'`,
      [lease.tenant, lease.key, lease.id],
    );
  }

  /**
   * Deletes up to `purgeBatch` records that have expired at `now` (completed ones, and pending
   * ones whose lease ended too, or that name no lease end: written by hand), in one statement;
   * resolves how many. Call it now and then (every minute, say); a result equal to `purgeBatch`
   * means more are left.
   * @param now Milliseconds since the epoch. @default Date.now()
   * @throws {TypeError} naming `now` when it is not a time from 0 on.
   */
  async purgeExpired(now: number = Date.now()): Promise<number> {
    numberOption(`${OWNER}.purgeExpired`, 'now', now, 0, { min: 0, max: Number.MAX_SAFE_INTEGER, unit: 'milliseconds since the epoch' });
    const rows = await this.#query(
      'purging idempotency keys',
      `WITH gone AS (
         DELETE FROM ${TABLES.idempotency} WHERE ctid IN (
           SELECT ctid FROM ${TABLES.idempotency} AS r
            WHERE ${PURGEABLE.expired} AND (r.state = 'completed' OR r.lease_expires_at IS NULL OR ${PURGEABLE.leaseEnded})
            LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING 1)
       SELECT count(*)::int AS purged FROM gone`,
      [Math.floor(now), this.#purgeBatch],
    );
    return numberColumn(rows[0]?.purged ?? 0);
  }
}
