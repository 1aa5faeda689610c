/**
 * The contract every PaymentLinkStore and IdempotencyStore keeps, as one suite run against each
 * implementation (in memory, PGlite, a real PostgreSQL).
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { IdempotencyStore, PaymentLinkStore, RecordedResponse, StoredPaymentLink } from '../../src/payment-links/index.js';
import { randomLinkCode } from '../../src/payment-links/index.js';

export interface StoreFixture {
  links(): PaymentLinkStore;
  idempotency(): IdempotencyStore;
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
      const waiting = store.claim(claimOf(TENANT_A, 'k-1', 'f1'));
      await new Promise((resolve) => setTimeout(resolve, 50));
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
