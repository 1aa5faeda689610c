import { describe, expect, it } from 'vitest';
import {
  DuplicatePaymentLinkError,
  InMemoryDirectory,
  InMemoryPaymentLinkStore,
  type StoredPaymentLink,
} from '../../src/payment-links/index.js';
import { CARDIOLOGY_A, SEEDS, STORE_A, TENANT_A, TENANT_B } from './support.js';

function storedLink(overrides: Partial<StoredPaymentLink> = {}): StoredPaymentLink {
  return {
    id: '00000000-0000-4000-8000-000000000001',
    amount: '1.0000',
    shopper: '00000000-0000-4000-8000-0000000000aa',
    department: CARDIOLOGY_A,
    store: STORE_A,
    currency: 'EUR',
    description: null,
    email: 'a@b.co',
    phone: null,
    expires: '2026-03-15T12:00:00Z',
    sent: '2026-03-01T12:00:00.000000Z',
    status: 'active',
    meta: {},
    payment_url: 'https://pay.example.test/l/code',
    allowed_payment_methods: [],
    blocked_payment_methods: [],
    tenant: TENANT_A,
    link_code: 'code',
    tokenize: 'no',
    locale: null,
    duration: 20160,
    customer_ref: 'c-1',
    payment_details: null,
    ...overrides,
  };
}

describe('InMemoryPaymentLinkStore', () => {
  it('refuses a second link with the same id or the same link code', async () => {
    const store = new InMemoryPaymentLinkStore();
    await store.insert(storedLink());
    await expect(store.insert(storedLink({ link_code: 'other' }))).rejects.toBeInstanceOf(DuplicatePaymentLinkError);
    await expect(store.insert(storedLink({ id: '00000000-0000-4000-8000-000000000002' }))).rejects.toBeInstanceOf(
      DuplicatePaymentLinkError,
    );
    expect(store.size).toBe(1);
  });

  it('finds a link by its id in upper case, as a uuid column does, and for its own tenant only', async () => {
    const store = new InMemoryPaymentLinkStore();
    const id = 'a0000000-0000-4000-8000-0000000000ff';
    await store.insert(storedLink({ id }));
    expect((await store.get(TENANT_A, id.toUpperCase()))?.id).toBe(id);
    expect(await store.get(TENANT_B, id.toUpperCase())).toBeNull();
  });

  it('refuses a second link whose id differs from the first only in case', async () => {
    const store = new InMemoryPaymentLinkStore();
    await store.insert(storedLink({ id: 'a0000000-0000-4000-8000-0000000000ff' }));
    await expect(store.insert(storedLink({ id: 'A0000000-0000-4000-8000-0000000000FF', link_code: 'other' }))).rejects.toBeInstanceOf(
      DuplicatePaymentLinkError,
    );
    expect(store.size).toBe(1);
  });

  it('keeps a frozen copy, unaffected by later changes to the caller object', async () => {
    const store = new InMemoryPaymentLinkStore();
    const meta: Record<string, string> = { a: '1' };
    await store.insert(storedLink({ meta }));
    meta.a = 'changed';
    const kept = await store.get(TENANT_A, storedLink().id);
    expect(kept?.meta).toEqual({ a: '1' });
    expect(Object.isFrozen(kept?.meta)).toBe(true);
  });

  it('keeps exactly one of many concurrent inserts with one id', async () => {
    const store = new InMemoryPaymentLinkStore();
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.insert(storedLink({ link_code: `c${i}` }))));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    expect(store.size).toBe(1);
  });
});

describe('InMemoryDirectory', () => {
  it('registers one shopper for concurrent first requests with one reference', async () => {
    const directory = new InMemoryDirectory(SEEDS);
    const shoppers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        directory.resolveShopper(TENANT_A, 'new', `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`),
      ),
    );
    expect(new Set(shoppers.map((shopper) => shopper.id)).size).toBe(1);
  });

  it('keeps shoppers per tenant', async () => {
    const directory = new InMemoryDirectory(SEEDS);
    await directory.resolveShopper(TENANT_A, 'x', '00000000-0000-4000-8000-00000000000a');
    const inB = await directory.resolveShopper(TENANT_B, 'x', '00000000-0000-4000-8000-00000000000b');
    expect(inB.id).toBe('00000000-0000-4000-8000-00000000000b');
  });

  it('uses the tenant first store for a department without its own', async () => {
    const directory = new InMemoryDirectory(SEEDS);
    const department = await directory.findDepartment(TENANT_A, 'cardiology');
    expect(department).not.toBeNull();
    expect((await directory.storeFor(TENANT_A, department!))?.id).toBe(STORE_A);
  });

  it('answers empty payment-method lists for a tenant without settings', async () => {
    expect(await new InMemoryDirectory().paymentMethods(TENANT_A)).toEqual({ allowed: [], blocked: [] });
  });

  it.each([
    ['a tenant that is not an ERN', [{ tenant: 'acme/t-1' }], /tenants\[0\]\.tenant/],
    ['a store id that is not a UUID', [{ tenant: TENANT_A, stores: [{ id: 'main' }] }], /tenants\[0\]\.stores\[0\]\.id/],
    [
      'a department naming no store of the tenant',
      [{ tenant: TENANT_A, departments: [{ ref: 'd', store: STORE_A }] }],
      /departments\[0\]\.store/,
    ],
    ['a department reference with a slash', [{ tenant: TENANT_A, departments: [{ ref: 'a/b' }] }], /departments\[0\]\.ref/],
    ['a repeated department reference', [{ tenant: TENANT_A, departments: [{ ref: 'd' }, { ref: 'd' }] }], /departments\[1\]\.ref/],
    ['payment methods that are not strings', [{ tenant: TENANT_A, paymentMethods: { allowed: [1] } }], /paymentMethods\.allowed/],
  ])('refuses a seed with %s, naming it', (_label, seeds, pattern) => {
    expect(() => new InMemoryDirectory(seeds as never)).toThrow(pattern);
  });
});
