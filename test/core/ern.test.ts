import { describe, expect, test } from 'vitest';
import {
  ErnError,
  formatReference,
  formatTenantErn,
  formatUserReference,
  parseErn,
  parseReference,
  parseTenantErn,
  parseUserReference,
} from '../../src/index.js';
import { tenantUserOf } from '../../src/core/ern.js';
import fc from 'fast-check';

function ernError(action: () => unknown): ErnError {
  try {
    action();
  } catch (error) {
    if (error instanceof ErnError) return error;
    throw error;
  }
  throw new Error('expected an ErnError');
}

describe('parseTenantErn', () => {
  test('parses ern:<product>/tenants/<id> into its parts', () => {
    expect(parseTenantErn('ern:acme/tenants/t-1')).toEqual({
      ern: 'ern:acme/tenants/t-1',
      product: 'acme',
      id: 't-1',
      isPublic: false,
    });
  });

  test('recognises the public tenant', () => {
    expect(parseTenantErn('ern:acme/tenants/public').isPublic).toBe(true);
  });

  test('is case-sensitive: "Public" is a private tenant', () => {
    expect(parseTenantErn('ern:acme/tenants/Public').isPublic).toBe(false);
  });

  test('accepts letters, digits, "-", "_" and "."', () => {
    expect(parseTenantErn('ern:Acme.Pay_2/tenants/T-1.a_b').product).toBe('Acme.Pay_2');
  });

  test('returns a frozen object', () => {
    expect(Object.isFrozen(parseTenantErn('ern:acme/tenants/t-1'))).toBe(true);
  });

  test('accepts a product and a tenant id of exactly 256 characters, and refuses 257 for either', () => {
    const at = 'a'.repeat(256);
    expect(parseTenantErn(`ern:${at}/tenants/${at}`)).toMatchObject({ product: at, id: at });
    expect(ernError(() => parseTenantErn(`ern:${at}a/tenants/t-1`)).reason).toBe('product');
    expect(ernError(() => parseTenantErn(`ern:acme/tenants/${at}a`)).reason).toBe('tenant_id');
  });

  test.each([
    ['not a string', 42, 'not_a_string'],
    ['no ern: prefix', 'acme/tenants/t-1', 'prefix'],
    ['an upper-case prefix', 'ERN:acme/tenants/t-1', 'prefix'],
    ['an empty product', 'ern:/tenants/t-1', 'product'],
    ['a product with a space', 'ern:ac me/tenants/t-1', 'product'],
    ['a product with a colon', 'ern:a:b/tenants/t-1', 'product'],
    ['another collection', 'ern:acme/companies/t-1', 'shape'],
    ['an empty tenant id', 'ern:acme/tenants/', 'tenant_id'],
    ['a tenant id with "/"-separated extra parts', 'ern:acme/tenants/t-1/x', 'shape'],
    ['a tenant id with unicode', 'ern:acme/tenants/t\u00e9', 'tenant_id'],
    ['a user ERN', 'ern:acme/tenants/t-1/users/u-1', 'shape'],
    ['a tenant id longer than 256 characters', `ern:acme/tenants/${'a'.repeat(257)}`, 'tenant_id'],
  ])('rejects %s, naming what is wrong', (_name, value, reason) => {
    const error = ernError(() => parseTenantErn(value));
    expect(error.code).toBe('invalid_ern');
    expect(error.reason).toBe(reason);
    expect(error.kind).toBe('tenant ERN');
    expect(error.message).toMatch(/^Invalid tenant ERN: /);
  });
});

describe('parseErn', () => {
  test('parses a tenant ERN', () => {
    expect(parseErn('ern:acme/tenants/t-1')).toMatchObject({ type: 'tenant', id: 't-1' });
  });

  test('parses a tenant user ERN', () => {
    expect(parseErn('ern:acme/tenants/t-1/users/u-1')).toEqual({
      type: 'user',
      form: 'tenant_user',
      ern: 'ern:acme/tenants/t-1/users/u-1',
      product: 'acme',
      tenantId: 't-1',
      userId: 'u-1',
    });
  });

  test('parses a product user ERN', () => {
    expect(parseErn('ern:acme/tenants/users/u-1')).toMatchObject({
      type: 'user',
      form: 'product_user',
      tenantId: null,
      userId: 'u-1',
    });
  });

  test('reads ern:<product>/tenants/users as the tenant "users"', () => {
    expect(parseErn('ern:acme/tenants/users')).toMatchObject({ type: 'tenant', id: 'users' });
  });

  test.each([
    ['a relative reference', '//users/u-1', 'prefix'],
    ['an empty user id', 'ern:acme/tenants/t-1/users/', 'user_id'],
    ['another sub-collection', 'ern:acme/tenants/t-1/departments/d-1', 'shape'],
  ])('rejects %s', (_name, value, reason) => {
    expect(ernError(() => parseErn(value)).reason).toBe(reason);
  });
});

describe('parseReference', () => {
  test.each([
    ['//departments/d-1', 'departments', 'd-1'],
    ['//customers/c_9', 'customers', 'c_9'],
    ['//users/u.1', 'users', 'u.1'],
  ])('parses %s', (ref, collection, id) => {
    expect(parseReference(ref)).toEqual({ ref, collection, id });
  });

  test('checks the expected collection', () => {
    const error = ernError(() => parseReference('//customers/c-1', 'departments'));
    expect(error.reason).toBe('collection');
    expect(error.message).toContain('//departments/<id>');
  });

  test.each([
    ['an absolute ERN', 'ern:acme/tenants/t-1', 'prefix'],
    ['a single slash', '/departments/d-1', 'prefix'],
    ['an unknown collection', '//stores/s-1', 'collection'],
    ['no id', '//departments/', 'id'],
    ['a nested path', '//departments/d-1/x', 'shape'],
    ['a path traversal', '//departments/../users', 'shape'],
  ])('rejects %s', (_name, value, reason) => {
    expect(ernError(() => parseReference(value)).reason).toBe(reason);
  });
});

describe('parseUserReference', () => {
  test('accepts the public tenant ERN as a system actor', () => {
    expect(parseUserReference('ern:acme/tenants/public')).toEqual({
      form: 'system',
      ern: 'ern:acme/tenants/public',
      product: 'acme',
      tenantId: 'public',
      userId: null,
    });
  });

  test('refuses a private tenant ERN', () => {
    expect(ernError(() => parseUserReference('ern:acme/tenants/t-1')).reason).toBe('not_public');
  });

  test('accepts //users/<id>', () => {
    expect(parseUserReference('//users/u-1')).toMatchObject({ form: 'relative', userId: 'u-1' });
  });

  test('refuses a relative reference to another collection', () => {
    expect(ernError(() => parseUserReference('//customers/c-1')).reason).toBe('collection');
  });
});

describe("tenantUserOf (the claim rules' fast path for a user of the token's own tenant)", () => {
  const tenant = parseTenantErn('ern:acme/tenants/t-1');

  test('reads a user of the tenant exactly as parseUserReference does, frozen', () => {
    const user = tenantUserOf('ern:acme/tenants/t-1/users/u-1', tenant);
    expect(user).toEqual(parseUserReference('ern:acme/tenants/t-1/users/u-1'));
    expect(Object.isFrozen(user)).toBe(true);
  });

  test('accepts a user id of exactly 256 characters, not 257', () => {
    expect(tenantUserOf(`ern:acme/tenants/t-1/users/${'u'.repeat(256)}`, tenant)?.userId).toHaveLength(256);
    expect(tenantUserOf(`ern:acme/tenants/t-1/users/${'u'.repeat(257)}`, tenant)).toBeUndefined();
  });

  test.each([
    ['an empty user id', 'ern:acme/tenants/t-1/users/'],
    ['a user id with a space', 'ern:acme/tenants/t-1/users/u 1'],
    ['a user id with a slash', 'ern:acme/tenants/t-1/users/u-1/x'],
    ['a user id with a non-ASCII letter', 'ern:acme/tenants/t-1/users/ü'],
    ["a tenant whose id extends this one's", 'ern:acme/tenants/t-10/users/u-1'],
    ['another product', 'ern:acmex/tenants/t-1/users/u-1'],
    ['the tenant itself', 'ern:acme/tenants/t-1'],
    ['a product user', 'ern:acme/tenants/users/u-1'],
    ['a relative user', '//users/u-1'],
  ])('leaves %s to parseUserReference', (_name, text) => {
    expect(tenantUserOf(text, tenant)).toBeUndefined();
  });

  test("answers for the tenant it is asked about when tenants alternate (the last tenant's prefix is not reused)", () => {
    const other = parseTenantErn('ern:beta/tenants/t-2');
    const answers = [
      tenantUserOf('ern:acme/tenants/t-1/users/u-1', tenant)?.tenantId,
      tenantUserOf('ern:acme/tenants/t-1/users/u-1', other),
      tenantUserOf('ern:beta/tenants/t-2/users/u-2', other)?.tenantId,
      tenantUserOf('ern:beta/tenants/t-2/users/u-2', tenant),
    ];
    expect(answers).toEqual(['t-1', undefined, 't-2', undefined]);
  });

  test('whatever it reads for one of several tenants in turn, parseUserReference reads alike, for that tenant (property)', () => {
    const tenants = ['ern:acme/tenants/t-1', 'ern:acme/tenants/t-10', 'ern:beta/tenants/t-1'].map(parseTenantErn);
    const candidate = fc.tuple(
      fc.constantFrom(...tenants),
      fc.constantFrom('ern:acme/tenants/t-1', 'ern:acme/tenants/t-10', 'ern:beta/tenants/t-1'),
      fc.stringMatching(/^[A-Za-z0-9._\- /ü]{0,6}$/),
    );
    fc.assert(
      fc.property(candidate, ([asked, named, id]) => {
        const text = `${named}/users/${id}`;
        const fast = tenantUserOf(text, asked);
        if (fast === undefined) return;
        expect(fast).toEqual(parseUserReference(text));
        expect(fast).toMatchObject({ product: asked.product, tenantId: asked.id });
      }),
      { numRuns: 2000 },
    );
  });

  test('whatever it reads, parseUserReference reads alike (property)', () => {
    const part = fc.stringMatching(/^[A-Za-z0-9._\- /ü]{0,6}$/);
    const candidate = fc.tuple(
      fc.constantFrom('ern:acme/tenants/t-1', 'ern:acme/tenants/t-', 'ern:acme/tenants'),
      fc.constantFrom('/users/', '/users', '/'),
      part,
    );
    fc.assert(
      fc.property(candidate, ([prefix, middle, rest]) => {
        const text = `${prefix}${middle}${rest}`;
        const fast = tenantUserOf(text, tenant);
        if (fast === undefined) return;
        expect(fast).toEqual(parseUserReference(text));
        expect(fast).toMatchObject({ form: 'tenant_user', product: 'acme', tenantId: 't-1' });
      }),
      { numRuns: 2000 },
    );
  });
});

describe('the value an ErnError quotes is hostile text', () => {
  test.each([
    ['a line separator (U+2028)', '\u2028'],
    ['a paragraph separator (U+2029)', '\u2029'],
    ['a right-to-left override (U+202E)', '\u202e'],
    ['a C1 control (U+0085, next line)', '\u0085'],
    ['DEL', '\u007f'],
  ])('%s in the value is escaped in the message, never raw (attack: a forged or reordered log line)', (_name, char) => {
    const error = ernError(() => parseTenantErn(`ern:acme/tenants/t${char}1`));
    expect(error.message).not.toContain(char);
    expect(error.message).toContain(`\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  });
});

describe('formatting round-trips', () => {
  test('formatTenantErn is the inverse of parseTenantErn', () => {
    const parsed = parseTenantErn('ern:acme/tenants/t-1');
    expect(formatTenantErn(parsed)).toBe('ern:acme/tenants/t-1');
  });

  test('formatTenantErn refuses an invalid part', () => {
    expect(ernError(() => formatTenantErn({ product: 'acme', id: 't/1' })).reason).toBe('tenant_id');
  });

  test.each(['//departments/d-1', '//customers/c-1', '//users/u-1'])('formatReference(parseReference(%s)) is the same text', (ref) => {
    expect(formatReference(parseReference(ref))).toBe(ref);
  });

  test.each(['ern:acme/tenants/t-1/users/u-1', 'ern:acme/tenants/users/u-1', '//users/u-1', 'ern:acme/tenants/public'])(
    'formatUserReference(parseUserReference(%s)) is the same text',
    (ref) => {
      expect(formatUserReference(parseUserReference(ref))).toBe(ref);
    },
  );
});
