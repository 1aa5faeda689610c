import { describe, expect, it, vi } from 'vitest';
import {
  type IdempotencyStore,
  InMemoryDirectory,
  InMemoryIdempotencyStore,
  InMemoryPaymentLinkStore,
  type PaymentLink,
  type RecordedResponse,
} from '../../src/payment-links/index.js';
import { NOW, SEEDS, TENANT_A, TENANT_B, jsonRequest, makeHandler, settledYet, useCallers, useFakeTimeouts, validBody } from './support.js';

const callers = useCallers();

/**
 * A handler whose first link insert waits until `claims` requests have reached the idempotency
 * store, so that they really overlap (in-memory work alone would finish each request at once).
 */
function heldUntilClaims(claims: number) {
  const idempotency = new InMemoryIdempotencyStore();
  const store = new InMemoryPaymentLinkStore();
  let seen = 0;
  let release = (): void => {};
  const allClaimed = new Promise<void>((resolve) => {
    release = resolve;
  });
  const handler = makeHandler({
    idempotency: {
      claim: (request) => {
        seen += 1;
        if (seen === claims) release();
        return idempotency.claim(request);
      },
      complete: (lease, response) => idempotency.complete(lease, response),
      release: (lease) => idempotency.release(lease),
    },
    store: {
      insert: async (link) => {
        await allClaimed;
        return store.insert(link);
      },
      get: (tenant, id) => store.get(tenant, id),
      getByCode: (code) => store.getByCode(code),
      list: (tenant) => store.list(tenant),
    },
  });
  return { handler, store };
}
const KEY = { 'idempotency-key': '7c4a1f9e-2b1d-4f7e-9a3c-5d6e7f8a9b0c' };

/** An idempotency store whose completed records come back changed by `change`, as a row written by hand would. */
function tamperedRecords(change: (response: RecordedResponse) => RecordedResponse): IdempotencyStore {
  const inner = new InMemoryIdempotencyStore();
  return {
    claim: async (request) => {
      const result = await inner.claim(request);
      return result.state === 'completed' ? { ...result, response: change(result.response) } : result;
    },
    complete: (lease, response) => inner.complete(lease, response),
    release: (lease) => inner.release(lease),
  };
}

describe('POST /payment-links/ with Idempotency-Key', () => {
  it('replays the first response (status, body, Location) for the same key and body, creating nothing', async () => {
    const handler = makeHandler();
    const auth = await callers.auth();
    const first = await handler(jsonRequest(auth, validBody(), KEY));
    const again = await handler(jsonRequest(auth, validBody(), KEY));
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(await handler.store.list(TENANT_A)).toHaveLength(1);
  });

  it("replays with the handler's own headers, never a record's (attack: a row written by hand setting Location or a cookie)", async () => {
    const handler = makeHandler({
      idempotency: tamperedRecords((response) => ({
        ...response,
        headers: { location: 'https://evil.example/phish', 'set-cookie': 'session=stolen' },
      })),
    });
    const auth = await callers.auth();
    const first = await handler(jsonRequest(auth, validBody(), KEY));
    const again = await handler(jsonRequest(auth, validBody(), KEY));
    expect(again.headers).toEqual({ ...first.headers, 'idempotent-replayed': 'true' });
    expect(again.headers.location).toBe(`/payment-links/${(first.body as PaymentLink).id}`);
  });

  it.each([
    ['a status other than 201', (response: RecordedResponse) => ({ ...response, status: 200 })],
    ['a body without a link id', (response: RecordedResponse) => ({ ...response, body: { id: 'not-a-uuid' } })],
  ])('refuses to replay a record holding %s, naming what it found', async (_case, change) => {
    const handler = makeHandler({ idempotency: tamperedRecords(change) });
    const auth = await callers.auth();
    expect((await handler(jsonRequest(auth, validBody(), KEY))).status).toBe(201);
    await expect(handler(jsonRequest(auth, validBody(), KEY))).rejects.toThrow(/Idempotency-Key record holds no 201 of a link \(status/);
  });

  it('treats the same body with members reordered and other whitespace as the same request', async () => {
    const handler = makeHandler();
    const auth = await callers.auth();
    const body = validBody();
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    await handler(jsonRequest(auth, JSON.stringify(body), KEY));
    const again = await handler(jsonRequest(auth, JSON.stringify(reordered, null, 2), KEY));
    expect(again.status).toBe(201);
    expect(await handler.store.list(TENANT_A)).toHaveLength(1);
  });

  it.each([
    ['phone', {}, { phone: null }],
    ['locale', {}, { locale: null }],
    ['description', { description: undefined }, { description: null }],
    ['tokenize', {}, { tokenize: null }],
    ['duration', {}, { duration: null }],
    ['meta', { meta: undefined }, { meta: null }],
    ['payment_details', {}, { payment_details: null }],
  ])('treats %s sent as null and left out as the same request, replaying the first link', async (_field, absent, nulled) => {
    const handler = makeHandler();
    const auth = await callers.auth();
    const first = await handler(jsonRequest(auth, validBody(absent), KEY));
    const again = await handler(jsonRequest(auth, validBody({ ...absent, ...nulled }), KEY));
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await handler.store.list(TENANT_A)).toHaveLength(1);
  });

  it("treats a line item's optional id and tax_percentage sent as null and left out as the same request", async () => {
    const line = { quantity: 1, description: 'Visit', amount_excluding_tax: '100', tax_amount: '25.5', amount_including_tax: '125.5' };
    const handler = makeHandler();
    const auth = await callers.auth();
    const first = await handler(jsonRequest(auth, validBody({ payment_details: { line_items: [line] } }), KEY));
    const nulled = { ...line, id: null, tax_percentage: null };
    const again = await handler(jsonRequest(auth, validBody({ payment_details: { line_items: [nulled] } }), KEY));
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await handler.store.list(TENANT_A)).toHaveLength(1);
  });

  it('answers 409 for the same key with another body, and makes no second link', async () => {
    const handler = makeHandler();
    const auth = await callers.auth();
    await handler(jsonRequest(auth, validBody(), KEY));
    const reused = await handler(jsonRequest(auth, validBody({ amount: '99' }), KEY));
    expect(reused.status).toBe(409);
    expect(reused.body).toMatchObject({ code: 'idempotency_key_reused', status: 409 });
    expect(await handler.store.list(TENANT_A)).toHaveLength(1);
  });

  it('answers a used key with another, invalid body 400 for its fields: the fields are checked before the key', async () => {
    const handler = makeHandler();
    const auth = await callers.auth();
    await handler(jsonRequest(auth, validBody(), KEY));
    const invalid = await handler(jsonRequest(auth, validBody({ amount: '1.00001' }), KEY));
    expect([invalid.status, (invalid.body as { code: string }).code]).toEqual([400, 'validation_failed']);
    expect(await handler.store.list(TENANT_A)).toHaveLength(1);
  });

  it('creates exactly one link for concurrent requests with one key, and answers each with it', async () => {
    const { handler, store } = heldUntilClaims(10);
    const auth = await callers.auth();
    const responses = await Promise.all(Array.from({ length: 10 }, () => handler(jsonRequest(auth, validBody(), KEY))));
    expect(store.size).toBe(1);
    const ids = new Set(responses.map((response) => (response.body as PaymentLink).id));
    expect(ids.size).toBe(1);
    expect(responses.map((response) => response.status)).toEqual(Array(10).fill(201));
    expect(responses.filter((response) => response.headers['idempotent-replayed'] === 'true')).toHaveLength(9);
  });

  it('answers 409 to a concurrent request with the same key and another body', async () => {
    const { handler } = heldUntilClaims(2);
    const auth = await callers.auth();
    const responses = await Promise.all([
      handler(jsonRequest(auth, validBody(), KEY)),
      handler(jsonRequest(auth, validBody({ amount: '1' }), KEY)),
    ]);
    // Whichever claims the key first creates the link; the other is refused.
    expect(responses.map((response) => response.status).sort()).toEqual([201, 409]);
    expect(responses.find((response) => response.status === 409)?.body).toMatchObject({
      code: 'idempotency_key_reused',
    });
    expect(await handler.store.list(TENANT_A)).toHaveLength(1);
  });

  it("names the key in a 409 idempotency_key_reused, never the first body's values", async () => {
    const handler = makeHandler();
    const auth = await callers.auth();
    await handler(jsonRequest(auth, validBody(), KEY));
    const reused = await handler(jsonRequest(auth, validBody({ amount: '99' }), KEY));
    const detail = (reused.body as { detail: string }).detail;
    expect(detail).toContain(`got "${KEY['idempotency-key']}"`);
    expect(detail).not.toContain('125.5');
  });

  /** A handler whose store reports every key's request still running elsewhere. */
  const pendingElsewhere = () =>
    makeHandler({
      idempotency: {
        claim: async (request) => ({ state: 'pending', fingerprint: request.fingerprint }),
        complete: async () => {},
        release: async () => {},
      },
    });

  it('names the key in a 409 idempotency_key_in_use', async () => {
    const handler = pendingElsewhere();
    const response = await handler(jsonRequest(await callers.auth(), validBody(), KEY));
    expect((response.body as { detail: string }).detail).toContain(`got "${KEY['idempotency-key']}"`);
  });

  it('answers 409 idempotency_key_in_use, with Retry-After, when a store reports the same request still running elsewhere', async () => {
    const handler = pendingElsewhere();
    const response = await handler(jsonRequest(await callers.auth(), validBody(), KEY));
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ code: 'idempotency_key_in_use' });
    expect(response.headers['retry-after']).toBe('1');
    expect(await handler.store.list(TENANT_A)).toEqual([]);
  });

  it('records nothing for a refused request, so the corrected request may reuse the key', async () => {
    const handler = makeHandler();
    const auth = await callers.auth();
    const refused = await handler(jsonRequest(auth, validBody({ amount: 'ten' }), KEY));
    const corrected = await handler(jsonRequest(auth, validBody(), KEY));
    expect(refused.status).toBe(400);
    expect(corrected.status).toBe(201);
  });

  it('keeps keys per tenant: one key in two tenants makes two links', async () => {
    const handler = makeHandler();
    const inA = await handler(jsonRequest(await callers.auth(), validBody(), KEY));
    const inB = await handler(jsonRequest(await callers.auth({ tenant_ern: TENANT_B }), validBody(), KEY));
    expect(inA.status).toBe(201);
    expect(inB.status).toBe(201);
    expect((inB.body as PaymentLink).id).not.toBe((inA.body as PaymentLink).id);
    expect(inB.headers['idempotent-replayed']).toBeUndefined();
  });

  it('forgets a key after idempotencyKeyTtl seconds', async () => {
    let now = NOW;
    const handler = makeHandler({ now: () => now, idempotencyKeyTtl: 3600 });
    const auth = await callers.auth();
    await handler(jsonRequest(auth, validBody(), KEY));
    now += 3_599_000;
    expect((await handler(jsonRequest(auth, validBody(), KEY))).headers['idempotent-replayed']).toBe('true');
    now += 1000;
    const later = await handler(jsonRequest(auth, validBody(), KEY));
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(await handler.store.list(TENANT_A)).toHaveLength(2);
  });

  it('remembers keys for 24 hours by default', async () => {
    let now = NOW;
    const handler = makeHandler({ now: () => now });
    const auth = await callers.auth();
    await handler(jsonRequest(auth, validBody(), KEY));
    now += 86_399_000;
    expect((await handler(jsonRequest(auth, validBody(), KEY))).headers['idempotent-replayed']).toBe('true');
    now += 1000;
    expect((await handler(jsonRequest(auth, validBody(), KEY))).headers['idempotent-replayed']).toBeUndefined();
  });

  it('accepts the key as a quoted string', async () => {
    const handler = makeHandler();
    const auth = await callers.auth();
    await handler(jsonRequest(auth, validBody(), { 'idempotency-key': 'abc-123' }));
    const quoted = await handler(jsonRequest(auth, validBody(), { 'idempotency-key': '"abc-123"' }));
    expect(quoted.headers['idempotent-replayed']).toBe('true');
  });

  it.each([
    ['empty', ''],
    ['with a space', 'a b'],
    ['with a comma (two keys joined)', 'a, b'],
    ['longer than 255 characters', 'k'.repeat(256)],
    ['with a non-ASCII character', 'clé'],
    // JavaScript's trim() takes U+00A0 for white space; HTTP's only SP and HTAB.
    ['wrapped in no-break spaces (the key "abc" to trim())', '\u00a0abc\u00a0'],
  ])('refuses a key %s with 400 invalid_idempotency_key', async (_label, key) => {
    const handler = makeHandler();
    const response = await handler(jsonRequest(await callers.auth(), validBody(), { 'idempotency-key': key }));
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'invalid_idempotency_key' });
    expect(await handler.store.list(TENANT_A)).toEqual([]);
  });

  it('names the key found in a 400 invalid_idempotency_key, cut and escaped, with its length', async () => {
    const handler = makeHandler();
    const key = `a b${'k'.repeat(300)}`;
    const response = await handler(jsonRequest(await callers.auth(), validBody(), { 'idempotency-key': key }));
    const detail = (response.body as { detail: string }).detail;
    expect(detail).toContain('got "a bkkk');
    expect(detail).toContain('303 characters');
    expect(detail).not.toContain('k'.repeat(100));
  });

  it('refuses two Idempotency-Key headers', async () => {
    const handler = makeHandler();
    const response = await handler({
      auth: await callers.auth(),
      headers: { 'content-type': 'application/json', 'idempotency-key': ['a', 'b'] },
      body: JSON.stringify(validBody()),
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'invalid_idempotency_key' });
  });

  it('names the repeated Idempotency-Key values it found, quoted and escaped', async () => {
    const handler = makeHandler();
    const response = await handler({
      auth: await callers.auth(),
      headers: { 'content-type': 'application/json', 'idempotency-key': ['k-1', 'k\u0000-2'] },
      body: JSON.stringify(validBody()),
    });
    expect((response.body as { detail: string }).detail).toContain('got "k-1", "k\\u0000-2"');
  });

  it('answers 503 when the idempotency store is full, rather than forgetting live keys', async () => {
    const handler = makeHandler({ idempotency: new InMemoryIdempotencyStore({ maxRecords: 1 }) });
    const auth = await callers.auth();
    expect((await handler(jsonRequest(auth, validBody(), { 'idempotency-key': 'one' }))).status).toBe(201);
    const full = await handler(jsonRequest(auth, validBody(), { 'idempotency-key': 'two' }));
    expect(full.status).toBe(503);
    expect(full.body).toMatchObject({ code: 'idempotency_unavailable' });
    expect(full.headers['retry-after']).toBe('60');
    expect((await handler(jsonRequest(auth, validBody(), { 'idempotency-key': 'one' }))).headers['idempotent-replayed']).toBe('true');
  });

  it("answers 503 to a tenant holding maxRecordsPerTenant live keys, and still takes another tenant's keys", async () => {
    const handler = makeHandler({ idempotency: new InMemoryIdempotencyStore({ maxRecords: 10, maxRecordsPerTenant: 2 }) });
    const a = await callers.auth();
    const b = await callers.auth({ tenant_ern: TENANT_B });
    for (const key of ['a-1', 'a-2']) expect((await handler(jsonRequest(a, validBody(), { 'idempotency-key': key }))).status).toBe(201);
    const full = await handler(jsonRequest(a, validBody(), { 'idempotency-key': 'a-3' }));
    expect([full.status, (full.body as { code: string }).code]).toEqual([503, 'idempotency_unavailable']);
    expect((await handler(jsonRequest(b, validBody(), { 'idempotency-key': 'b-1' }))).status).toBe(201);
    expect((await handler(jsonRequest(a, validBody(), { 'idempotency-key': 'a-1' }))).headers['idempotent-replayed']).toBe('true');
  });

  it("gives a tenant's quota back as its keys expire", async () => {
    const store = new InMemoryIdempotencyStore({ maxRecords: 10, maxRecordsPerTenant: 1 });
    const claim = { tenant: TENANT_A, fingerprint: 'f', now: 1000, expiresAt: 2000 };
    const first = await store.claim({ ...claim, key: 'a' });
    if (first.state !== 'claimed') throw new Error('expected a claim');
    await store.complete(first.lease, { status: 201, headers: {}, body: {} });
    await expect(store.claim({ ...claim, key: 'b' })).rejects.toMatchObject({ code: 'idempotency_capacity' });
    expect(await store.claim({ ...claim, key: 'b', now: 2000, expiresAt: 3000 })).toMatchObject({ state: 'claimed' });
  });

  it("gives a tenant's quota back when a key is released", async () => {
    const store = new InMemoryIdempotencyStore({ maxRecords: 10, maxRecordsPerTenant: 1 });
    const claim = { tenant: TENANT_A, fingerprint: 'f', now: 1000, expiresAt: 2000 };
    const first = await store.claim({ ...claim, key: 'a' });
    if (first.state !== 'claimed') throw new Error('expected a claim');
    await store.release(first.lease);
    expect(await store.claim({ ...claim, key: 'b' })).toMatchObject({ state: 'claimed' });
  });

  it.each([0, 11, 1.5])('refuses a maxRecordsPerTenant of %j, naming it', (value) => {
    expect(() => new InMemoryIdempotencyStore({ maxRecords: 10, maxRecordsPerTenant: value })).toThrow(/maxRecordsPerTenant/);
  });

  it('releases the key when storing the link fails, so a retry can succeed', async () => {
    let fail = true;
    const base = makeHandler();
    const store = {
      insert: async (link: Parameters<typeof base.store.insert>[0]) => {
        if (fail) throw new Error('database down');
        return base.store.insert(link);
      },
      get: base.store.get.bind(base.store),
      getByCode: base.store.getByCode.bind(base.store),
      list: base.store.list.bind(base.store),
    };
    const handler = makeHandler({ store });
    const auth = await callers.auth();
    await expect(handler(jsonRequest(auth, validBody(), KEY))).rejects.toThrow('database down');
    fail = false;
    expect((await handler(jsonRequest(auth, validBody(), KEY))).status).toBe(201);
  });
});

describe('InMemoryIdempotencyStore', () => {
  const claim = { tenant: TENANT_A, key: 'k', fingerprint: 'f1', now: 0, expiresAt: 1000 };

  it('answers pending to another fingerprint while the first request runs', async () => {
    const store = new InMemoryIdempotencyStore();
    expect(await store.claim(claim)).toMatchObject({ state: 'claimed' });
    expect(await store.claim({ ...claim, fingerprint: 'f2' })).toEqual({ state: 'pending', fingerprint: 'f1' });
  });

  it('ignores completion under a lease lost to expiry', async () => {
    const store = new InMemoryIdempotencyStore();
    const first = await store.claim(claim);
    const second = await store.claim({ ...claim, now: 1000, expiresAt: 2000 });
    if (first.state !== 'claimed' || second.state !== 'claimed') throw new Error('expected two claims');
    await store.complete(first.lease, { status: 201, headers: {}, body: 'stale' });
    expect(await store.claim({ ...claim, fingerprint: 'f2', now: 1500, expiresAt: 2500 })).toEqual({
      state: 'pending',
      fingerprint: 'f1',
    });
    await store.complete(second.lease, { status: 201, headers: {}, body: 'fresh' });
    expect(await store.claim({ ...claim, now: 1500, expiresAt: 2500 })).toMatchObject({
      state: 'completed',
      response: { body: 'fresh' },
    });
  });

  it('sweeps expired records', async () => {
    const store = new InMemoryIdempotencyStore();
    for (const key of ['a', 'b', 'c']) {
      const result = await store.claim({ ...claim, key });
      if (result.state === 'claimed') await store.complete(result.lease, { status: 201, headers: {}, body: null });
    }
    expect(store.size).toBe(3);
    await store.claim({ ...claim, key: 'd', now: 1000, expiresAt: 2000 });
    expect(store.size).toBe(1);
  });

  it('refuses a maxRecords that is not a positive whole number', () => {
    expect(() => new InMemoryIdempotencyStore({ maxRecords: 0 })).toThrow(/maxRecords/);
  });
});

describe('InMemoryIdempotencyStore bounding the wait for a pending request (pendingWait)', () => {
  useFakeTimeouts();

  const claim = { tenant: TENANT_A, key: 'k', fingerprint: 'f1', now: 0, expiresAt: 1000 };

  it('answers pending to the same fingerprint once pendingWait has passed while the first request hangs', async () => {
    const store = new InMemoryIdempotencyStore({ pendingWait: 2000 });
    expect(await store.claim(claim)).toMatchObject({ state: 'claimed' });
    const waiting = store.claim(claim);
    await vi.advanceTimersByTimeAsync(1999);
    expect(await settledYet(waiting)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await waiting).toEqual({ state: 'pending', fingerprint: 'f1' });
  });

  it('waits 10 seconds by default, as PostgresIdempotencyStore does', async () => {
    const store = new InMemoryIdempotencyStore();
    await store.claim(claim);
    const waiting = store.claim(claim);
    await vi.advanceTimersByTimeAsync(9999);
    expect(await settledYet(waiting)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await waiting).toEqual({ state: 'pending', fingerprint: 'f1' });
  });

  it('answers pending at once with pendingWait 0', async () => {
    const store = new InMemoryIdempotencyStore({ pendingWait: 0 });
    await store.claim(claim);
    const waiting = store.claim(claim);
    expect(await settledYet(waiting)).toBe(true);
    expect(await waiting).toEqual({ state: 'pending', fingerprint: 'f1' });
  });

  it('replays a first request that completes within pendingWait, leaving no timer behind', async () => {
    const store = new InMemoryIdempotencyStore({ pendingWait: 2000 });
    const first = await store.claim(claim);
    if (first.state !== 'claimed') throw new Error('expected a claim');
    const waiting = store.claim(claim);
    await vi.advanceTimersByTimeAsync(1999);
    await store.complete(first.lease, { status: 201, headers: {}, body: 'link' });
    expect(await waiting).toMatchObject({ state: 'completed', response: { body: 'link' } });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('counts pendingWait from the claim, across a first request released and a third claiming in between', async () => {
    const store = new InMemoryIdempotencyStore({ pendingWait: 2000 });
    const first = await store.claim(claim);
    if (first.state !== 'claimed') throw new Error('expected a claim');
    const waiting = store.claim(claim);
    await vi.advanceTimersByTimeAsync(1500);
    // Released, and claimed by a third request before the waiter looks again (both in this
    // synchronous step): the waiter waits on the third, within what is left of its bound.
    const released = store.release(first.lease);
    const third = store.claim(claim);
    await released;
    expect(await third).toMatchObject({ state: 'claimed' });
    await vi.advanceTimersByTimeAsync(499);
    expect(await settledYet(waiting)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await waiting).toEqual({ state: 'pending', fingerprint: 'f1' });
  });

  it.each([
    ['negative', -1, /pendingWait must be .*got -1/],
    ['above 10 minutes', 600_001, /pendingWait must be .*got 600001/],
    ['NaN', Number.NaN, /pendingWait must be .*got NaN/],
    ['fractional', 1.5, /pendingWait must be .*got 1.5/],
  ])('refuses a pendingWait that is %s, naming the value', (_label, pendingWait, pattern) => {
    expect(() => new InMemoryIdempotencyStore({ pendingWait })).toThrow(TypeError);
    expect(() => new InMemoryIdempotencyStore({ pendingWait })).toThrow(pattern);
  });
});

describe('POST /payment-links/ with Idempotency-Key while the first request hangs', () => {
  useFakeTimeouts();

  it('answers a retry with the same key and body 409 idempotency_key_in_use with Retry-After once pendingWait has passed', async () => {
    const links = new InMemoryPaymentLinkStore();
    let inserting = (): void => {};
    const insertReached = new Promise<void>((resolve) => {
      inserting = resolve;
    });
    const handler = makeHandler({
      idempotency: new InMemoryIdempotencyStore({ pendingWait: 2000 }),
      store: {
        // The first request hangs in the link store, holding its key.
        insert: () => {
          inserting();
          return new Promise<void>(() => {});
        },
        get: (tenant, id) => links.get(tenant, id),
        getByCode: (code) => links.getByCode(code),
        list: (tenant) => links.list(tenant),
      },
    });
    const auth = await callers.auth();
    void handler(jsonRequest(auth, validBody(), KEY));
    await insertReached;
    const retry = handler(jsonRequest(auth, validBody(), KEY));
    await vi.advanceTimersByTimeAsync(2000);
    const response = await retry;
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ code: 'idempotency_key_in_use' });
    expect(response.headers['retry-after']).toBe('1');
  });
});

describe('InMemoryIdempotencyStore holding a pending key for its lease (leaseTime)', () => {
  useFakeTimeouts();

  const claim = { tenant: TENANT_A, key: 'k', fingerprint: 'f1', now: 0, expiresAt: 1_000_000 };

  it('lets a request take over a key whose holder is still pending once leaseTime has passed, as PostgresIdempotencyStore does', async () => {
    const store = new InMemoryIdempotencyStore({ leaseTime: 5000, pendingWait: 0 });
    const first = await store.claim(claim);
    expect(await store.claim({ ...claim, now: 4999 })).toEqual({ state: 'pending', fingerprint: 'f1' });
    const second = await store.claim({ ...claim, fingerprint: 'f2', now: 5000 });
    if (first.state !== 'claimed' || second.state !== 'claimed') throw new Error('expected two claims');
    expect(second.lease.id).not.toBe(first.lease.id);
  });

  it('ignores the complete and release of a holder whose lease was taken over', async () => {
    const store = new InMemoryIdempotencyStore({ leaseTime: 5000, pendingWait: 0 });
    const first = await store.claim(claim);
    const second = await store.claim({ ...claim, now: 5000 });
    if (first.state !== 'claimed' || second.state !== 'claimed') throw new Error('expected two claims');
    await store.complete(first.lease, { status: 201, headers: {}, body: 'stale' });
    await store.release(first.lease);
    expect(await store.claim({ ...claim, now: 6000 })).toEqual({ state: 'pending', fingerprint: 'f1' });
    await store.complete(second.lease, { status: 201, headers: {}, body: 'fresh' });
    expect(await store.claim({ ...claim, now: 6000 })).toMatchObject({ state: 'completed', response: { body: 'fresh' } });
  });

  it('holds a pending key 30 seconds by default', async () => {
    const store = new InMemoryIdempotencyStore({ pendingWait: 0 });
    await store.claim(claim);
    expect(await store.claim({ ...claim, now: 29_999 })).toMatchObject({ state: 'pending' });
    expect(await store.claim({ ...claim, now: 30_000 })).toMatchObject({ state: 'claimed' });
  });

  it('lets a waiter take the key over when the lease ends within its pendingWait, leaving no timer behind', async () => {
    const store = new InMemoryIdempotencyStore({ leaseTime: 1000, pendingWait: 5000 });
    await store.claim(claim);
    const waiting = store.claim({ ...claim, now: 200 });
    await vi.advanceTimersByTimeAsync(799);
    expect(await settledYet(waiting)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await waiting).toMatchObject({ state: 'claimed' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("sweeps a hung request's record once both its lease and its lifetime are over", async () => {
    const store = new InMemoryIdempotencyStore({ leaseTime: 5000 });
    await store.claim({ ...claim, expiresAt: 1000 });
    await store.claim({ ...claim, key: 'other', now: 1000, expiresAt: 2000 });
    expect(store.size).toBe(2);
    await store.claim({ ...claim, key: 'third', now: 5000, expiresAt: 9000 });
    expect(store.size).toBe(2);
  });

  it.each([
    ['below 100 ms', 99, /leaseTime must be .*got 99/],
    ['above a day', 86_400_001, /leaseTime must be .*got 86400001/],
    ['NaN', Number.NaN, /leaseTime must be .*got NaN/],
    ['fractional', 1000.5, /leaseTime must be .*got 1000.5/],
  ])('refuses a leaseTime that is %s, naming the value', (_label, leaseTime, pattern) => {
    expect(() => new InMemoryIdempotencyStore({ leaseTime })).toThrow(TypeError);
    expect(() => new InMemoryIdempotencyStore({ leaseTime })).toThrow(pattern);
  });
});

describe('POST /payment-links/ with Idempotency-Key after the first request hung past leaseTime', () => {
  it('creates the link for a retry, and the first request, resuming, stores nothing (409): one link for the key', async () => {
    let clock = NOW;
    let resume = (): void => {};
    const hung = new Promise<void>((resolve) => {
      resume = resolve;
    });
    let reached = (): void => {};
    const hangReached = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const directory = new InMemoryDirectory(SEEDS);
    const paymentMethods = directory.paymentMethods.bind(directory);
    let calls = 0;
    // The first request hangs while building its link, holding its key.
    directory.paymentMethods = async (tenant) => {
      calls += 1;
      if (calls === 1) {
        reached();
        await hung;
      }
      return paymentMethods(tenant);
    };
    const handler = makeHandler({
      directory,
      idempotency: new InMemoryIdempotencyStore({ leaseTime: 30_000, pendingWait: 0 }),
      now: () => clock,
    });
    const auth = await callers.auth();
    const first = handler(jsonRequest(auth, validBody(), KEY));
    await hangReached;
    clock = NOW + 30_000;
    const retry = await handler(jsonRequest(auth, validBody(), KEY));
    expect(retry.status).toBe(201);
    resume();
    const late = await first;
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ code: 'idempotency_key_in_use' });
    expect(await handler.store.list(TENANT_A)).toHaveLength(1);
    const replay = await handler(jsonRequest(auth, validBody(), KEY));
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((replay.body as PaymentLink).id).toBe((retry.body as PaymentLink).id);
  });
});
