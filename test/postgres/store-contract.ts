/**
 * The contract every PaymentLinkStore and IdempotencyStore keeps, as one suite run against each
 * implementation (in memory, PGlite, a real PostgreSQL).
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { IdempotencyStore, PaymentLinkStore, RecordedResponse, StoredPaymentLink } from '../../src/payment-links/index.js';
import { randomLinkCode } from '../../src/payment-links/index.js';
import type { SqlClient, SqlRow } from '../../src/postgres/index.js';
import { eventually } from './eventually.js';

export interface StoreFixture {
  links(): PaymentLinkStore;
  idempotency(): IdempotencyStore;
  /**
   * How many times, since the last `reset()`, a claim on the store `idempotency()` gives has found
   * its key held pending under its own fingerprint and begun to wait for the holder: the contract's
   * deterministic signal that a waiter is waiting (see {@link observeStatements} and
   * {@link observeWaits}), in place of sleeping a fixed time.
   */
  waits(): number;
  /** Empties the stores between tests. */
  reset(): Promise<void>;
}

export const TENANT_A = 'ern:acme/tenants/clinic-a';
export const TENANT_B = 'ern:acme/tenants/clinic-b';

/** A stored link of `tenant`, every field filled in. */
export function storedLink(tenant: string, overrides: Partial<StoredPaymentLink> = {}): StoredPaymentLink {
  const code = randomLinkCode();
  return {
    id: randomUUID(),
    amount: '125.5000',
    shopper: randomUUID(),
    department: randomUUID(),
    store: randomUUID(),
    currency: 'EUR',
    description: 'Consultation',
    email: 'jane@example.com',
    phone: '+4512345678',
    expires: '2026-12-10T10:00:00Z',
    sent: '2026-11-26T10:00:00.123456Z',
    status: 'active',
    meta: { zeta: '1', alpha: '2', order_id: 'A-1' },
    payment_url: `https://pay.example/l/${code}`,
    allowed_payment_methods: ['visa', 'mc', 'visa'],
    blocked_payment_methods: [],
    tenant,
    link_code: code,
    tokenize: 'no',
    locale: 'da-DK',
    duration: 20_160,
    customer_ref: 'c-1001',
    payment_details: { line_items: [] },
    ...overrides,
  } as StoredPaymentLink;
}

const RESPONSE: RecordedResponse = {
  status: 201,
  headers: { 'content-type': 'application/json', location: '/payment-links/x' },
  body: { id: 'x', meta: { b: '1', a: '2' } },
};

/** A claim at `now` (with a fraction of a millisecond, as the handler's clock may give). */
function claimOf(tenant: string, key: string, fingerprint: string, now = 1_000_000.456, ttl = 86_400_000) {
  return { tenant, key, fingerprint, now, expiresAt: now + ttl };
}

export function describeStoreContract(name: string, fixture: () => StoreFixture): void {
  describe(`${name}: PaymentLinkStore`, () => {
    let store: PaymentLinkStore;
    beforeEach(async () => {
      await fixture().reset();
      store = fixture().links();
    });

    it('returns a stored link whole to its tenant, meta members in their order', async () => {
      const link = storedLink(TENANT_A);
      await store.insert(link);
      const read = await store.get(TENANT_A, link.id);
      expect(read).toEqual(link);
      expect(Object.keys(read?.meta ?? {})).toEqual(['zeta', 'alpha', 'order_id']);
    });

    it('never returns a link to another tenant', async () => {
      const link = storedLink(TENANT_A);
      await store.insert(link);
      expect(await store.get(TENANT_B, link.id)).toBeNull();
      expect(await store.list(TENANT_B)).toEqual([]);
    });

    it('answers null for an id it does not hold', async () => {
      expect(await store.get(TENANT_A, randomUUID())).toBeNull();
    });

    it('finds a link by its code, whatever its tenant', async () => {
      const link = storedLink(TENANT_B);
      await store.insert(link);
      expect((await store.getByCode(link.link_code))?.id).toBe(link.id);
      expect(await store.getByCode(randomLinkCode())).toBeNull();
    });

    it("lists a tenant's links oldest first, and only its own", async () => {
      const first = storedLink(TENANT_A);
      const other = storedLink(TENANT_B);
      const second = storedLink(TENANT_A);
      for (const link of [first, other, second]) await store.insert(link);
      expect((await store.list(TENANT_A)).map((link) => link.id)).toEqual([first.id, second.id]);
    });

    it.each([
      ['id', (link: StoredPaymentLink) => storedLink(TENANT_B, { id: link.id })],
      ['link code', (link: StoredPaymentLink) => storedLink(TENANT_B, { link_code: link.link_code })],
    ])('refuses a second link with the same %s and writes nothing', async (_field, clash) => {
      const link = storedLink(TENANT_A);
      await store.insert(link);
      await expect(store.insert(clash(link))).rejects.toMatchObject({ code: 'duplicate_payment_link' });
      expect(await store.list(TENANT_B)).toEqual([]);
    });
  });

  describe(`${name}: IdempotencyStore`, () => {
    let store: IdempotencyStore;
    beforeEach(async () => {
      await fixture().reset();
      store = fixture().idempotency();
    });

    it('claims a free key, then replays its completed response', async () => {
      const first = await store.claim(claimOf(TENANT_A, 'k-1', 'f1'));
      expect(first.state).toBe('claimed');
      if (first.state !== 'claimed') return;
      await store.complete(first.lease, RESPONSE);
      expect(await store.claim(claimOf(TENANT_A, 'k-1', 'f1'))).toEqual({
        state: 'completed',
        fingerprint: 'f1',
        response: RESPONSE,
      });
    });

    it("keeps one tenant's keys apart from another's", async () => {
      const first = await store.claim(claimOf(TENANT_A, 'k-1', 'f1'));
      expect(first.state).toBe('claimed');
      expect((await store.claim(claimOf(TENANT_B, 'k-1', 'f2'))).state).toBe('claimed');
    });

    it('answers pending, with the holder fingerprint, to another body under a held key', async () => {
      await store.claim(claimOf(TENANT_A, 'k-1', 'f1'));
      expect(await store.claim(claimOf(TENANT_A, 'k-1', 'f2'))).toEqual({ state: 'pending', fingerprint: 'f1' });
    });

    it('frees a released key', async () => {
      const first = await store.claim(claimOf(TENANT_A, 'k-1', 'f1'));
      if (first.state !== 'claimed') throw new Error('not claimed');
      await store.release(first.lease);
      expect((await store.claim(claimOf(TENANT_A, 'k-1', 'f2'))).state).toBe('claimed');
    });

    it('lets one of many concurrent claims of a key hold it', async () => {
      const results = await Promise.all(Array.from({ length: 20 }, (_, index) => store.claim(claimOf(TENANT_A, 'k-race', `f${index}`))));
      expect(results.filter((result) => result.state === 'claimed')).toHaveLength(1);
      expect(results.filter((result) => result.state === 'pending')).toHaveLength(19);
    });

    it('makes a request with the same body wait for the holder, then replay its response', async () => {
      const first = await store.claim(claimOf(TENANT_A, 'k-1', 'f1'));
      if (first.state !== 'claimed') throw new Error('not claimed');
      let answered = false;
      const waiting = store.claim(claimOf(TENANT_A, 'k-1', 'f1')).finally(() => {
        answered = true;
      });
      // Completed only once the second claim waits (or has answered without waiting, which the
      // assertion below refuses), so the replay comes through the wait and not a later first look.
      await eventually('the second claim waits for the holder', () => fixture().waits() >= 1 || answered);
      await store.complete(first.lease, RESPONSE);
      expect(await waiting).toEqual({ state: 'completed', fingerprint: 'f1', response: RESPONSE });
    });

    it('claims a key again once its record has expired', async () => {
      const first = await store.claim(claimOf(TENANT_A, 'k-1', 'f1', 1_000_000, 60_000));
      if (first.state !== 'claimed') throw new Error('not claimed');
      await store.complete(first.lease, RESPONSE);
      expect((await store.claim(claimOf(TENANT_A, 'k-1', 'f2', 1_060_000))).state).toBe('claimed');
    });

    it('ignores complete and release of a lease that was lost', async () => {
      const first = await store.claim(claimOf(TENANT_A, 'k-1', 'f1', 1_000_000, 60_000));
      if (first.state !== 'claimed') throw new Error('not claimed');
      const second = await store.claim(claimOf(TENANT_A, 'k-1', 'f2', 1_060_000));
      if (second.state !== 'claimed') throw new Error('not claimed again');
      await store.complete(first.lease, RESPONSE);
      await store.release(first.lease);
      expect(await store.claim(claimOf(TENANT_A, 'k-1', 'f3', 1_060_001))).toEqual({
        state: 'pending',
        fingerprint: 'f2',
      });
    });
  });
}

/**
 * An idempotency store whose claims are counted as waits (for {@link StoreFixture.waits}) when
 * they have not answered by the time their synchronous part has run: the in-memory store looks at
 * the key and, finding it pending under the request's fingerprint, begins its wait before it first
 * yields, and every other claim answers at once. The count is taken one microtask after the call,
 * after the reaction of a claim that has already answered.
 */
export function observeWaits(store: IdempotencyStore): { store: IdempotencyStore; waits(): number } {
  let waits = 0;
  return {
    waits: () => waits,
    store: {
      claim(request) {
        const claim = store.claim(request);
        let answered = false;
        const noteAnswer = (): void => {
          answered = true;
        };
        claim.then(noteAnswer, noteAnswer);
        queueMicrotask(() => {
          if (!answered) waits += 1;
        });
        return claim;
      },
      complete: (lease, response) => store.complete(lease, response),
      release: (lease) => store.release(lease),
    },
  };
}

/** Whether `text` is `PostgresIdempotencyStore`'s claim statement. */
const isClaimStatement = (text: unknown): boolean => typeof text === 'string' && text.trimStart().startsWith('WITH claimed AS');

/**
 * `db` (a pool, a client or PGlite), still of its kind (a pool's `connect()` and `idleCount`
 * pass through, and its checked-out connections are observed too), counting as a wait (for
 * {@link StoreFixture.waits}) each `PostgresIdempotencyStore` claim statement that answered its
 * key pending under the request's own fingerprint (its third parameter): the claim then sleeps and
 * looks again until the holder finishes.
 */
export function observeStatements<T extends SqlClient>(db: T): { db: T; waits(): number } {
  let waits = 0;
  const note = (text: unknown, params: unknown, result: unknown): void => {
    const row = (result as { rows?: SqlRow[] } | undefined)?.rows?.[0];
    if (isClaimStatement(text) && row?.state === 'pending' && Array.isArray(params) && row.fingerprint === params[2]) waits += 1;
  };
  const observed = <C extends object>(target: C): C =>
    new Proxy(target, {
      get(object, property) {
        const value: unknown = Reflect.get(object, property, object);
        if (property === 'query' && typeof value === 'function') {
          return (text: unknown, params?: unknown) => {
            const result: unknown = value.call(object, text, params);
            if (result instanceof Promise) {
              return result.then((answer: unknown) => {
                note(text, params, answer);
                return answer;
              });
            }
            return result;
          };
        }
        if (property === 'connect' && typeof value === 'function') {
          return async () => observed(await value.call(object));
        }
        return typeof value === 'function' ? value.bind(object) : value;
      },
    });
  return { db: observed(db), waits: () => waits };
}
