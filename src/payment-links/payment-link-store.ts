/**
 * Where payment links are kept. Every read names the tenant: one tenant never reads another's
 * links. A database implements the same interface (each method one statement or transaction).
 */
import {
  type ClaimRequest,
  type IdempotencyStore,
  InMemoryIdempotencyStore,
  type Lease,
  type RecordedResponse,
  completeIfHeld,
} from './idempotency-store.js';
import { deepFreeze, quote } from '../internal/index.js';
import type { StoredPaymentLink } from './payment-link.js';

/** Raised by {@link PaymentLinkStore.insert} when the id or link code is taken (a server fault). */
export class DuplicatePaymentLinkError extends Error {
  override readonly name = 'DuplicatePaymentLinkError';
  readonly code = 'duplicate_payment_link' as const;
}

/** What {@link PaymentLinkStore.insertCompleting} completes along with the link. */
export interface LinkCompletion {
  /** The store holding the lease. */
  readonly idempotency: IdempotencyStore;
  /** The claim of the request creating the link. */
  readonly lease: Lease;
  /**
   * The response to record for replay. Its `body` is `toPaymentLink(link)`: a store may keep the
   * link once and give the body back from it at a replay.
   */
  readonly response: RecordedResponse;
}

/** What {@link PaymentLinkStore.insertClaiming} records along with the link. */
export interface LinkClaim {
  /** The store the key is claimed in. */
  readonly idempotency: IdempotencyStore;
  /** The claim of the request creating the link. */
  readonly claim: ClaimRequest;
  /** The response to record for replay; its `body` is `toPaymentLink(link)`, as for {@link LinkCompletion}. */
  readonly response: RecordedResponse;
}

/**
 * What {@link PaymentLinkStore.insertClaiming} did: `stored` (the key recorded completed and the
 * link stored, together), `key_taken` (nothing written: the key has a record already, live or
 * expired; claim it), `unsupported` (nothing written: this store cannot join `idempotency` in one
 * step; claim, insert, then complete).
 */
export type LinkClaimOutcome = 'stored' | 'key_taken' | 'unsupported';

/**
 * What {@link PaymentLinkStore.insertCompleting} did: `stored` (link and record both written),
 * `lease_lost` (nothing written: another request holds the key now), `unsupported` (nothing
 * written: this store cannot join `idempotency` in one step; insert, then complete).
 */
export type LinkCompletionOutcome = 'stored' | 'lease_lost' | 'unsupported';

/** Storage of payment links. */
export interface PaymentLinkStore {
  /**
   * Stores a new link atomically.
   * @throws {DuplicatePaymentLinkError} when its `id` or `link_code` is already stored.
   */
  insert(link: StoredPaymentLink): Promise<void>;
  /**
   * Optional. Stores `link` and marks the idempotency record held by `completion.lease` completed,
   * atomically, so that no crash leaves a link whose key may be claimed again.
   * @throws {DuplicatePaymentLinkError} when its `id` or `link_code` is already stored (nothing written).
   */
  insertCompleting?(link: StoredPaymentLink, completion: LinkCompletion): Promise<LinkCompletionOutcome>;
  /**
   * Optional. When no record holds `claim.claim.key` for its tenant, records it completed with
   * `claim.response` and stores `link`, atomically, in one commit; otherwise writes nothing and
   * answers `key_taken`, and the handler claims the key as usual (a replay, a conflict, a key
   * whose record expired).
   * @throws {DuplicatePaymentLinkError} when its `id` or `link_code` is already stored (nothing written).
   */
  insertClaiming?(link: StoredPaymentLink, claim: LinkClaim): Promise<LinkClaimOutcome>;
  /** The link `id` of `tenant`, or `null` (also when it belongs to another tenant). */
  get(tenant: string, id: string): Promise<StoredPaymentLink | null>;
  /** The link whose pay-page code is `code`, whatever its tenant (for the pay page itself), or `null`. */
  getByCode(code: string): Promise<StoredPaymentLink | null>;
  /** Every link of `tenant`, oldest first. */
  list(tenant: string): Promise<readonly StoredPaymentLink[]>;
}

/**
 * A {@link PaymentLinkStore} in memory, for tests, examples and single-process demos. Links are
 * frozen when stored; each method completes without yielding, so concurrent calls never
 * interleave inside one.
 */
export class InMemoryPaymentLinkStore implements PaymentLinkStore {
  readonly #byId = new Map<string, StoredPaymentLink>();
  readonly #byCode = new Map<string, StoredPaymentLink>();

  async insert(link: StoredPaymentLink): Promise<void> {
    this.#insert(link);
  }

  /**
   * With an `InMemoryIdempotencyStore`, stores `link` and completes the record `completion.lease`
   * holds in one step, only while the lease is held (`lease_lost`, nothing written, once another
   * request has taken the key over); with any other store, `unsupported`.
   * @throws {DuplicatePaymentLinkError} when its `id` or `link_code` is already stored (nothing written).
   */
  async insertCompleting(link: StoredPaymentLink, completion: LinkCompletion): Promise<LinkCompletionOutcome> {
    const { idempotency, lease, response } = completion;
    if (!(idempotency instanceof InMemoryIdempotencyStore)) return 'unsupported';
    return completeIfHeld(idempotency, lease, response, () => this.#insert(link)) ? 'stored' : 'lease_lost';
  }

  #insert(link: StoredPaymentLink): void {
    const id = link.id.toLowerCase();
    if (this.#byId.has(id)) throw new DuplicatePaymentLinkError(`A payment link with id ${quote(link.id)} exists already`);
    if (this.#byCode.has(link.link_code)) throw new DuplicatePaymentLinkError('A payment link with this link code exists already');
    const frozen = deepFreeze(structuredClone(link));
    this.#byId.set(id, frozen);
    this.#byCode.set(link.link_code, frozen);
  }

  /** The link `id` of `tenant`; a UUID's hexadecimal digits in either case, as a `uuid` column compares them. */
  async get(tenant: string, id: string): Promise<StoredPaymentLink | null> {
    const link = typeof id === 'string' ? this.#byId.get(id.toLowerCase()) : undefined;
    return link !== undefined && link.tenant === tenant ? link : null;
  }

  async getByCode(code: string): Promise<StoredPaymentLink | null> {
    return this.#byCode.get(code) ?? null;
  }

  async list(tenant: string): Promise<readonly StoredPaymentLink[]> {
    return [...this.#byId.values()].filter((link) => link.tenant === tenant);
  }

  /** How many links are stored, all tenants together. */
  get size(): number {
    return this.#byId.size;
  }
}
