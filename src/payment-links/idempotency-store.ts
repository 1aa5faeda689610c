/**
 * Idempotency records: `Idempotency-Key` → the body's fingerprint and the first response. Keys
 * are per tenant. A database implements {@link IdempotencyStore} with one atomic
 * insert-if-absent (`claim`) and two updates.
 */
import { MAX_IDEMPOTENCY_LEASE_MS, describeValue, numberOption, rejectUnknownOptions, optionNames } from '../internal/index.js';

/** The members of {@link InMemoryIdempotencyStoreOptions}: any other is refused, naming the nearest. */
const IN_MEMORY_IDEMPOTENCY_STORE_OPTION_NAMES = optionNames<InMemoryIdempotencyStoreOptions>({
  leaseTime: true,
  maxRecords: true,
  maxRecordsPerTenant: true,
  pendingWait: true,
});

/** A response as recorded for replay: JSON-safe. */
export interface RecordedResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

/** What {@link IdempotencyStore.claim} is asked to do. */
export interface ClaimRequest {
  /** The caller's tenant ERN: keys of different tenants never meet. */
  readonly tenant: string;
  readonly key: string;
  /** SHA-256 of the request body (hex), to tell a replay from a reuse. */
  readonly fingerprint: string;
  /** Now, in milliseconds since the epoch (the handler's clock). */
  readonly now: number;
  /** When the record may be forgotten, in milliseconds since the epoch. */
  readonly expiresAt: number;
}

/** The outcome of {@link IdempotencyStore.claim}. */
export type ClaimResult =
  /** The key was free (or expired) and is now held, pending, by this request, under `lease`. */
  | { readonly state: 'claimed'; readonly lease: Lease }
  /** A request with this key completed: replay `response` when `fingerprint` matches. */
  | { readonly state: 'completed'; readonly fingerprint: string; readonly response: RecordedResponse }
  /** Another request with this key is still running. */
  | { readonly state: 'pending'; readonly fingerprint: string };

/** Proof of a claim: {@link IdempotencyStore.complete} and `release` act only on the record it names. */
export interface Lease {
  readonly tenant: string;
  readonly key: string;
  /** Unique per claim; a record claimed again after expiry has another. */
  readonly id: string;
}

/** Raised when a store cannot take another key (answered 503 `idempotency_unavailable`). */
export class IdempotencyCapacityError extends Error {
  override readonly name = 'IdempotencyCapacityError';
  readonly code = 'idempotency_capacity' as const;
}

/** Storage of idempotency records. */
export interface IdempotencyStore {
  /**
   * Atomically: when no live record holds `key` for `tenant`, creates a pending one and answers
   * `claimed`; otherwise answers the record's state. A record is live until its `expiresAt`; a
   * pending one, only while its holder's lease lasts too (both stores': `leaseTime`). A store may wait for a pending record with
   * the same fingerprint to settle before answering (the in-memory store does, for at most its
   * `pendingWait`).
   */
  claim(request: ClaimRequest): Promise<ClaimResult>;
  /** Marks the record held by `lease` completed, with the response to replay; a no-op when the lease was lost. */
  complete(lease: Lease, response: RecordedResponse): Promise<void>;
  /** Forgets the record held by `lease` (the request created nothing); a no-op when the lease was lost. */
  release(lease: Lease): Promise<void>;
}

/** Options of {@link InMemoryIdempotencyStore}. */
export interface InMemoryIdempotencyStoreOptions {
  /**
   * Milliseconds a pending claim is held for its request, on the handler's clock
   * (`ClaimRequest.now`), as by `PostgresIdempotencyStore`: once it has passed, a request with the
   * key takes it over (a request that hangs holds its key this long, not for the key's whole
   * lifetime), and the first request's `complete` and `release` do nothing. With
   * `InMemoryPaymentLinkStore`, a first request that resumes after losing its lease stores no link
   * (409 `idempotency_key_in_use`). Keep it above the slowest creation. 100 to 86 400 000.
   * @default 30000
   */
  readonly leaseTime?: number | undefined;
  /**
   * Most live records (pending and completed, all tenants); a new key beyond it is refused with
   * {@link IdempotencyCapacityError} rather than forgetting a live key early.
   * @default 100000
   */
  readonly maxRecords?: number | undefined;
  /**
   * Most live records of one tenant; a new key of a tenant holding this many is refused with
   * {@link IdempotencyCapacityError} (503 `idempotency_unavailable` for that tenant only). Below
   * `maxRecords`, one tenant creating links with a new key each cannot fill the store and refuse
   * every other tenant's keys. 1 to `maxRecords`.
   * @default maxRecords (no limit of its own)
   */
  readonly maxRecordsPerTenant?: number | undefined;
  /**
   * Milliseconds a request waits for another request holding its key with the same body to finish,
   * then replays its response; past this, it is answered `pending` (409 `idempotency_key_in_use`,
   * `Retry-After: 1`), as by `PostgresIdempotencyStore`. `0` answers at once. 0 to 600 000.
   * @default 10000
   */
  readonly pendingWait?: number | undefined;
}

interface PendingRecord {
  readonly state: 'pending';
  readonly tenant: string;
  readonly lease: string;
  /** When the lease ends and the key may be taken over, in milliseconds since the epoch. */
  readonly leaseExpiresAt: number;
  readonly fingerprint: string;
  readonly expiresAt: number;
  readonly settled: Promise<void>;
  readonly settle: () => void;
}

interface CompletedRecord {
  readonly state: 'completed';
  readonly tenant: string;
  readonly fingerprint: string;
  readonly expiresAt: number;
  readonly response: RecordedResponse;
}

type IdempotencyRecord = PendingRecord | CompletedRecord;

function pending(tenant: string, lease: string, leaseExpiresAt: number, fingerprint: string, expiresAt: number): PendingRecord {
  let settle = (): void => {};
  const settled = new Promise<void>((resolve) => {
    settle = resolve;
  });
  return { state: 'pending', tenant, lease, leaseExpiresAt, fingerprint, expiresAt, settled, settle };
}

/** Whether `record` may be claimed at `now`: expired, or pending under a lease that has ended. */
function claimable(record: IdempotencyRecord, now: number): boolean {
  return record.expiresAt <= now || (record.state === 'pending' && record.leaseExpiresAt <= now);
}

/** What a waiter's bound resolves to when it passes first. */
const WAIT_OVER = Symbol('wait over');

/** What a waiter's timer resolves to when the lease it waits on ends first. */
const LEASE_OVER = Symbol('lease over');

/** {@link InMemoryIdempotencyStore}'s own `#completeHeld`, for {@link completeIfHeld}. */
let completeHeld: (store: InMemoryIdempotencyStore, lease: Lease, response: RecordedResponse, write: () => void) => boolean;

/**
 * An {@link IdempotencyStore} in memory. A request that finds its key pending with the same
 * fingerprint waits for the first to finish, for at most `pendingWait`, then replays it:
 * concurrent retries create one link and all get its response. A pending record is held for
 * `leaseTime`; then a request with its key takes it over. Records expire at `expiresAt` and are
 * swept oldest first.
 */
export class InMemoryIdempotencyStore implements IdempotencyStore {
  readonly #records = new Map<string, IdempotencyRecord>();
  readonly #maxRecords: number;
  readonly #maxPerTenant: number;
  /** Live records per tenant. */
  readonly #perTenant = new Map<string, number>();
  readonly #pendingWait: number;
  readonly #leaseTime: number;
  #leases = 0;

  static {
    completeHeld = (store, lease, response, write) => store.#completeHeld(lease, response, write);
  }

  constructor(options: InMemoryIdempotencyStoreOptions = {}) {
    rejectUnknownOptions('InMemoryIdempotencyStore', options, IN_MEMORY_IDEMPOTENCY_STORE_OPTION_NAMES);
    const max = options.maxRecords ?? 100_000;
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 1) {
      throw new TypeError(`InMemoryIdempotencyStore: maxRecords must be a whole number of at least 1, got ${describeValue(max)}`);
    }
    this.#maxRecords = max;
    this.#maxPerTenant = numberOption('InMemoryIdempotencyStore', 'maxRecordsPerTenant', options.maxRecordsPerTenant, max, {
      min: 1,
      max,
      integer: true,
      unit: 'records',
    });
    this.#pendingWait = numberOption('InMemoryIdempotencyStore', 'pendingWait', options.pendingWait, 10_000, {
      min: 0,
      max: 600_000,
      integer: true,
      unit: 'milliseconds',
    });
    this.#leaseTime = numberOption('InMemoryIdempotencyStore', 'leaseTime', options.leaseTime, 30_000, {
      min: 100,
      max: MAX_IDEMPOTENCY_LEASE_MS,
      integer: true,
      unit: 'milliseconds',
    });
  }

  async claim(request: ClaimRequest): Promise<ClaimResult> {
    const id = `${request.tenant}\u0000${request.key}`;
    // One bound for the whole claim, however many requests hold the key in turn.
    let timer: ReturnType<typeof setTimeout> | undefined;
    let leaseTimer: ReturnType<typeof setTimeout> | undefined;
    let waitOver: Promise<typeof WAIT_OVER> | undefined;
    // The handler's clock at the claim, moved on to a lease's end when the wait reaches it.
    let now = request.now;
    try {
      for (;;) {
        this.#sweep(now);
        const record = this.#records.get(id);
        if (record === undefined || claimable(record, now)) {
          if (record === undefined && this.#records.size >= this.#maxRecords) {
            throw new IdempotencyCapacityError(`More than ${this.#maxRecords} idempotency keys are live`);
          }
          const held = this.#perTenant.get(request.tenant) ?? 0;
          if (record === undefined && held >= this.#maxPerTenant) {
            throw new IdempotencyCapacityError(`More than ${this.#maxPerTenant} idempotency keys of one tenant are live`);
          }
          if (record === undefined) this.#perTenant.set(request.tenant, held + 1);
          this.#records.delete(id);
          // A request still running past its lease or its record's expiry loses the key; its waiters look again.
          if (record?.state === 'pending') record.settle();
          this.#leases += 1;
          const lease = String(this.#leases);
          this.#records.set(id, pending(request.tenant, lease, now + this.#leaseTime, request.fingerprint, request.expiresAt));
          return { state: 'claimed', lease: { tenant: request.tenant, key: request.key, id: lease } };
        }
        if (record.state === 'completed') {
          return { state: 'completed', fingerprint: record.fingerprint, response: structuredClone(record.response) };
        }
        if (record.fingerprint !== request.fingerprint || this.#pendingWait === 0) {
          return { state: 'pending', fingerprint: record.fingerprint };
        }
        waitOver ??= new Promise((resolve) => {
          timer = setTimeout(() => resolve(WAIT_OVER), this.#pendingWait);
        });
        const leaseOver = new Promise<typeof LEASE_OVER>((resolve) => {
          leaseTimer = setTimeout(() => resolve(LEASE_OVER), record.leaseExpiresAt - now);
        });
        const outcome = await Promise.race([record.settled, waitOver, leaseOver]);
        clearTimeout(leaseTimer);
        if (outcome === WAIT_OVER) return { state: 'pending', fingerprint: record.fingerprint };
        if (outcome === LEASE_OVER) now = Math.max(now, record.leaseExpiresAt);
      }
    } finally {
      clearTimeout(timer);
      clearTimeout(leaseTimer);
    }
  }

  async complete(lease: Lease, response: RecordedResponse): Promise<void> {
    this.#completeHeld(lease, response);
  }

  /**
   * Runs `write`, then completes the record `lease` holds, without yielding; `false` (nothing
   * done) when the lease was lost. A `write` that throws leaves the record pending.
   */
  #completeHeld(lease: Lease, response: RecordedResponse, write?: () => void): boolean {
    const id = `${lease.tenant}\u0000${lease.key}`;
    const record = this.#records.get(id);
    if (record?.state !== 'pending' || record.lease !== lease.id) return false;
    write?.();
    this.#records.set(id, {
      state: 'completed',
      tenant: record.tenant,
      fingerprint: record.fingerprint,
      expiresAt: record.expiresAt,
      response: structuredClone(response),
    });
    record.settle();
    return true;
  }

  async release(lease: Lease): Promise<void> {
    const id = `${lease.tenant}\u0000${lease.key}`;
    const record = this.#records.get(id);
    if (record?.state !== 'pending' || record.lease !== lease.id) return;
    this.#forget(id, record);
    record.settle();
  }

  /** Deletes the record `id`, counting it out of its tenant's. */
  #forget(id: string, record: IdempotencyRecord): void {
    this.#records.delete(id);
    const held = (this.#perTenant.get(record.tenant) ?? 1) - 1;
    if (held > 0) this.#perTenant.set(record.tenant, held);
    else this.#perTenant.delete(record.tenant);
  }

  /** Live records, all tenants together. */
  get size(): number {
    return this.#records.size;
  }

  /** Drops expired records from the front (oldest claims first); pending ones only once their lease has ended too. */
  #sweep(now: number): void {
    for (const [id, record] of this.#records) {
      if (record.expiresAt > now) break;
      if (record.state === 'pending' && record.leaseExpiresAt > now) continue;
      this.#forget(id, record);
      if (record.state === 'pending') record.settle();
    }
  }
}

/**
 * For `InMemoryPaymentLinkStore.insertCompleting`: runs `write` and completes the record `lease`
 * holds in `store` with `response`, in one step without yielding, only while the lease is held.
 * @returns `false` (nothing written) when the lease was lost.
 */
export function completeIfHeld(store: InMemoryIdempotencyStore, lease: Lease, response: RecordedResponse, write: () => void): boolean {
  return completeHeld(store, lease, response, write);
}
