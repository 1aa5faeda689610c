/**
 * `jwksMaxKeys` through the verifier: a JWKS whose `keys` array holds more entries than it allows
 * is a failed download (`too_many_keys`), whatever its size in bytes, and a snapshot listing more
 * is not imported. The JWKS is served on 127.0.0.1.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { createVerifier, type KeySnapshot, type VerifierOptions } from '../../src/index.js';
import { type JwksServer, type TestIssuer, createTestIssuer, serveJwks } from '../../src/testing/index.js';
import { fakeClock } from '../support/jwks-clock.js';
import { authRejection } from '../support/jwks-rejection.js';
import { verifierFixture } from '../support/verifier-fixture.js';

const AUDIENCE = 'https://payments.test';
const clock = fakeClock();
let issuer: TestIssuer;
let server: JwksServer;
/** Entries served after the issuer's own keys: empty objects, ignored, three bytes each. */
let filler = 0;

beforeAll(async () => {
  issuer = await createTestIssuer({ audience: AUDIENCE, now: clock.now });
  server = await serveJwks(() => ({
    keys: [...issuer.jwks.keys, ...Array.from({ length: filler }, () => ({}))],
  }));
});

afterAll(() => server.close());

beforeEach(() => {
  clock.advance(3600);
});

const entry = () => ({ ...issuer.entry, jwksUri: server.url });
const { verifier, log } = verifierFixture(() => ({ registry: [entry()], audience: AUDIENCE, now: clock.now }));

/** Serves the issuer's own key and as many filler entries as make `total` entries in all. */
function serveEntries(total: number): void {
  filler = total - issuer.jwks.keys.length;
}

describe('the key count limit (default 100 entries)', () => {
  test('a JWKS of exactly 100 entries is read and its key verifies', async () => {
    serveEntries(100);
    await expect(verifier().verify(await issuer.token())).resolves.toMatchObject({ issuer: issuer.entry.issuer });
  });

  test('a JWKS of 101 entries is a failed download: too_many_keys, jwks_unavailable (attack: a key set that costs the verifier per entry)', async () => {
    serveEntries(101);
    const error = await authRejection(verifier().verify(await issuer.token()));
    expect([error.code, error.status]).toEqual(['jwks_unavailable', 503]);
    expect(log.fetches().map((event) => [event.outcome, event.reason])).toEqual([['error', 'too_many_keys']]);
  });

  test('10,000 small entries are refused as too_many_keys, the count and the limit named in the warmUp report', async () => {
    serveEntries(10_000);
    const [report] = await verifier().warmUp();
    expect(report?.ok).toBe(false);
    expect(report?.error).toContain('at most 100 entries');
    expect(report?.error).toContain('got 10000');
  });

  test('jwksMaxKeys raises the limit: 101 entries are read under jwksMaxKeys 101', async () => {
    serveEntries(101);
    await expect(verifier({ jwksMaxKeys: 101 }).verify(await issuer.token())).resolves.toMatchObject({ issuer: issuer.entry.issuer });
  });

  test('a snapshot listing more keys than jwksMaxKeys is not imported: the first verification downloads', async () => {
    serveEntries(1);
    const { n, e } = issuer.jwks.keys[0] as { readonly n: string; readonly e: string };
    // Four copies of the issuer's key, its own kid last: one more than jwksMaxKeys 3.
    const kids = ['copy-0', 'copy-1', 'copy-2', issuer.signingKey.kid];
    const keys = kids.map((kid) => ({ kty: 'RSA' as const, kid, n, e }));
    const snapshot: KeySnapshot = {
      version: 1,
      issuers: [{ issuer: issuer.entry.issuer, jwksUri: server.url, fetchedAt: clock.now(), keys }],
    };
    const before = server.requests;
    await verifier({ jwksMaxKeys: 3, keys: snapshot }).verify(await issuer.token());
    expect(server.requests - before).toBe(1);
  });
});

describe('the jwksMaxKeys option', () => {
  const base = (): VerifierOptions => ({ registry: [entry()], audience: AUDIENCE });

  test.each([1, 1000])('takes %d, a bound', (value) => {
    expect(() => createVerifier({ ...base(), jwksMaxKeys: value })).not.toThrow();
  });

  test.each([0, 1001, 1.5, Number.NaN, '100'])('refuses %j, naming the option, its unit and the value found', (value) => {
    expect(() => createVerifier({ ...base(), jwksMaxKeys: value as number })).toThrow(
      'jwksMaxKeys must be a whole number of keys from 1 to 1000, got',
    );
  });
});
