/**
 * A body that repeats a member name is refused before any field is read: `JSON.parse` keeps the
 * last value, a proxy or a log may keep the first, and in a money API the two must not differ.
 */
import { describe, expect, it } from 'vitest';
import type { HandlerRequest } from '../../src/payment-links/index.js';
import { TENANT_A, fieldErrors, makeHandler, useCallers, validBody } from './support.js';

const callers = useCallers();

async function send(body: HandlerRequest['body']) {
  const handler = makeHandler();
  const response = await handler({ auth: await callers.auth(), headers: { 'content-type': 'application/json' }, body });
  return { response, stored: await handler.store.list(TENANT_A) };
}

/** The valid body's JSON with `extra` written in front of its first member. */
function withLeading(extra: string): string {
  return JSON.stringify(validBody()).replace('{', `{${extra},`);
}

describe('POST /payment-links/ with a repeated member name', () => {
  it('a repeated amount is 400 naming amount, and nothing is stored (attack: a proxy reads 10.00, the handler 125.5)', async () => {
    const { response, stored } = await send(withLeading('"amount":"10.00"'));
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toBe('application/problem+json');
    expect(response.body).toMatchObject({
      code: 'validation_failed',
      status: 400,
      detail: expect.stringContaining('amount'),
    });
    expect(fieldErrors(response)).toEqual([{ field: 'amount', code: 'duplicate_field' }]);
    expect(stored).toEqual([]);
  });

  it.each([
    ['a name written once with an escape', '"\\u0061mount":"10.00"', 'amount'],
    ['a repeated meta key', null, 'meta.order_id'],
    ['a repeated line-item member', null, 'payment_details.line_items[0].amount'],
    ['a name that is not an identifier', '"odd name":1,"odd name":2', 'odd name'],
  ])('%s is named in the field error', async (_label, extra, field) => {
    let body: string;
    if (extra !== null) body = withLeading(extra);
    else if (field === 'meta.order_id') body = JSON.stringify(validBody()).replace('"meta":{', '"meta":{"order_id":"A-0",');
    else {
      const items = { line_items: [{ description: 'x', quantity: 1, amount: '125.5' }] };
      body = JSON.stringify(validBody({ payment_details: items })).replace('"amount":"125.5"}', '"amount":"1","amount":"125.5"}');
    }
    const { response, stored } = await send(body);
    const expected = field === 'odd name' ? '["odd name"]' : field;
    expect(fieldErrors(response)).toEqual([{ field: expected, code: 'duplicate_field' }]);
    expect(stored).toEqual([]);
  });

  it('a repeated member 20 000 levels deep is named by a path cut to at most 201 characters (attack: an answer three times the body)', async () => {
    const depth = 20_000;
    const { response } = await send(`{"meta":${'['.repeat(depth)}{"a":1,"a":2}${']'.repeat(depth)}}`);
    const [error] = (response.body as { errors: { field: string; code: string }[] }).errors;
    expect(error?.code).toBe('duplicate_field');
    expect(error?.field.startsWith('meta[0][0]')).toBe(true);
    expect(error?.field.length).toBeLessThanOrEqual(201);
    expect(JSON.stringify(response.body).length).toBeLessThan(2000);
  });

  it('a repeated name that is not an identifier is named quoted and escaped', async () => {
    const { response } = await send(withLeading('"odd\\u202ename":1,"odd\\u202ename":2'));
    expect(fieldErrors(response)).toEqual([{ field: '["odd\\u202ename"]', code: 'duplicate_field' }]);
  });

  it('a repeated name inside a string value is not a repeated field', async () => {
    const { response } = await send(JSON.stringify(validBody({ description: '{"amount":"1","amount":"2"}' })));
    expect(response.status).toBe(201);
  });

  it('the same name in two different objects is not a repeated field', async () => {
    const { response } = await send(JSON.stringify(validBody({ meta: { amount: '1', currency: 'EUR' } })));
    expect(response.status).toBe(201);
  });

  it('a repeated field in a streamed body is refused too', async () => {
    async function* chunks() {
      const text = withLeading('"currency":"DKK"');
      yield new TextEncoder().encode(text.slice(0, 7));
      yield new TextEncoder().encode(text.slice(7));
    }
    const { response, stored } = await send(chunks());
    expect(fieldErrors(response)).toEqual([{ field: 'currency', code: 'duplicate_field' }]);
    expect(stored).toEqual([]);
  });
});
