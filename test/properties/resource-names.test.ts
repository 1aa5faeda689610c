/**
 * Resource names, as properties: every name the grammar allows round-trips through its
 * parser and formatter, and every other string is refused with an ErnError, never with anything
 * else. An independent regular-expression oracle decides which strings are names.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  ErnError,
  MAX_NAME_PART_LENGTH,
  type ReferenceCollection,
  type UserReferenceParts,
  formatReference,
  formatTenantErn,
  formatUserReference,
  parseErn,
  parseReference,
  parseTenantErn,
  parseUserReference,
} from '../../src/index.js';

const NAME_CHARS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.'];
const COLLECTIONS: readonly ReferenceCollection[] = ['departments', 'customers', 'users'];

/** A valid name part: mostly short, sometimes a word of the grammar itself, sometimes the longest allowed. */
const namePart = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: fc.constantFrom(...NAME_CHARS), minLength: 1, maxLength: 12 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('public', 'Public', 'users', 'tenants', 'departments', 'customers', 'ern', '.', '..', '-', '_'),
  },
  {
    weight: 1,
    arbitrary: fc.string({
      unit: fc.constantFrom(...NAME_CHARS),
      minLength: MAX_NAME_PART_LENGTH - 2,
      maxLength: MAX_NAME_PART_LENGTH,
    }),
  },
);

/** A string that is not a name part: empty, too long, or holding one character outside the alphabet. */
const badPart = fc.oneof(
  fc.constant(''),
  fc.constant('a'.repeat(MAX_NAME_PART_LENGTH + 1)),
  fc
    .tuple(
      namePart,
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((c) => !NAME_CHARS.includes(c)),
      fc.nat(),
    )
    .map(([part, bad, at]) => {
      const index = at % (part.length + 1);
      return `${part.slice(0, index)}${bad}${part.slice(index)}`;
    }),
);

const collection = fc.constantFrom(...COLLECTIONS);

/** Every form of a user reference, as the parts {@link formatUserReference} takes. */
const userParts: fc.Arbitrary<UserReferenceParts> = fc.oneof(
  fc.record({ form: fc.constant('tenant_user' as const), product: namePart, tenantId: namePart, userId: namePart }),
  fc.record({
    form: fc.constant('product_user' as const),
    product: namePart,
    tenantId: fc.constant(null),
    userId: namePart,
  }),
  fc.record({
    form: fc.constant('relative' as const),
    product: fc.constant(null),
    tenantId: fc.constant(null),
    userId: namePart,
  }),
  fc.record({
    form: fc.constant('system' as const),
    product: namePart,
    tenantId: fc.constant('public'),
    userId: fc.constant(null),
  }),
);

// The oracle: the grammar of resource names, written independently of src/core/ern.ts.
const P = `[A-Za-z0-9._-]{1,${MAX_NAME_PART_LENGTH}}`;
const TENANT = new RegExp(`^ern:${P}/tenants/${P}$`);
const TENANT_USER = new RegExp(`^ern:${P}/tenants/${P}/users/${P}$`);
const PRODUCT_USER = new RegExp(`^ern:${P}/tenants/users/${P}$`);
const PUBLIC_TENANT = new RegExp(`^ern:${P}/tenants/public$`);
const RELATIVE = new RegExp(`^//(departments|customers|users)/${P}$`);
const RELATIVE_USER = new RegExp(`^//users/${P}$`);

const oracle = {
  tenant: (text: string) => TENANT.test(text),
  ern: (text: string) => TENANT.test(text) || TENANT_USER.test(text) || PRODUCT_USER.test(text),
  user: (text: string) => TENANT_USER.test(text) || PRODUCT_USER.test(text) || PUBLIC_TENANT.test(text) || RELATIVE_USER.test(text),
  reference: (text: string) => RELATIVE.test(text),
};

/** Runs a parser: `'accepted'`, or the ErnError's reason; any other exception fails the property. */
function outcome(parse: () => unknown): string {
  try {
    parse();
    return 'accepted';
  } catch (error) {
    if (!(error instanceof ErnError)) throw error;
    expect(error.code).toBe('invalid_ern');
    return error.reason;
  }
}

/** A well-formed name of any kind, to mutate into near misses. */
const anyName = fc.oneof(
  fc.tuple(namePart, namePart).map(([product, id]) => formatTenantErn({ product, id })),
  userParts.map((parts) => formatUserReference(parts)),
  fc.tuple(collection, namePart).map(([name, id]) => formatReference({ collection: name, id })),
);

/** A name with one edit: a character inserted, deleted or replaced, or a segment added or dropped. */
const nearMiss = fc
  .tuple(
    anyName,
    fc.nat(),
    fc.constantFrom('insert', 'delete', 'replace', 'add-segment', 'drop-segment', 'case'),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 2 }),
  )
  .map(([name, at, edit, text]) => {
    const index = at % (name.length + 1);
    switch (edit) {
      case 'insert':
        return `${name.slice(0, index)}${text}${name.slice(index)}`;
      case 'delete':
        return `${name.slice(0, index)}${name.slice(index + 1)}`;
      case 'replace':
        return `${name.slice(0, index)}${text}${name.slice(index + 1)}`;
      case 'add-segment':
        return `${name}/${text}`;
      case 'drop-segment':
        return name.slice(0, Math.max(0, name.lastIndexOf('/')));
      default:
        return name.toUpperCase();
    }
  });

/** Any string a client could send where a name is expected. */
const candidate = fc.oneof(nearMiss, anyName, fc.string({ maxLength: 80 }), fc.string({ unit: 'binary', maxLength: 40 }));

describe('resource names round-trip through parse and format', () => {
  test('a tenant ERN formats from its parts and parses back to them', () => {
    fc.assert(
      fc.property(namePart, namePart, (product, id) => {
        const text = formatTenantErn({ product, id });
        expect(text).toBe(`ern:${product}/tenants/${id}`);
        expect(parseTenantErn(text)).toEqual({ ern: text, product, id, isPublic: id === 'public' });
        expect(parseErn(text)).toEqual({ type: 'tenant', ern: text, product, id, isPublic: id === 'public' });
        expect(formatTenantErn(parseTenantErn(text))).toBe(text);
      }),
      { numRuns: 200 },
    );
  });

  test('a user reference in each of its four forms formats from its parts and parses back to them', () => {
    fc.assert(
      fc.property(userParts, (parts) => {
        const text = formatUserReference(parts);
        const parsed = parseUserReference(text);
        expect(parsed).toEqual({ ...parts, ern: text });
        expect(formatUserReference(parsed)).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  test('an absolute user ERN parses the same through parseErn as through parseUserReference', () => {
    const absolute = userParts.filter((parts) => parts.form === 'tenant_user' || parts.form === 'product_user');
    fc.assert(
      fc.property(absolute, (parts) => {
        const text = formatUserReference(parts);
        expect(parseErn(text)).toEqual({ type: 'user', ...parts, ern: text });
      }),
      { numRuns: 200 },
    );
  });

  test('a relative reference formats from its collection and id and parses back to them', () => {
    fc.assert(
      fc.property(collection, namePart, (name, id) => {
        const text = formatReference({ collection: name, id });
        expect(text).toBe(`//${name}/${id}`);
        expect(parseReference(text)).toEqual({ ref: text, collection: name, id });
        expect(parseReference(text, name)).toEqual({ ref: text, collection: name, id });
      }),
      { numRuns: 200 },
    );
  });

  test('a relative reference to one collection is refused where another is expected', () => {
    fc.assert(
      fc.property(collection, collection, namePart, (sent, expected, id) => {
        fc.pre(sent !== expected);
        expect(outcome(() => parseReference(formatReference({ collection: sent, id }), expected))).toBe('collection');
      }),
      { numRuns: 100 },
    );
  });
});

describe('strings that are not names are refused with an ErnError, and only they', () => {
  test.each([
    ['parseTenantErn', parseTenantErn, oracle.tenant],
    ['parseErn', parseErn, oracle.ern],
    ['parseUserReference', parseUserReference, oracle.user],
    ['parseReference', (text: string) => parseReference(text), oracle.reference],
  ] as const)('%s accepts exactly the strings of its grammar', (_name, parse, isName) => {
    fc.assert(
      fc.property(candidate, (text) => {
        expect(outcome(() => parse(text)) === 'accepted').toBe(isName(text));
      }),
      { numRuns: 400 },
    );
  });

  test.each([
    ['parseTenantErn', parseTenantErn],
    ['parseErn', parseErn],
    ['parseUserReference', parseUserReference],
    ['parseReference', (value: unknown) => parseReference(value)],
  ] as const)('%s refuses any value that is not a string as not_a_string', (_name, parse) => {
    fc.assert(
      fc.property(
        fc.anything().filter((value) => typeof value !== 'string'),
        (value) => {
          expect(outcome(() => parse(value))).toBe('not_a_string');
        },
      ),
      { numRuns: 100 },
    );
  });

  test('the formatters refuse a part that is not a name, with an ErnError', () => {
    const parts = fc.oneof(
      fc.tuple(badPart, namePart).map(
        ([product, id]) =>
          () =>
            formatTenantErn({ product, id }),
      ),
      fc.tuple(namePart, badPart).map(
        ([product, id]) =>
          () =>
            formatTenantErn({ product, id }),
      ),
      fc.tuple(collection, badPart).map(
        ([name, id]) =>
          () =>
            formatReference({ collection: name, id }),
      ),
      fc.tuple(namePart, badPart).map(
        ([product, userId]) =>
          () =>
            formatUserReference({ form: 'tenant_user', product, tenantId: 't-1', userId }),
      ),
      fc.tuple(badPart, namePart).map(
        ([product, userId]) =>
          () =>
            formatUserReference({ form: 'product_user', product, tenantId: null, userId }),
      ),
      badPart.map((userId) => () => formatUserReference({ form: 'relative', product: null, tenantId: null, userId })),
      badPart.map((product) => () => formatUserReference({ form: 'system', product, tenantId: 'public', userId: null })),
    );
    fc.assert(
      fc.property(parts, (format) => {
        expect(outcome(format)).not.toBe('accepted');
      }),
      { numRuns: 300 },
    );
  });
});
