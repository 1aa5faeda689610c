import { describe, expect, it } from 'vitest';
import { LINK_LIMITS, META_LIMITS } from '../../src/payment-links/index.js';
import { TENANT_A, fieldErrors, jsonRequest, makeHandler, useCallers, validBody } from './support.js';

const callers = useCallers();

const line = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  quantity: 1,
  description: 'Consultation',
  amount_excluding_tax: '100.4',
  tax_percentage: '25',
  tax_amount: '25.1',
  amount_including_tax: '125.5',
  ...overrides,
});

const withLines = (...lines: unknown[]): Record<string, unknown> => validBody({ payment_details: { line_items: lines } });

const without = (...names: string[]): Record<string, unknown> => {
  const body = validBody();
  for (const name of names) delete body[name];
  return body;
};

type Case = [label: string, body: Record<string, unknown>, field: string, code: string];

const cases: Case[] = [
  // amount
  ['amount missing', without('amount'), 'amount', 'required'],
  ['amount null', validBody({ amount: null }), 'amount', 'required'],
  ['amount as a JSON number', validBody({ amount: 12.5 }), 'amount', 'invalid_type'],
  ['amount with a comma', validBody({ amount: '12,50' }), 'amount', 'invalid_format'],
  ['amount with an exponent', validBody({ amount: '1e2' }), 'amount', 'invalid_format'],
  ['amount with five fractional digits', validBody({ amount: '1.00001' }), 'amount', 'too_many_decimals'],
  ['amount zero', validBody({ amount: '0.0000' }), 'amount', 'out_of_range'],
  ['amount negative', validBody({ amount: '-5' }), 'amount', 'out_of_range'],
  ['amount of sixteen integer digits', validBody({ amount: '1000000000000000' }), 'amount', 'out_of_range'],
  // currency
  ['currency missing', without('currency'), 'currency', 'required'],
  ['currency lower case', validBody({ currency: 'eur' }), 'currency', 'invalid_format'],
  ['currency of four letters', validBody({ currency: 'EURO' }), 'currency', 'invalid_length'],
  ['currency not in ISO 4217', validBody({ currency: 'ABC' }), 'currency', 'unknown_currency'],
  ['currency withdrawn from ISO 4217', validBody({ currency: 'HRK' }), 'currency', 'unknown_currency'],
  ['currency "no currency"', validBody({ currency: 'XXX' }), 'currency', 'unknown_currency'],
  ['currency as a number', validBody({ currency: 978 }), 'currency', 'invalid_type'],
  // department and shopper
  ['department missing', without('department'), 'department', 'required'],
  ['department not a reference', validBody({ department: 'cardiology' }), 'department', 'invalid_format'],
  ['department a customer reference', validBody({ department: '//customers/c-1' }), 'department', 'invalid_format'],
  ['department unknown in the tenant', validBody({ department: '//departments/oncology' }), 'department', 'not_found'],
  ['shopper missing', without('shopper'), 'shopper', 'required'],
  ['shopper a department reference', validBody({ shopper: '//departments/cardiology' }), 'shopper', 'invalid_format'],
  ['shopper with a slash in its id', validBody({ shopper: '//customers/a/b' }), 'shopper', 'invalid_format'],
  // contact
  ['neither email nor phone', without('email'), 'email', 'email_or_phone_required'],
  ['email without a domain dot', validBody({ email: 'jane@example' }), 'email', 'invalid_format'],
  ['email with a space', validBody({ email: 'jane doe@example.com' }), 'email', 'invalid_format'],
  ['email too long', validBody({ email: `${'a'.repeat(250)}@example.com` }), 'email', 'invalid_length'],
  // Invisible: the address the shopper is shown is not the one the link is sent to.
  ['email with a zero-width space in its domain', validBody({ email: 'jane@exa\u200bmple.com' }), 'email', 'invalid_format'],
  ['email with a right-to-left override', validBody({ email: 'jane@\u202emoc.elpmaxe' }), 'email', 'invalid_format'],
  ['email with a soft hyphen', validBody({ email: 'jane@exam\u00adple.com' }), 'email', 'invalid_format'],
  ['phone without a plus', validBody({ phone: '4512345678' }), 'phone', 'invalid_format'],
  ['phone with spaces', validBody({ phone: '+45 12 34 56 78' }), 'phone', 'invalid_format'],
  ['phone too short', validBody({ phone: '+451234' }), 'phone', 'invalid_format'],
  ['phone as a number', validBody({ phone: 4512345678 }), 'phone', 'invalid_type'],
  // tokenize, duration, locale, description
  ['tokenize as a boolean', validBody({ tokenize: false }), 'tokenize', 'invalid_type'],
  ['tokenize another word', validBody({ tokenize: 'maybe' }), 'tokenize', 'invalid_value'],
  ['duration as a string', validBody({ duration: '20160' }), 'duration', 'invalid_type'],
  ['duration a fraction', validBody({ duration: 1.5 }), 'duration', 'invalid_type'],
  ['duration zero', validBody({ duration: 0 }), 'duration', 'out_of_range'],
  ['duration beyond 365 days', validBody({ duration: LINK_LIMITS.maxDuration + 1 }), 'duration', 'out_of_range'],
  ['locale with an underscore', validBody({ locale: 'da_DK' }), 'locale', 'invalid_format'],
  ['locale region in lower case', validBody({ locale: 'da-dk' }), 'locale', 'invalid_format'],
  ['locale language only', validBody({ locale: 'da' }), 'locale', 'invalid_format'],
  ['description too long', validBody({ description: 'x'.repeat(LINK_LIMITS.maxDescriptionLength + 1) }), 'description', 'invalid_length'],
  ['description as an object', validBody({ description: { text: 'x' } }), 'description', 'invalid_type'],
  // Text no stored text can hold (PostgreSQL's jsonb refuses both): a NUL, a lone surrogate from a "\\ud800" escape.
  ['description holding U+0000', validBody({ description: 'a\u0000b' }), 'description', 'invalid_format'],
  ['description holding a lone high surrogate', validBody({ description: 'a\ud800b' }), 'description', 'invalid_format'],
  ['email holding a lone surrogate', validBody({ email: 'jane\udfff@example.com' }), 'email', 'invalid_format'],
  // meta
  ['meta as an array', validBody({ meta: ['a'] }), 'meta', 'invalid_type'],
  ['meta as a string', validBody({ meta: 'order=1' }), 'meta', 'invalid_type'],
  ['meta value a number', validBody({ meta: { order_id: 1 } }), 'meta.order_id', 'invalid_type'],
  ['meta value an object', validBody({ meta: { nested: { a: 'b' } } }), 'meta.nested', 'invalid_type'],
  ['meta value too long', validBody({ meta: { note: 'x'.repeat(META_LIMITS.maxValueLength + 1) } }), 'meta.note', 'invalid_length'],
  [
    'meta key too long',
    validBody({ meta: { ['k'.repeat(META_LIMITS.maxKeyLength + 1)]: 'v' } }),
    `meta.${'k'.repeat(META_LIMITS.maxKeyLength + 1)}`,
    'invalid_length',
  ],
  ['meta key empty', validBody({ meta: { '': 'v' } }), 'meta[""]', 'invalid_length'],
  ['meta value holding a lone low surrogate', validBody({ meta: { note: '\udc00' } }), 'meta.note', 'invalid_format'],
  ['meta key holding U+0000', validBody({ meta: { 'a\u0000': 'v' } }), 'meta["a\\u0000"]', 'invalid_format'],
  ['meta key "constructor"', validBody({ meta: { constructor: 'v' } }), 'meta.constructor', 'reserved_key'],
  [
    'meta with too many entries',
    validBody({
      meta: Object.fromEntries(Array.from({ length: META_LIMITS.maxEntries + 1 }, (_, i) => [`k${i}`, 'v'])),
    }),
    'meta',
    'invalid_count',
  ],
  // payment_details
  ['payment_details as an array', validBody({ payment_details: [] }), 'payment_details', 'invalid_type'],
  ['payment_details without line_items', validBody({ payment_details: {} }), 'payment_details.line_items', 'required'],
  [
    'payment_details with an unknown member',
    validBody({ payment_details: { line_items: [line()], total: '1' } }),
    'payment_details.total',
    'unknown_field',
  ],
  ['line_items empty', withLines(), 'payment_details.line_items', 'invalid_count'],
  ['line_items not an array', validBody({ payment_details: { line_items: line() } }), 'payment_details.line_items', 'invalid_type'],
  ['a line that is not an object', withLines('x'), 'payment_details.line_items[0]', 'invalid_type'],
  ['a line without quantity', withLines(line({ quantity: undefined })), 'payment_details.line_items[0].quantity', 'required'],
  ['a line with quantity 0', withLines(line({ quantity: 0 })), 'payment_details.line_items[0].quantity', 'out_of_range'],
  ['a line with a fractional quantity', withLines(line({ quantity: 1.5 })), 'payment_details.line_items[0].quantity', 'invalid_type'],
  ['a line without description', withLines(line({ description: undefined })), 'payment_details.line_items[0].description', 'required'],
  ['a line with an empty description', withLines(line({ description: '' })), 'payment_details.line_items[0].description', 'invalid_length'],
  ['a line with a numeric id', withLines(line({ id: 7 })), 'payment_details.line_items[0].id', 'invalid_type'],
  [
    'a line description holding a lone surrogate',
    withLines(line({ description: 'x\ud83d' })),
    'payment_details.line_items[0].description',
    'invalid_format',
  ],
  [
    'a line amount as a JSON number',
    withLines(line({ amount_excluding_tax: 100.4 })),
    'payment_details.line_items[0].amount_excluding_tax',
    'invalid_type',
  ],
  [
    'a negative tax amount',
    withLines(line({ tax_amount: '-25.1', amount_excluding_tax: '150.6' })),
    'payment_details.line_items[0].tax_amount',
    'out_of_range',
  ],
  [
    'a tax amount of minus zero (no sign is allowed)',
    withLines(line({ tax_amount: '-0.00', amount_excluding_tax: '125.5' })),
    'payment_details.line_items[0].tax_amount',
    'out_of_range',
  ],
  [
    'a tax percentage of minus zero',
    withLines(line({ tax_percentage: '-0' })),
    'payment_details.line_items[0].tax_percentage',
    'out_of_range',
  ],
  [
    'a tax percentage above 100',
    withLines(line({ tax_percentage: '100.01' })),
    'payment_details.line_items[0].tax_percentage',
    'out_of_range',
  ],
  [
    'a line amount with five fractional digits',
    withLines(line({ amount_including_tax: '125.50000' })),
    'payment_details.line_items[0].amount_including_tax',
    'too_many_decimals',
  ],
  [
    'a line whose parts do not add up',
    withLines(line({ tax_amount: '25.0' })),
    'payment_details.line_items[0].amount_including_tax',
    'amount_mismatch',
  ],
  ['a line with an unknown member', withLines(line({ discount: '1' })), 'payment_details.line_items[0].discount', 'unknown_field'],
  // unknown fields
  ['an unknown top-level field', validBody({ amount_cents: 12550 }), 'amount_cents', 'unknown_field'],
  ['a misspelt field', validBody({ curency: 'EUR' }), 'curency', 'unknown_field'],
];

describe('POST /payment-links/ field rules', () => {
  it.each(cases)('refuses %s: %s %s', async (_label, body, field, code) => {
    const handler = makeHandler();
    const response = await handler(jsonRequest(await callers.auth(), body));
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toBe('application/problem+json');
    expect(fieldErrors(response)).toContainEqual({ field, code });
    expect(await handler.store.list(TENANT_A)).toEqual([]);
  });

  it('reports every invalid field at once, with paths into line items', async () => {
    const handler = makeHandler();
    const body = validBody({
      amount: '10.00001',
      currency: 'eur',
      department: '//departments/oncology',
      email: 'nope',
      duration: -1,
      extra: true,
      payment_details: {
        line_items: [line(), line(), line({ tax_amount: '1', amount_including_tax: '2' })],
      },
    });
    const response = await handler(jsonRequest(await callers.auth(), body));
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      type: 'urn:paygate-auth:problem:validation_failed',
      title: 'Invalid request fields',
      status: 400,
      code: 'validation_failed',
    });
    expect(fieldErrors(response)).toEqual([
      { field: 'amount', code: 'too_many_decimals' },
      { field: 'currency', code: 'invalid_format' },
      { field: 'email', code: 'invalid_format' },
      { field: 'duration', code: 'out_of_range' },
      { field: 'payment_details.line_items[2].amount_including_tax', code: 'amount_mismatch' },
      { field: 'extra', code: 'unknown_field' },
      { field: 'department', code: 'not_found' },
    ]);
    for (const error of (response.body as { errors: { message: string }[] }).errors) expect(error.message).not.toBe('');
  });

  it.each<[label: string, body: Record<string, unknown>, field: string, found: string]>([
    ['an amount with an exponent', validBody({ amount: '1e2' }), 'amount', 'got "1e2"'],
    ['an amount with five decimals', validBody({ amount: '12.34567' }), 'amount', 'got "12.34567"'],
    ['an amount of sixteen integer digits', validBody({ amount: '1234567890123456' }), 'amount', 'got "1234567890123456"'],
    ['a zero amount', validBody({ amount: '0.00' }), 'amount', 'got "0.00"'],
    ['a lower-case currency', validBody({ currency: 'eur' }), 'currency', 'got "eur"'],
    ['an e-mail address without @', validBody({ email: 'jane.example.com' }), 'email', 'got "jane.example.com"'],
    ['a department of another shape', validBody({ department: 'cardiology' }), 'department', 'got "cardiology"'],
    ['a tokenize value', validBody({ tokenize: 'true' }), 'tokenize', 'got "true"'],
    ['a duration out of range', validBody({ duration: 600_000 }), 'duration', 'got 600000'],
    ['a fractional duration', validBody({ duration: 1.5 }), 'duration', 'got 1.5'],
    ['a description too long', validBody({ description: 'x'.repeat(1001) }), 'description', 'got 1001'],
    ['a meta value too long', validBody({ meta: { note: 'x'.repeat(501) } }), 'meta.note', 'got 501'],
    ['too many line items', withLines(...Array(101).fill(line())), 'payment_details.line_items', 'got 101'],
  ])('names the value found for %s', async (_label, body, field, found) => {
    const response = await makeHandler()(jsonRequest(await callers.auth(), body));
    const errors = (response.body as { errors: { field: string; message: string }[] }).errors;
    expect(errors.find((error) => error.field === field)?.message).toContain(found);
  });

  it('names a long value found cut and escaped, never whole', async () => {
    const amount = `1.5\u202e${'9'.repeat(10_000)}`;
    const response = await makeHandler()(jsonRequest(await callers.auth(), validBody({ amount })));
    const message = (response.body as { errors: { message: string }[] }).errors[0]?.message ?? '';
    expect(message).toContain('got "1.5\\u202e999');
    expect(message).not.toContain('\u202e');
    expect(message.length).toBeLessThan(300);
  });

  it.each([
    ['an unknown member', (name: string) => validBody({ [name]: 1 }), ''],
    ['a meta key', (name: string) => validBody({ meta: { [name]: 'v' } }), 'meta'],
  ])(
    'names %s of 10 000 characters by a path cut to its first 80 (attack: an answer as large as the body)',
    async (_label, body, parent) => {
      const name = 'k'.repeat(10_000);
      const response = await makeHandler()(jsonRequest(await callers.auth(), body(name)));
      const [error] = (response.body as { errors: { field: string }[] }).errors;
      expect(error?.field).toBe(`${parent}["${'k'.repeat(80)}…"]`);
      expect(JSON.stringify(response.body).length).toBeLessThan(1000);
    },
  );

  it('checks that the lines add up to the amount exactly', async () => {
    const handler = makeHandler();
    const response = await handler(
      jsonRequest(
        await callers.auth(),
        validBody({
          amount: '0.3',
          payment_details: {
            line_items: [
              line({ amount_excluding_tax: '0.1', tax_amount: '0', tax_percentage: '0', amount_including_tax: '0.1' }),
              line({ amount_excluding_tax: '0.2', tax_amount: '0', tax_percentage: '0', amount_including_tax: '0.2' }),
            ],
          },
        }),
      ),
    );
    expect(response.status).toBe(201);
  });

  it('refuses lines that add up to another amount, naming both sums', async () => {
    const handler = makeHandler();
    const response = await handler(jsonRequest(await callers.auth(), withLines(line(), line())));
    expect(fieldErrors(response)).toEqual([{ field: 'payment_details.line_items', code: 'amount_mismatch' }]);
    expect(JSON.stringify(response.body)).toContain('251.0000');
  });

  it('does not multiply line amounts by quantity: amounts are per line', async () => {
    const handler = makeHandler();
    const response = await handler(jsonRequest(await callers.auth(), withLines(line({ quantity: 3 }))));
    expect(response.status).toBe(201);
  });

  it('accepts a link with many lines whose cents add up exactly', async () => {
    const handler = makeHandler();
    const lines = Array.from({ length: 100 }, () =>
      line({ amount_excluding_tax: '0.08', tax_percentage: '25', tax_amount: '0.02', amount_including_tax: '0.1' }),
    );
    const response = await handler(jsonRequest(await callers.auth(), validBody({ amount: '10', payment_details: { line_items: lines } })));
    expect(response.status).toBe(201);
  });

  it('accepts null for an optional field as if it were absent', async () => {
    const handler = makeHandler();
    const response = await handler(
      jsonRequest(await callers.auth(), validBody({ phone: null, locale: null, meta: null, payment_details: null })),
    );
    expect(response.status).toBe(201);
  });

  it('accepts both tokenize values', async () => {
    const handler = makeHandler();
    const auth = await callers.auth();
    for (const tokenize of ['yes', 'no']) {
      expect((await handler(jsonRequest(auth, validBody({ tokenize })))).status).toBe(201);
    }
  });

  it('refuses a meta key "__proto__" without touching any prototype', async () => {
    const handler = makeHandler();
    const response = await handler(
      jsonRequest(
        await callers.auth(),
        '{"amount":"1","currency":"EUR","department":"//departments/cardiology","shopper":"//customers/c-1","email":"a@b.co","meta":{"__proto__":{"polluted":"yes"}}}',
      ),
    );
    expect(fieldErrors(response)).toEqual([{ field: 'meta.__proto__', code: 'reserved_key' }]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('registers no shopper when the request is refused', async () => {
    const handler = makeHandler();
    const response = await handler(jsonRequest(await callers.auth(), validBody({ shopper: '//customers/brand-new', amount: '0' })));
    expect(response.status).toBe(400);
    const directory = handler.directory as unknown as { shoppers(tenant: string): readonly { ref: string }[] };
    expect(directory.shoppers(TENANT_A).map((shopper) => shopper.ref)).toEqual(['c-100']);
  });
});

describe('POST /payment-links/ naming unknown members', () => {
  /** `count` unknown members `u0`, `u1`… */
  const unknown = (count: number): Record<string, number> => Object.fromEntries(Array.from({ length: count }, (_, i) => [`u${i}`, 0]));
  const unknownErrors = (response: { body: unknown }) =>
    (response.body as { errors: { field: string; code: string; message: string }[] }).errors.filter(
      (error) => error.code === 'unknown_field',
    );

  it('names 8 unknown members and counts the rest in a ninth error (attack: 5 000 unknown members answered with 500 KB)', async () => {
    const response = await makeHandler()(jsonRequest(await callers.auth(), validBody(unknown(5000))));
    expect(response.status).toBe(400);
    const errors = unknownErrors(response);
    expect(errors.map((error) => error.field)).toEqual(['u0', 'u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7', 'u8']);
    expect(errors[8]?.message).toContain('"u8" and 4991 more');
    expect(JSON.stringify(response.body).length).toBeLessThan(4000);
  });

  it('bounds the unknown members of each line item the same way', async () => {
    const response = await makeHandler()(jsonRequest(await callers.auth(), withLines(line(unknown(5000)))));
    const errors = unknownErrors(response);
    expect(errors.map((error) => error.field)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8].map((i) => `payment_details.line_items[0].u${i}`));
    expect(errors[8]?.message).toContain('"u8" and 4991 more');
  });

  it('names each of 9 unknown members, counting none', async () => {
    const response = await makeHandler()(jsonRequest(await callers.auth(), validBody(unknown(9))));
    const errors = unknownErrors(response);
    expect(errors).toHaveLength(9);
    expect(errors.map((error) => error.message).join(' ')).not.toContain('more');
  });
});

describe('POST /payment-links/ bounding the errors listed', () => {
  it('lists the first 50 of 300 invalid fields and counts them all in detail (attack: a 400 larger than the body)', async () => {
    const lines = Array.from({ length: 100 }, () => line({ quantity: 'x'.repeat(80), description: 0, id: 0 }));
    const request = jsonRequest(await callers.auth(), validBody({ amount: '12550', payment_details: { line_items: lines } }));
    const response = await makeHandler()(request);
    const body = response.body as { detail: string; errors: { field: string }[] };
    expect(body.errors).toHaveLength(50);
    expect(body.errors[0]?.field).toBe('payment_details.line_items[0].quantity');
    expect(body.detail).toMatch(/^300 fields are invalid; the first 50/);
    expect(JSON.stringify(body).length).toBeLessThan(10_000);
  });

  it('lists all of 50 invalid fields', async () => {
    const lines = Array.from({ length: 25 }, () => line({ description: 0, id: 0 }));
    const request = jsonRequest(await callers.auth(), validBody({ amount: '3137.5', payment_details: { line_items: lines } }));
    const body = (await makeHandler()(request)).body as { detail: string; errors: unknown[] };
    expect(body.errors).toHaveLength(50);
    expect(body.detail).toBe('50 fields are invalid; see errors.');
  });
});

describe('POST /payment-links/ advising on an unknown member', () => {
  const messageOf = (response: { body: unknown }, field: string): string =>
    (response.body as { errors: { field: string; message: string }[] }).errors.find((error) => error.field === field)?.message ?? '';

  it('names the field a misspelt member nearly spells', async () => {
    const response = await makeHandler()(jsonRequest(await callers.auth(), validBody({ curency: 'EUR' })));
    expect(messageOf(response, 'curency')).toContain('did you mean "currency"?');
  });

  it('names the fields of a line item when an unknown member is near none of them', async () => {
    const response = await makeHandler()(jsonRequest(await callers.auth(), withLines(line({ discount_code: 'X' }))));
    const message = messageOf(response, 'payment_details.line_items[0].discount_code');
    expect(message).toContain('remove it');
    expect(message).toContain('quantity, amount_excluding_tax, tax_percentage, description, id, tax_amount, amount_including_tax');
  });
});

describe('POST /payment-links/ naming an unknown department', () => {
  it('names a department id of 256 characters cut to its first 80, as every value found is', async () => {
    const id = 'd'.repeat(256);
    const response = await makeHandler()(jsonRequest(await callers.auth(), validBody({ department: `//departments/${id}` })));
    const [error] = (response.body as { errors: { field: string; code: string; message: string }[] }).errors;
    expect(error).toMatchObject({ field: 'department', code: 'not_found' });
    expect(error?.message).toContain(`"${'d'.repeat(80)}…"`);
    expect(error?.message).not.toContain('d'.repeat(81));
  });
});

describe('POST /payment-links/ phone', () => {
  it('says a country code never starts with 0 when refusing "+0…"', async () => {
    const handler = makeHandler();
    const response = await handler(jsonRequest(await callers.auth(), validBody({ phone: '+04512345678' })));
    const [error] = (response.body as { errors: { field: string; code: string; message: string }[] }).errors;
    expect([error?.field, error?.code]).toEqual(['phone', 'invalid_format']);
    expect(error?.message).toContain('the first not 0');
  });
});

describe('POST /payment-links/ amount as a JSON number', () => {
  it('names the number found, as it was parsed', async () => {
    const response = await makeHandler()(
      jsonRequest(
        await callers.auth(),
        '{"amount":12.50,"currency":"EUR","department":"//departments/cardiology","shopper":"//customers/c-100","email":"a@b.co"}',
      ),
    );
    const [error] = (response.body as { errors: { field: string; code: string; message: string }[] }).errors;
    expect([error?.field, error?.code]).toEqual(['amount', 'invalid_type']);
    expect(error?.message).toContain('got 12.5');
  });
});

describe('POST /payment-links/ a line whose parts do not add up', () => {
  it('names the amount_including_tax found beside the sum expected', async () => {
    const response = await makeHandler()(jsonRequest(await callers.auth(), withLines(line({ tax_amount: '25.0' }))));
    const error = (response.body as { errors: { code: string; message: string }[] }).errors.find((e) => e.code === 'amount_mismatch');
    expect(error?.message).toContain('125.4000');
    expect(error?.message).toContain('got 125.5000');
  });
});

describe('POST /payment-links/ currency', () => {
  const messageFor = async (currency: string): Promise<string | undefined> => {
    const response = await makeHandler()(jsonRequest(await callers.auth(), validBody({ currency })));
    return (response.body as { errors: { message: string }[] }).errors[0]?.message;
  };

  it('names an unknown code with "got" and what to send instead', async () => {
    expect(await messageFor('ABC')).toContain('got "ABC"');
  });

  it('offers the upper-case code for a known code sent in lower case', async () => {
    expect(await messageFor('eur')).toContain('did you mean "EUR"?');
  });
});

describe('POST /payment-links/ locale', () => {
  it('says the language is two lower-case letters when refusing "EN-GB"', async () => {
    const handler = makeHandler();
    const response = await handler(jsonRequest(await callers.auth(), validBody({ locale: 'EN-GB' })));
    const [error] = (response.body as { errors: { field: string; code: string; message: string }[] }).errors;
    expect([error?.field, error?.code]).toEqual(['locale', 'invalid_format']);
    expect(error?.message).toContain('two lower-case letters');
  });
});

describe('POST /payment-links/ text no store can hold', () => {
  it('names the U+0000 and the lone surrogate found as escapes, never raw', async () => {
    const handler = makeHandler();
    const response = await handler(jsonRequest(await callers.auth(), validBody({ description: 'a\u0000b', meta: { note: 'x\ud800' } })));
    const messages = (response.body as { errors: { message: string }[] }).errors.map((error) => error.message);
    expect(messages).toEqual([expect.stringContaining('got "a\\u0000b"'), expect.stringContaining('got "x\\ud800"')]);
    expect(messages.join('')).not.toMatch(/\u0000|\ud800/);
  });

  it('accepts characters outside the BMP, whose surrogates come in pairs', async () => {
    const handler = makeHandler();
    const response = await handler(jsonRequest(await callers.auth(), validBody({ description: '😀\ud83d\ude00', meta: { '😀': '😀' } })));
    expect(response.status).toBe(201);
  });
});
