/**
 * The key rules through the verifier: a JWKS entry that breaks a key rule is ignored, so a
 * token whose only matching key is unusable is `unknown_key`, while the rest of the set still
 * verifies. The JWKS is served by msw.
 */
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type TestIssuer, type TestKey, createTestIssuer, generateTestKey } from '../../src/testing/index.js';
import { jwksHandlers } from '../../src/testing/msw.js';
import { fakeClock } from '../support/jwks-clock.js';
import { authRejection } from '../support/jwks-rejection.js';
import { verifierFixture } from '../support/verifier-fixture.js';

const AUDIENCE = 'https://payments.test';
const clock = fakeClock();
const server = setupServer();
let issuer: TestIssuer;
/** The key that signs every token of this file except the default ones; published under many guises. */
let rogue: TestKey;
let weak: TestKey;

/** `rogue`'s public JWK published under `kid` with `changes` (`undefined` removes a member). */
function rogueAs(kid: string, changes: Record<string, unknown> = {}): Record<string, unknown> {
  const jwk: Record<string, unknown> = { ...rogue.publicJwk, kid };
  for (const [member, value] of Object.entries(changes)) {
    if (value === undefined) delete jwk[member];
    else jwk[member] = value;
  }
  return jwk;
}

const UNUSABLE = {
  'ec-key': { kty: 'EC', crv: 'P-256' },
  'oct-key': { kty: 'oct', k: 'c2VjcmV0' },
  'enc-key': { use: 'enc' },
  'rs512-key': { alg: 'RS512' },
  'hs256-key': { alg: 'HS256' },
  'no-verify-key': { key_ops: ['encrypt'] },
  'private-key': { d: 'AQAB', p: 'AQAB', q: 'AQAB' },
  'e1-key': { e: 'AQ' },
  'e-even-key': { e: 'AQAA' },
} as const;

beforeAll(async () => {
  issuer = await createTestIssuer({ audience: AUDIENCE, now: clock.now });
  [rogue, weak] = await Promise.all([generateTestKey({ kid: 'rogue' }), issuer.addKey({ kid: 'weak-1024', modulusLength: 1024 })]);
  for (const [kid, changes] of Object.entries(UNUSABLE)) issuer.publish(rogueAs(kid, changes));
  // Two different keys under one kid; and a key with no kid at all.
  issuer.publish({ ...issuer.signingKey.publicJwk, kid: 'twin' }, rogueAs('twin'));
  issuer.publish(rogueAs('unused', { kid: undefined }));
  server.use(...jwksHandlers(issuer));
  server.listen({ onUnhandledRequest: 'error' });
});

afterAll(() => server.close());

const { verifier, log } = verifierFixture(() => ({ registry: [issuer.entry], audience: AUDIENCE, now: clock.now }));

/** A token signed by `rogue` whose header names `kid`. */
const signedByRogue = (kid: string, header: Record<string, unknown> = {}) => issuer.token({}, { kid, ...header }, { key: rogue });

describe('an unusable key is ignored: its tokens are unknown_key', () => {
  test.each([
    ['ec-key', 'an EC key under the kid (key-type confusion)'],
    ['oct-key', 'a symmetric key under the kid (an HMAC secret anyone could read)'],
    ['enc-key', 'a key published for encryption (use "enc": cross-purpose key reuse)'],
    ['rs512-key', 'a key published for RS512 (algorithm substitution)'],
    ['hs256-key', 'a key published for HS256 (the RSA public key as an HMAC secret)'],
    ['no-verify-key', 'a key whose key_ops exclude verify'],
    ['private-key', 'a key published with its private members (a leaked key lets anyone sign)'],
    ['e1-key', 'a key with exponent 1 (every signature is forgeable)'],
    ['e-even-key', 'a key with an even exponent (not an RSA key)'],
  ])('%s: %s', async (kid) => {
    const error = await authRejection(verifier().verify(await signedByRogue(kid)));
    expect([error.code, error.status, error.error]).toEqual(['unknown_key', 401, 'invalid_token']);
  });

  test('a 1024-bit key is ignored (a factorable key: whoever factors it forges tokens)', async () => {
    const error = await authRejection(verifier().verify(await issuer.token({}, undefined, { key: weak })));
    expect([error.code, error.status]).toEqual(['unknown_key', 401]);
  });

  test('two different keys under one kid are both ignored (an injected entry cannot take over a kid)', async () => {
    const v = verifier();
    const byRogue = await authRejection(v.verify(await signedByRogue('twin')));
    const byOwner = await authRejection(v.verify(await issuer.token({}, { kid: 'twin' })));
    expect([byRogue.code, byOwner.code]).toEqual(['unknown_key', 'unknown_key']);
  });

  test('a key without kid is never a fallback for a kid that matches nothing', async () => {
    const error = await authRejection(verifier().verify(await signedByRogue('no-such-kid')));
    expect(error.code).toBe('unknown_key');
  });

  test("a token whose alg differs from its key's published alg is unknown_key, even when both algorithms are accepted", async () => {
    const v = verifier({ algorithms: ['RS256', 'PS256'] });
    const error = await authRejection(v.verify(await issuer.token({}, { alg: 'PS256' })));
    expect(error.code).toBe('unknown_key');
  });
});

describe('the rest of the set still counts', () => {
  test('the usable key verifies from the same JWKS, and the download reports the ignored entries', async () => {
    const v = verifier();
    await expect(v.verify(await issuer.token())).resolves.toMatchObject({ issuer: issuer.issuer });
    const ignored = Object.keys(UNUSABLE).length + 1 /* weak */ + 2 /* twins */ + 1 /* no kid */;
    expect(log.fetches()).toMatchObject([{ outcome: 'ok', keys: 1, ignoredKeys: ignored }]);
  });

  test('the download says which entry broke which key rule', async () => {
    const v = verifier();
    await v.warmUp();
    const reasons = log.fetches()[0]?.ignored ?? [];
    expect(reasons).toContainEqual({ kid: 'weak-1024', reason: 'modulus of 1024 bits, under 2048' });
    expect(reasons).toContainEqual({ kid: 'enc-key', reason: 'use is not sig' });
    expect(reasons).toContainEqual({ kid: 'twin', reason: 'another key has the same kid' });
    expect(reasons).toContainEqual({ reason: 'kid is missing' });
    expect(reasons).toHaveLength(Object.keys(UNUSABLE).length + 4);
  });

  test('a verifier that accepts PS256 uses a key published for PS256', async () => {
    issuer.publish(rogueAs('ps256-key', { alg: 'PS256' }));
    try {
      const v = verifier({ algorithms: ['RS256', 'PS256'] });
      await expect(v.verify(await signedByRogue('ps256-key', { alg: 'PS256' }))).resolves.toBeDefined();
    } finally {
      issuer.unpublish('ps256-key');
    }
  });
});
