/**
 * The Authorization header and the verifier under arbitrary input, as properties. Extends
 * test/core/verifier-robustness.test.ts (arbitrary strings, bytes, segments and shallow JSON) with
 * what it leaves open: Authorization arrays of any values behind `authenticate`, `Bearer ` followed
 * by arbitrary bytes, the already-verified fast path against a verifier without cache, JSON nested
 * as deep as the token size allows, prototype keys at any depth, and near-valid signed headers.
 */
import { type KeyObject, createPrivateKey, sign } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, test } from 'vitest';
import { AuthError, type AuthorizationInput, type Verifier, authenticate } from '../../src/index.js';
import type { TestKey } from '../../src/testing/index.js';
import { outcome, useFixture } from '../support/fixture.js';
import { verifyUntilCached } from '../support/result-cache.js';

const fx = useFixture();

/** `'ok'` or the error code of `authenticate`, which must resolve (never reject) with a non-5xx failure. */
async function authOutcome(verifier: Verifier, authorization: unknown, requiredScopes?: string): Promise<string> {
  const result = await authenticate(verifier, { authorization: authorization as AuthorizationInput, requiredScopes });
  if (result.ok) return 'ok';
  expect(result.error).toBeInstanceOf(AuthError);
  expect(result.error.status).toBeLessThan(500);
  return result.error.code;
}

const base64url = (text: string | Uint8Array): string => Buffer.from(text).toString('base64url');

const privateKeys = new WeakMap<TestKey, KeyObject>();

/** Signs a compact JWS (RS256) over header and payload given as JSON text, however deep they nest. */
function signRaw(key: TestKey, headerJson: string, payloadJson: string): string {
  let privateKey = privateKeys.get(key);
  if (privateKey === undefined) {
    privateKey = createPrivateKey({ key: Buffer.from(key.privateKeyPkcs8), format: 'der', type: 'pkcs8' });
    privateKeys.set(key, privateKey);
  }
  const input = `${base64url(headerJson)}.${base64url(payloadJson)}`;
  return `${input}.${base64url(sign('sha256', Buffer.from(input), privateKey))}`;
}

/** `true` when `value` and everything in it is frozen and no object in it owns `__proto__` or `constructor`. */
function frozenAndClean(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next !== 'object' || next === null) continue;
    if (!Object.isFrozen(next) || Object.hasOwn(next, '__proto__') || Object.hasOwn(next, 'constructor')) return false;
    pending.push(...Object.values(next));
  }
  return true;
}

/** Nothing reached Object.prototype. */
function prototypeUntouched(): boolean {
  const probe = {} as Record<string, unknown>;
  return ['a', 'polluted', 'x', 'isAdmin'].every((name) => probe[name] === undefined) && Object.getPrototypeOf(probe) === Object.prototype;
}

let header: Record<string, unknown>;
let claims: Record<string, unknown>;
let valid: string;

beforeAll(async () => {
  valid = await fx.issuer.token();
  const [encodedHeader = '', encodedPayload = ''] = valid.split('.');
  header = JSON.parse(Buffer.from(encodedHeader, 'base64url').toString('utf8')) as Record<string, unknown>;
  claims = JSON.parse(Buffer.from(encodedPayload, 'base64url').toString('utf8')) as Record<string, unknown>;
});

/** Nesting JSON text may use, in bytes: its base64url stays under the 1 MiB token limit used below. */
const NESTING_BYTES = 600_000;

/**
 * A JSON text nesting `depth` levels (fewer when they would not fit in {@link NESTING_BYTES}),
 * each level one of `shapes` in turn, around `core`.
 */
function nested(depth: number, shapes: readonly string[], core = '1'): string {
  const open: string[] = [];
  const close: string[] = [];
  const levels = Math.min(depth, Math.floor(NESTING_BYTES / (Math.max(...shapes.map((shape) => shape.length)) + 1)));
  for (let level = 0; level < levels; level++) {
    const shape = shapes[level % shapes.length] ?? '[';
    open.push(shape);
    close.push(shape === '[' ? ']' : '}');
  }
  return `${open.join('')}${core}${close.reverse().join('')}`;
}

const depth = fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 64, max: 5_000 }), fc.integer({ min: 5_000, max: 120_000 }));
const shapes = fc.array(fc.constantFrom('[', '{"a":', '{"__proto__":', '{"constructor":', '{"":'), {
  minLength: 1,
  maxLength: 4,
});

describe('Authorization values behind authenticate', () => {
  test('arrays of arbitrary values resolve to a 4xx result; only one well-formed value authenticates', async () => {
    const verifier = fx.verifier();
    const wellFormed = fc.constantFrom(`Bearer ${valid}`, `bearer ${valid}`, `  BEARER   ${valid}  `);
    const element = fc.oneof(wellFormed, fc.string({ maxLength: 60 }), fc.anything({ maxDepth: 2 }));
    const authorization = fc.oneof(
      fc.array(element, { maxLength: 4 }),
      fc.array(fc.array(element, { maxLength: 2 }), { maxLength: 2 }),
      fc.anything({ maxDepth: 2 }),
    );
    await fc.assert(
      fc.asyncProperty(authorization, async (value) => {
        const single = typeof value === 'string' ? value : Array.isArray(value) && value.length === 1 ? value[0] : undefined;
        const acceptable = typeof single === 'string' && single.trim().replace(/^bearer +/i, '') === valid;
        expect((await authOutcome(verifier, value)) === 'ok').toBe(acceptable);
      }),
      { numRuns: 300 },
    );
  });

  test('two well-formed values, as an array or joined, are invalid_request', async () => {
    const verifier = fx.verifier();
    const bearer = fc.constantFrom(`Bearer ${valid}`, 'Bearer abc.def.ghi');
    await fc.assert(
      fc.asyncProperty(bearer, bearer, fc.constantFrom(', ', ',', ' , '), async (first, second, separator) => {
        expect(await authOutcome(verifier, [first, second])).toBe('invalid_request');
        expect(await authOutcome(verifier, `${first}${separator}${second}`)).toBe('invalid_request');
      }),
      { numRuns: 50 },
    );
  });

  test('"Bearer " followed by arbitrary bytes resolves to a 4xx result', async () => {
    const verifier = fx.verifier();
    const bytes = fc.uint8Array({ maxLength: 300 });
    const decoding = fc.constantFrom<BufferEncoding>('utf8', 'latin1', 'base64url');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('Bearer ', 'bearer ', 'Bearer  '), bytes, decoding, async (scheme, raw, encoding) => {
        expect(await authOutcome(verifier, `${scheme}${Buffer.from(raw).toString(encoding)}`)).not.toBe('ok');
      }),
      { numRuns: 300 },
    );
  });

  test('a verifier holding a token in its result cache answers every variant of its header as one without cache does', async () => {
    const warm = fx.verifier();
    const cold = fx.verifier({ cache: false });
    await verifyUntilCached(warm, valid);
    expect(await authOutcome(warm, `Bearer ${valid}`)).toBe('ok');
    const space = fc.constantFrom('', ' ', '  ', '\t', '\n', '\r\n', '\u00a0');
    const scheme = fc.constantFrom('Bearer', 'bearer', 'BEARER', 'Bearer:', 'Basic', 'Bearer\t');
    const tail = fc.constantFrom('', ',', ', Bearer x', ' x', '=', '.', '\u0000', 'a');
    const token = fc.oneof(
      fc.constant(valid),
      fc.nat().map((at) => valid.slice(0, at % valid.length)),
      fc.nat().map((at) => {
        const index = at % valid.length;
        return `${valid.slice(0, index)}${valid[index] === 'A' ? 'B' : 'A'}${valid.slice(index + 1)}`;
      }),
    );
    const value = fc.tuple(space, scheme, space, token, tail, space).map((parts) => parts.join(''));
    const authorization = fc.oneof(
      value,
      value.map((one) => [one]),
      fc.tuple(value, value).map((pair) => [...pair]),
    );
    const scopes = fc.constantFrom(undefined, 'pay:processPayments', 'hub:subscribe');
    await fc.assert(
      fc.asyncProperty(authorization, scopes, async (sent, requiredScopes) => {
        expect(await authOutcome(warm, sent, requiredScopes)).toBe(await authOutcome(cold, sent, requiredScopes));
      }),
      { numRuns: 300 },
    );
  });
});

describe('tokens whose segments are valid JSON', () => {
  test('a signed token with a claim nested as deep as the size limit allows verifies, its claims frozen at every depth', async () => {
    const verifier = fx.verifier({ maxTokenBytes: 1_048_576 });
    await fc.assert(
      fc.asyncProperty(depth, shapes, async (levels, pattern) => {
        const payload = JSON.stringify(claims).replace(/\}$/, `,"extra":${nested(levels, pattern)}}`);
        const auth = await verifier.verify(signRaw(fx.issuer.signingKey, JSON.stringify(header), payload));
        expect(frozenAndClean(auth.claims)).toBe(true);
        expect(prototypeUntouched()).toBe(true);
      }),
      { numRuns: 40 },
    );
  });

  test('a header or payload nested as deep as the size limit allows is an AuthError; a deep extra header member is ignored', async () => {
    const verifier = fx.verifier({ maxTokenBytes: 1_048_576 });
    const where = fc.constantFrom('header member', 'header', 'payload', 'both');
    const signed = fc.boolean();
    await fc.assert(
      fc.asyncProperty(where, depth, shapes, signed, async (place, levels, pattern, withSignature) => {
        const deep = nested(levels, pattern);
        const headerJson =
          place === 'header member'
            ? JSON.stringify(header).replace(/\}$/, `,"x":${deep}}`)
            : place === 'payload'
              ? JSON.stringify(header)
              : deep;
        const payloadJson = place === 'payload' || place === 'both' ? deep : JSON.stringify(claims);
        const token = withSignature
          ? signRaw(fx.issuer.signingKey, headerJson, payloadJson)
          : `${base64url(headerJson)}.${base64url(payloadJson)}.c2ln`;
        const result = await outcome(verifier.verify(token));
        if (place === 'header member' && withSignature) expect(result).toBe('ok');
        else expect(result).not.toBe('ok');
        expect(prototypeUntouched()).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  test('signed tokens carrying arbitrary members, prototype keys included, verify or fail with an AuthError, never polluting', async () => {
    const verifier = fx.verifier();
    const name = fc.oneof(
      fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'iss', 'exp', 'scope', 'tenant_ern'),
      fc.string({ maxLength: 12 }),
    );
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }),
      fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'polluted', 'a'), fc.jsonValue({ maxDepth: 2 }), {
        maxKeys: 3,
      }),
    );
    const members = fc.array(fc.tuple(name, value), { maxLength: 6 });
    await fc.assert(
      fc.asyncProperty(members, async (extra) => {
        const text = (entries: readonly (readonly [string, unknown])[]) =>
          `{${entries.map(([key, v]) => `${JSON.stringify(key)}:${JSON.stringify(v)}`).join(',')}}`;
        const payload = text([...Object.entries(claims), ...extra]);
        const result = await outcome(
          verifier.verify(signRaw(fx.issuer.signingKey, JSON.stringify(header), payload)).then((auth) => {
            expect(frozenAndClean(auth.claims)).toBe(true);
          }),
        );
        expect(typeof result).toBe('string');
        expect(prototypeUntouched()).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  test('a signed token with one header member changed or added verifies only with RS256 and the signing kid', async () => {
    const verifier = fx.verifier();
    const member = fc.oneof(
      fc.constantFrom('alg', 'kid', 'typ', 'crit', 'b64', 'jku', 'x5u', 'jwk', 'cty', 'zip'),
      fc.string({ maxLength: 8 }),
    );
    const value = fc.oneof(
      fc.constantFrom(
        'RS256',
        'RS384',
        'PS256',
        'HS256',
        'none',
        'ES256',
        'rs256',
        'JWT',
        'at+jwt',
        fx.issuer.signingKey.kid,
        '',
        ['b64'],
        [],
        false,
      ),
      fc.jsonValue({ maxDepth: 2 }),
    );
    const remove = fc.boolean();
    await fc.assert(
      fc.asyncProperty(member, value, remove, async (name, replacement, removing) => {
        const changed: Record<string, unknown> = { ...header };
        if (removing) delete changed[name];
        else changed[name] = replacement;
        const result = await outcome(verifier.verify(signRaw(fx.issuer.signingKey, JSON.stringify(changed), JSON.stringify(claims))));
        if (result === 'ok') expect([changed.alg, changed.kid]).toEqual(['RS256', fx.issuer.signingKey.kid]);
      }),
      { numRuns: 200 },
    );
  });
});
