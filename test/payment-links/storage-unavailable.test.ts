/**
 * A store whose database is unreachable: the handlers answer 503 `storage_unavailable` with
 * `Retry-After`, never 500; and a store writing the link with its idempotency record in one step.
 */
import { describe, expect, it } from 'vitest';
import {
  InMemoryIdempotencyStore,
  InMemoryPaymentLinkStore,
  type LinkCompletionOutcome,
  type PaymentLinkStore,
  StorageUnavailableError,
} from '../../src/payment-links/index.js';
import { TENANT_A, fieldErrors, jsonRequest, makeHandler, makeReadHandler, useCallers, validBody } from './support.js';

const callers = useCallers();
const down = () => Promise.reject(new StorageUnavailableError('the database is restarting', { retryAfter: 2 }));

function storeWith(overrides: Partial<PaymentLinkStore>): PaymentLinkStore {
  const memory = new InMemoryPaymentLinkStore();
  return {
    insert: (link) => memory.insert(link),
    get: (tenant, id) => memory.get(tenant, id),
    getByCode: (code) => memory.getByCode(code),
    list: (tenant) => memory.list(tenant),
    ...overrides,
  };
}

describe('a store that cannot reach its database', () => {
  it.each([
    ['storing a link without a key', {}],
    ['storing a link under a key', { 'idempotency-key': 'k-1' }],
  ])('answers 503 storage_unavailable with Retry-After when %s fails', async (_case, headers) => {
    const handler = makeHandler({ store: storeWith({ insert: down }) });
    const response = await handler(jsonRequest(await callers.auth(), validBody(), headers));
    expect([response.status, (response.body as { code: string }).code, response.headers['retry-after']]).toEqual([
      503,
      'storage_unavailable',
      '2',
    ]);
  });

  it('answers 503 when claiming the key fails, and frees nothing it never held', async () => {
    const handler = makeHandler({ idempotency: { claim: down, complete: down, release: down } });
    const response = await handler(jsonRequest(await callers.auth(), validBody(), { 'idempotency-key': 'k-1' }));
    expect([response.status, (response.body as { code: string }).code]).toEqual([503, 'storage_unavailable']);
  });

  it('leaves the key free for a retry when the link could not be stored', async () => {
    const idempotency = new InMemoryIdempotencyStore();
    const auth = await callers.auth();
    const failing = makeHandler({ idempotency, store: storeWith({ insert: down }) });
    expect((await failing(jsonRequest(auth, validBody(), { 'idempotency-key': 'k-1' }))).status).toBe(503);
    const working = makeHandler({ idempotency });
    expect((await working(jsonRequest(auth, validBody(), { 'idempotency-key': 'k-1' }))).status).toBe(201);
  });

  it('keeps the key of a stored link held when completing its record fails', async () => {
    const memory = new InMemoryIdempotencyStore();
    const released: unknown[] = [];
    const links = new InMemoryPaymentLinkStore();
    const handler = makeHandler({
      store: links,
      idempotency: {
        claim: (request) => memory.claim(request),
        complete: down,
        release: async (lease) => void released.push(lease),
      },
    });
    await handler(jsonRequest(await callers.auth(), validBody(), { 'idempotency-key': 'k-1' }));
    expect([released, links.size]).toEqual([[], 1]);
  });

  it('answers 201 with the stored link when completing its key fails, not a 503 a client would retry into a second link', async () => {
    const memory = new InMemoryIdempotencyStore();
    const links = new InMemoryPaymentLinkStore();
    const handler = makeHandler({
      store: links,
      idempotency: { claim: (request) => memory.claim(request), complete: down, release: (lease) => memory.release(lease) },
    });
    const response = await handler(jsonRequest(await callers.auth(), validBody(), { 'idempotency-key': 'k-1' }));
    const [stored] = await links.list(TENANT_A);
    expect([response.status, (response.body as { id?: string }).id]).toEqual([201, stored?.id]);
    expect(response.headers.location).toBe(`/payment-links/${stored?.id}`);
  });

  it.each([
    ['without a key', {}],
    ['under a key', { 'idempotency-key': 'k-1' }],
  ])('answers an invalid body 400 validation_failed %s while every store is down, touching none', async (_case, headers) => {
    const touched: string[] = [];
    const refuse = (name: string) => () => {
      touched.push(name);
      return down();
    };
    const directory = {
      findDepartment: refuse('findDepartment'),
      storeFor: refuse('storeFor'),
      resolveShopper: refuse('resolveShopper'),
      paymentMethods: refuse('paymentMethods'),
    };
    const handler = makeHandler({
      store: storeWith({ insert: refuse('insert') }),
      idempotency: { claim: refuse('claim'), complete: refuse('complete'), release: refuse('release') },
      directory,
    });
    const response = await handler(jsonRequest(await callers.auth(), { ...validBody(), amount: '-1' }, headers));
    expect([response.status, (response.body as { code: string }).code]).toEqual([400, 'validation_failed']);
    expect(fieldErrors(response).map((error) => error.field)).toEqual(['amount']);
    expect(touched.filter((name) => name !== 'findDepartment')).toEqual([]);
  });

  it('answers GET /payment-links/:id 503 storage_unavailable', async () => {
    const read = makeReadHandler({ store: storeWith({ get: down }) });
    const response = await read({
      auth: await callers.auth(),
      headers: {},
      params: { id: '00000000-0000-4000-8000-000000000001' },
    });
    expect([response.status, (response.body as { code: string }).code, response.headers['retry-after']]).toEqual([
      503,
      'storage_unavailable',
      '2',
    ]);
  });
});

describe('a store that writes the link and its idempotency record in one step', () => {
  function completing(outcome: LinkCompletionOutcome) {
    const memory = new InMemoryPaymentLinkStore();
    const calls: string[] = [];
    const store = storeWith({
      insert: async (link) => {
        calls.push('insert');
        return memory.insert(link);
      },
      insertCompleting: async (link) => {
        calls.push('insertCompleting');
        if (outcome === 'stored') await memory.insert(link);
        return outcome;
      },
      list: (tenant) => memory.list(tenant),
    });
    return { store, calls, memory };
  }

  it('uses it for a request with a key, and not the two-step insert', async () => {
    const { store, calls, memory } = completing('stored');
    const response = await makeHandler({ store })(jsonRequest(await callers.auth(), validBody(), { 'idempotency-key': 'k-1' }));
    expect([response.status, calls, (await memory.list(TENANT_A)).length]).toEqual([201, ['insertCompleting'], 1]);
  });

  it('answers 409 idempotency_key_in_use when the lease was lost, having stored nothing', async () => {
    const { store, memory } = completing('lease_lost');
    const response = await makeHandler({ store })(jsonRequest(await callers.auth(), validBody(), { 'idempotency-key': 'k-1' }));
    expect([response.status, (response.body as { code: string }).code, response.headers['retry-after']]).toEqual([
      409,
      'idempotency_key_in_use',
      '1',
    ]);
    expect(await memory.list(TENANT_A)).toEqual([]);
  });

  it('falls back to insert, then complete, when it cannot join the idempotency store', async () => {
    const { store, calls } = completing('unsupported');
    const idempotency = new InMemoryIdempotencyStore();
    const auth = await callers.auth();
    const handler = makeHandler({ store, idempotency });
    expect((await handler(jsonRequest(auth, validBody(), { 'idempotency-key': 'k-1' }))).status).toBe(201);
    expect(calls).toEqual(['insertCompleting', 'insert']);
    const replay = await handler(jsonRequest(auth, validBody(), { 'idempotency-key': 'k-1' }));
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });
});

describe('the Retry-After of a store failure', () => {
  it.each([
    ['NaN', Number.NaN, '1'],
    ['Infinity', Number.POSITIVE_INFINITY, '1'],
    ['a year', 31_536_000, '86400'],
    ['1e21 seconds', 1e21, '86400'],
  ])('is whole seconds from 1 to a day for a store giving %s, as the OpenAPI document states', async (_label, retryAfter, sent) => {
    const failing = () => Promise.reject(new StorageUnavailableError('the database is restarting', { retryAfter }));
    const handler = makeHandler({ store: storeWith({ insert: failing }) });
    const response = await handler(jsonRequest(await callers.auth(), validBody()));
    expect([response.status, response.headers['retry-after']]).toEqual([503, sent]);
  });
});
