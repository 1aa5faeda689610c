import { describe, expect, it } from 'vitest';
import { InMemoryDirectory, InMemoryPaymentLinkStore, type PaymentLink, type StoredPaymentLink } from '../../src/payment-links/index.js';
import {
  CARDIOLOGY_B,
  STORE_B,
  TENANT_A,
  TENANT_B,
  fieldErrors,
  jsonRequest,
  makeHandler,
  makeReadHandler,
  useCallers,
  validBody,
} from './support.js';

const callers = useCallers();

describe('tenant isolation', () => {
  it('resolves a department reference in the caller tenant only', async () => {
    const handler = makeHandler();
    const link = (await handler(jsonRequest(await callers.auth({ tenant_ern: TENANT_B }), validBody()))).body as PaymentLink;
    expect(link).toMatchObject({
      department: CARDIOLOGY_B,
      store: STORE_B,
      allowed_payment_methods: ['mc'],
      blocked_payment_methods: ['walley'],
    });
  });

  it('does not find another tenant department', async () => {
    const handler = makeHandler();
    const response = await handler(
      jsonRequest(await callers.auth({ tenant_ern: TENANT_B }), validBody({ department: '//departments/radiology' })),
    );
    expect(fieldErrors(response)).toEqual([{ field: 'department', code: 'not_found' }]);
  });

  it('gives an unknown tenant no departments at all', async () => {
    const handler = makeHandler();
    const response = await handler(jsonRequest(await callers.auth({ tenant_ern: 'ern:acme/tenants/t-9' }), validBody()));
    expect(fieldErrors(response)).toEqual([{ field: 'department', code: 'not_found' }]);
  });

  it('gives one customer reference a different shopper in each tenant', async () => {
    const handler = makeHandler();
    const inA = (await handler(jsonRequest(await callers.auth(), validBody()))).body as PaymentLink;
    const inB = (await handler(jsonRequest(await callers.auth({ tenant_ern: TENANT_B }), validBody()))).body as PaymentLink;
    expect(inA.shopper).not.toBe(inB.shopper);
  });

  it('lists and reads each tenant links only', async () => {
    const handler = makeHandler();
    const inA = (await handler(jsonRequest(await callers.auth(), validBody()))).body as PaymentLink;
    await handler(jsonRequest(await callers.auth({ tenant_ern: TENANT_B }), validBody()));
    expect((await handler.store.list(TENANT_A)).map((link) => link.id)).toEqual([inA.id]);
    expect(await handler.store.get(TENANT_B, inA.id)).toBeNull();
  });
});

describe('a department without a store', () => {
  it('is refused 400 no_store naming the department, and nothing is stored', async () => {
    const directory = new InMemoryDirectory([{ tenant: TENANT_A, departments: [{ ref: 'cardiology' }] }]);
    const handler = makeHandler({ directory });
    const response = await handler(jsonRequest(await callers.auth(), validBody()));
    const [error] = (response.body as { errors: { field: string; code: string; message: string }[] }).errors;
    expect([error?.field, error?.code]).toEqual(['department', 'no_store']);
    expect(error?.message).toContain('got "cardiology"');
    expect(await handler.store.list(TENANT_A)).toEqual([]);
  });
});

describe('GET /payment-links/:id', () => {
  it('returns a link of the caller tenant', async () => {
    const create = makeHandler();
    const read = makeReadHandler({ store: create.store });
    const auth = await callers.auth();
    const created = await create(jsonRequest(auth, validBody()));
    const link = created.body as PaymentLink;
    const response = await read({ auth, headers: {}, params: { id: link.id } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(link);
  });

  it('answers 404 for another tenant link, as for a link that does not exist', async () => {
    const create = makeHandler();
    const read = makeReadHandler({ store: create.store });
    const link = (await create(jsonRequest(await callers.auth(), validBody()))).body as PaymentLink;
    const other = await read({
      auth: await callers.auth({ tenant_ern: TENANT_B }),
      headers: {},
      params: { id: link.id },
    });
    const missing = await read({
      auth: await callers.auth(),
      headers: {},
      params: { id: '00000000-0000-4000-8000-999999999999' },
    });
    for (const response of [other, missing]) {
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ code: 'payment_link_not_found' });
    }
  });

  it("names the id asked for in a 404, in the same words for another tenant's link as for none", async () => {
    const create = makeHandler();
    const read = makeReadHandler({ store: create.store });
    const link = (await create(jsonRequest(await callers.auth(), validBody()))).body as PaymentLink;
    const unknown = '00000000-0000-4000-8000-999999999999';
    const other = await read({ auth: await callers.auth({ tenant_ern: TENANT_B }), headers: {}, params: { id: link.id } });
    const missing = await read({ auth: await callers.auth(), headers: {}, params: { id: unknown } });
    const detail = (response: { body: unknown }): string => (response.body as { detail: string }).detail;
    expect(detail(other)).toContain(`got "${link.id}"`);
    expect(detail(other).replace(link.id, unknown)).toBe(detail(missing));
  });

  it('names a path id that is no UUID quoted and escaped in its 404', async () => {
    const read = makeReadHandler({ store: makeHandler().store });
    const response = await read({ auth: await callers.auth(), headers: {}, params: { id: '../etc\u0000' } });
    expect((response.body as { detail: string }).detail).toContain('got "../etc\\u0000"');
  });

  it('answers 404 for an id that is not a UUID', async () => {
    const read = makeReadHandler({ store: makeHandler().store });
    const response = await read({ auth: await callers.auth(), headers: {}, params: { id: '../etc' } });
    expect(response.status).toBe(404);
  });

  it.each<[label: string, tamper: (link: StoredPaymentLink) => unknown, found: string]>([
    ["another tenant's link", (link) => ({ ...link, tenant: TENANT_B }), TENANT_B],
    ['another link', (link) => ({ ...link, id: '00000000-0000-4000-8000-0000000000ff' }), '00000000-0000-4000-8000-0000000000ff'],
    ['no link at all', () => 'hello', 'none'],
  ])(
    'refuses to send a stored record holding %s, naming what it holds (attack: a links row written by hand)',
    async (_label, tamper, found) => {
      const create = makeHandler();
      const link = (await create(jsonRequest(await callers.auth(), validBody()))).body as PaymentLink;
      const store = new InMemoryPaymentLinkStore();
      const tampered = {
        insert: (stored: StoredPaymentLink) => store.insert(stored),
        get: async (tenant: string, id: string) => {
          const stored = await create.store.get(tenant, id);
          return stored === null ? null : (tamper(stored) as StoredPaymentLink);
        },
        getByCode: (code: string) => store.getByCode(code),
        list: (tenant: string) => store.list(tenant),
      };
      const read = makeReadHandler({ store: tampered });
      const answer = read({ auth: await callers.auth(), headers: {}, params: { id: link.id } });
      await expect(answer).rejects.toThrow(found);
      await expect(answer).rejects.toThrow(link.id);
    },
  );

  it('needs pay:processPayments', async () => {
    const read = makeReadHandler({ store: makeHandler().store });
    const response = await read({
      auth: await callers.auth({ scope: 'hub:subscribe' }),
      headers: {},
      params: { id: '00000000-0000-4000-8000-000000000001' },
    });
    expect(response.status).toBe(403);
  });
});
