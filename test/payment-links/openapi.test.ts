/**
 * The OpenAPI document of the reference endpoints: a valid OpenAPI 3.1 document; its request
 * schema accepts exactly the bodies the handler accepts (field by field, and for random bodies),
 * save what it says a schema cannot; its problem answers list every code with its status and
 * headers; and the checker the other specifications run on every response refuses one the
 * document does not describe.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AUTH_ERROR_CODES, KNOWN_SCOPES, SCOPES } from '../../src/index.js';
import {
  LINE_ITEM_LIMITS,
  LINK_LIMITS,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  META_LIMITS,
  PAYMENT_LINK_ERROR_CODES,
  createOpenApiDocument,
} from '../../src/payment-links/index.js';
import { readIdempotencyKey } from '../../src/payment-links/idempotency-key.js';
import { OPENAPI, expectDocumented, openApiMismatches, schemaMismatches } from '../support/openapi.js';
import { fieldErrors, jsonRequest, makeHandler, useCallers, validBody } from './support.js';

const callers = useCallers();

type Json = Record<string, unknown>;
const operation = (path: string, method: string) => (OPENAPI.paths[path] as Record<string, Json>)[method] as Json;
const responses = (path: string, method: string) => operation(path, method).responses as Record<string, Json>;
const OPERATIONS = [
  ['/info/', 'get'],
  ['/payment-links/', 'post'],
  ['/payment-links/{id}', 'get'],
] as const;

/** The codes a problem answer lists, from its schema. */
function codesOf(response: Json): string[] {
  const schema = (response.content as Record<string, { schema: { allOf: Json[] } }>)['application/problem+json']?.schema;
  const properties = schema?.allOf[1]?.properties as { code: { enum: string[] } } | undefined;
  return properties?.code.enum ?? [];
}

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(structuredClone(OPENAPI) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(OPENAPI.openapi).toBe('3.1.0');
  });

  it('is frozen JSON, the same at every call', () => {
    expect(Object.isFrozen(OPENAPI.components.schemas)).toBe(true);
    expect(JSON.parse(JSON.stringify(createOpenApiDocument()))).toEqual(OPENAPI);
  });

  it('describes the bearer JWT scheme with the four scopes', () => {
    const scheme = (OPENAPI.components.securitySchemes as Record<string, Json>).bearer;
    expect(scheme).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    for (const scope of KNOWN_SCOPES) expect(scheme?.description).toContain(`\`${scope}\``);
  });

  it('needs any one scope for GET /info/ and pay:processPayments for the payment links', () => {
    expect(operation('/info/', 'get').security).toEqual(KNOWN_SCOPES.map((scope) => ({ bearer: [scope] })));
    expect(operation('/payment-links/', 'post').security).toEqual([{ bearer: [SCOPES.processPayments] }]);
    expect(operation('/payment-links/{id}', 'get').security).toEqual([{ bearer: [SCOPES.processPayments] }]);
  });

  it('describes the Idempotency-Key header of POST /payment-links/', () => {
    expect(operation('/payment-links/', 'post').parameters).toContainEqual(
      expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false }),
    );
  });

  it.each(OPERATIONS)('lists every authentication failure of %s %s under its status', (path, method) => {
    const all = responses(path, method);
    for (const [code, { status }] of Object.entries(AUTH_ERROR_CODES)) expect(codesOf(all[String(status)] ?? {})).toContain(code);
    expect(codesOf(all['500'] ?? {})).toEqual(['configuration_error', 'internal_error']);
  });

  it('lists every code of the handlers under its status, on an operation that answers it', () => {
    const listed = OPERATIONS.flatMap(([path, method]) =>
      Object.entries(responses(path, method)).flatMap(([status, r]) => codesOf(r).map((code) => `${code} ${status}`)),
    );
    for (const [code, { status }] of Object.entries(PAYMENT_LINK_ERROR_CODES)) expect(listed).toContain(`${code} ${status}`);
  });

  it('requires WWW-Authenticate on 401 and Retry-After on 503, and names them where only some codes carry them', () => {
    for (const [path, method] of OPERATIONS) {
      const all = responses(path, method) as Record<string, { headers: Record<string, { required: boolean }> }>;
      expect(all['401']?.headers['WWW-Authenticate']?.required).toBe(true);
      expect(all['503']?.headers['Retry-After']?.required).toBe(true);
      // GET /info/ refuses with 403 only for the scopes; the payment links also for the public tenant.
      expect(all['403']?.headers['WWW-Authenticate']?.required).toBe(path === '/info/');
    }
    const conflict = responses('/payment-links/', 'post')['409'] as { headers: Record<string, { required: boolean; description: string }> };
    expect(conflict.headers['Retry-After']).toMatchObject({
      required: false,
      description: expect.stringContaining('idempotency_key_in_use'),
    });
  });

  it('names the body limit it is given in the 413 answer', () => {
    const document = createOpenApiDocument({ maxBodyBytes: 2048, servers: [{ url: 'https://payments.example' }] });
    expect((document.paths['/payment-links/'] as Record<string, Json>).post?.responses).toMatchObject({
      '413': { description: expect.stringContaining('over 2048 bytes') },
    });
    expect(document.servers).toEqual([{ url: 'https://payments.example' }]);
    expect(() => createOpenApiDocument({ maxBodyBytes: -1 })).toThrow(/maxBodyBytes/);
  });
});

/** A body with `field` set to `value` (or removed, for `undefined`), as JSON text (so that `__proto__` stays a member). */
function bodyWith(field: string, value: unknown): string {
  const body: Json = validBody();
  if (field === 'email' && value === null) body.phone = '+4512345678';
  delete body[field];
  const text = JSON.stringify(body);
  if (value === undefined) return text;
  return `${text.slice(0, -1)},${JSON.stringify(field)}:${JSON.stringify(value)}}`;
}

const line = (overrides: Json = {}): Json => ({
  quantity: 1,
  description: 'Consultation',
  amount_excluding_tax: '100.4',
  tax_amount: '25.1',
  amount_including_tax: '125.5',
  ...overrides,
});
const details = (overrides: Json = {}) => ({ line_items: [line(overrides)] });
const metaOf = (entries: number, key = (i: number) => `k${i}`, value = 'v') =>
  Object.fromEntries(Array.from({ length: entries }, (_, i) => [key(i), value]));

/** Values of each field: what the schema and the handler must agree on. */
const SAMPLES: readonly (readonly [string, readonly unknown[]])[] = [
  [
    'amount',
    [
      '125.5',
      '0.0001',
      '7',
      '999999999999999.9999',
      '0',
      '0.0000',
      '-1',
      '01',
      '1.',
      '.5',
      '1e3',
      '12.50000',
      '1000000000000000',
      12.5,
      '',
      null,
    ],
  ],
  ['currency', ['EUR', 'DKK', 'eur', 'EURO', 'ABC', 'XXX', 'XTS', 5, null]],
  [
    'department',
    [
      '//departments/cardiology',
      '//departments/',
      '//customers/c-1',
      'departments/cardiology',
      '//departments/a b',
      `//departments/${'a'.repeat(257)}`,
      7,
    ],
  ],
  ['shopper', ['//customers/c-100', '//customers/new.one_2', '//departments/c-100', '//customers/', null]],
  [
    'email',
    [
      'jane@example.com',
      'a@b',
      'a b@c.d',
      `${'x'.repeat(LINK_LIMITS.maxEmailLength - 6)}@e.com`,
      `${'x'.repeat(LINK_LIMITS.maxEmailLength - 5)}@e.com`,
      'jane\ud800@example.com',
      null,
      1,
    ],
  ],
  ['phone', ['+4512345678', '4512345678', '+0123456', '+123456', '+1234567', '+123456789012345', '+1234567890123456', null]],
  ['tokenize', ['no', 'yes', 'maybe', 'NO', null, 1]],
  ['duration', [LINK_LIMITS.minDuration, LINK_LIMITS.maxDuration, 0, LINK_LIMITS.maxDuration + 1, 1.5, '10', null]],
  ['locale', ['da-DK', 'en-GB', 'da-dk', 'dan-DK', 'da_DK', null]],
  [
    'description',
    [
      '',
      'x'.repeat(LINK_LIMITS.maxDescriptionLength),
      'x'.repeat(LINK_LIMITS.maxDescriptionLength + 1),
      '😀'.repeat(LINK_LIMITS.maxDescriptionLength),
      '😀'.repeat(LINK_LIMITS.maxDescriptionLength + 1),
      'a\u0000b',
      'a\ud800b',
      'b\udc00',
      'tab\tand\nnewline',
      null,
      3,
    ],
  ],
  [
    'meta',
    [
      {},
      { order_id: 'A-1', 'odd key': 'ünïcode' },
      metaOf(META_LIMITS.maxEntries),
      metaOf(META_LIMITS.maxEntries + 1),
      { ['k'.repeat(META_LIMITS.maxKeyLength)]: 'v' },
      { ['k'.repeat(META_LIMITS.maxKeyLength + 1)]: 'v' },
      { ['😀'.repeat(META_LIMITS.maxKeyLength)]: 'v' },
      { '': 'v' },
      { constructor: 'v' },
      JSON.parse('{"__proto__":"v"}'),
      { a: 'v'.repeat(META_LIMITS.maxValueLength) },
      { a: 'v'.repeat(META_LIMITS.maxValueLength + 1) },
      { a: '\ud800' },
      { 'a\u0000': 'v' },
      { 'a\udfff': 'v' },
      { '😀': '😀' },
      { a: 1 },
      { a: null },
      [],
      'text',
      null,
    ],
  ],
  [
    'payment_details',
    [
      details(),
      details({ id: 'SKU-1', tax_percentage: '25' }),
      details({ id: null, tax_percentage: null }),
      details({ tax_percentage: '100' }),
      details({ quantity: 0 }),
      details({ quantity: LINE_ITEM_LIMITS.maxQuantity + 1 }),
      details({ quantity: '1' }),
      details({ description: '' }),
      details({ description: 'd'.repeat(LINE_ITEM_LIMITS.maxDescriptionLength + 1) }),
      details({ id: '' }),
      details({ tax_amount: '-1' }),
      details({ tax_amount: 25.1 }),
      details({ tax_percentage: '-1' }),
      details({ extra: 1 }),
      { line_items: [line(), 'line'] },
      { line_items: [] },
      { line_items: Array.from({ length: LINE_ITEM_LIMITS.maxItems + 1 }, () => line()) },
      {},
      { line_items: [line()], extra: 1 },
      [],
      null,
    ],
  ],
  ['unknown_field', [1, 'x', null]],
];

/** Values the schema accepts and the handler refuses, for a rule no schema can state (each named in the document). */
const BEYOND_SCHEMA: readonly (readonly [string, unknown, string])[] = [
  ['department', '//departments/unknown', 'not_found'],
  ['payment_details', details({ tax_percentage: '100.0001' }), 'out_of_range'],
  ['payment_details', details({ amount_including_tax: '125.4', tax_amount: '25' }), 'amount_mismatch'],
  ['payment_details', { line_items: [line(), line()] }, 'amount_mismatch'],
];

const valid = (body: string): boolean => schemaMismatches('#/components/schemas/LinkRequest', JSON.parse(body)).length === 0;

describe('the request schema and the handler', () => {
  const shown = (value: unknown): string => {
    const text = JSON.stringify(value) ?? 'undefined';
    return text.length > 40 ? `${[...text].slice(0, 30).join('')}… (${text.length} characters)` : text;
  };
  const cases = SAMPLES.flatMap(([field, values]) => values.map((value) => [field, shown(value), value] as const));

  it.each(cases)('agree on %s = %s', async (field, _shown, value) => {
    const body = bodyWith(field, value);
    const response = await makeHandler()(jsonRequest(await callers.auth(), body));
    expect(response.status === 201, `handler: ${JSON.stringify(response.body)}`).toBe(valid(body));
  });

  it.each(BEYOND_SCHEMA.map(([field, value, code]) => [field, shown(value), value, code] as const))(
    'leave %s = %s to the handler, which answers %s',
    async (field, _shown, value, code) => {
      const body = bodyWith(field, value);
      expect(valid(body)).toBe(true);
      const response = await makeHandler()(jsonRequest(await callers.auth(), body));
      expect(fieldErrors(response).map((error) => error.code)).toContain(code);
    },
  );

  it('agree on random bodies made of those values', async () => {
    const auth = await callers.auth();
    const handler = makeHandler();
    const fields = Object.fromEntries(SAMPLES.map(([field, values]) => [field, fc.constantFrom(...values)]));
    await fc.assert(
      fc.asyncProperty(fc.record(fields, { requiredKeys: [] }), async (body) => {
        const text = JSON.stringify(body);
        const response = await handler(jsonRequest(auth, text));
        expect(response.status === 201, `${text} → ${JSON.stringify(response.body)}`).toBe(valid(text));
      }),
      { numRuns: 300 },
    );
  });

  it('agree with the Idempotency-Key reader', () => {
    const [header] = operation('/payment-links/', 'post').parameters as { schema: { pattern: string } }[];
    const pattern = new RegExp(header?.schema.pattern ?? '(?!)');
    const keys = [
      'k',
      'a'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH),
      'a'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH + 1),
      '"quoted"',
      '""',
      '',
      'a,b',
      'a b',
      'a"b',
      'a\\b',
      'é',
      crypto.randomUUID(),
    ];
    for (const key of keys) {
      let accepted = true;
      try {
        readIdempotencyKey({ 'idempotency-key': key });
      } catch {
        accepted = false;
      }
      expect([key, pattern.test(key)]).toEqual([key, accepted]);
    }
  });
});

describe('the response check', () => {
  const problem = {
    type: 'urn:paygate-auth:problem:missing_token',
    title: 'Authentication required',
    status: 401,
    detail: 'No token.',
    code: 'missing_token',
  };
  const headers = { 'content-type': 'application/problem+json', 'www-authenticate': 'Bearer realm="paygate"' };

  it('passes a response the document describes', () => {
    expect(openApiMismatches('getInfo', { status: 401, headers, body: problem })).toEqual([]);
  });

  it.each([
    ['a status the operation does not document', { status: 418, headers, body: problem }, /status 418/],
    [
      'a required header missing',
      { status: 401, headers: { 'content-type': 'application/problem+json' }, body: problem },
      /WWW-Authenticate is required/,
    ],
    [
      'another media type',
      { status: 401, headers: { ...headers, 'content-type': 'text/plain' }, body: problem },
      /content type text\/plain/,
    ],
    ['a code of another status', { status: 401, headers, body: { ...problem, code: 'insufficient_scope' } }, /body \/code/],
    ['a member the schema does not know', { status: 401, headers, body: { ...problem, token: 'x' } }, /additional/],
  ])('refuses %s', (_name, response, message) => {
    expect(() => expectDocumented('getInfo', response)).toThrow(message);
  });
});
