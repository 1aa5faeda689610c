/**
 * Hints: each failure says what was compared, for the integrator's logs and events, and never
 * quotes the token, a signature or key material.
 */
import { describe, expect, test } from 'vitest';
import type { AuthError, VerifierEvent, VerifyFailureEvent } from '../../src/index.js';
import { type TestIssuer, generateTestKey } from '../../src/testing/index.js';
import { AUDIENCE, rejection, seconds, useFixture } from '../support/fixture.js';
import { verifyUntilCached } from '../support/result-cache.js';

const fx = useFixture(
  {},
  {
    issuer: 'https://limited.test',
    product: 'acme',
    tenants: ['t-secret-1'],
    tenant: 'ern:acme/tenants/t-secret-1',
    kid: 'limited-key',
  },
  { issuer: 'https://short.test', product: 'acme', kid: 'short-key', maxTokenLifetime: 600 },
);
const acme = (): TestIssuer => fx.issuers[0]!;
const limited = (): TestIssuer => fx.issuers[1]!;
const short = (): TestIssuer => fx.issuers[2]!;
const now = (): number => seconds(fx.clock);

/** The error of verifying a token of `issuer` with `claims` (and `header`) on a fresh verifier. */
async function failure(claims: Record<string, unknown>, header?: Record<string, unknown>, issuer = acme()): Promise<AuthError> {
  return rejection(fx.verifier().verify(await issuer.token(claims, header)));
}

describe("audience_mismatch names the audiences expected against the token's", () => {
  test('a trailing slash is called out', async () => {
    const error = await failure({ aud: `${AUDIENCE}/` });
    expect([error.code, error.status]).toEqual(['audience_mismatch', 401]);
    expect(error.hint).toBe(
      'The token\'s "aud" is "https://payments.test/"; this verifier expects "https://payments.test". ' +
        '"https://payments.test/" differs from "https://payments.test" only by a trailing slash.',
    );
  });

  test('a difference of letter case is called out', async () => {
    expect((await failure({ aud: 'https://Payments.test' })).hint).toContain('only by letter case');
  });

  test('every audience of the token and of the verifier is listed', async () => {
    const verifier = fx.verifier({ audience: [AUDIENCE, 'https://refunds.test'] });
    const error = await rejection(verifier.verify(await acme().token({ aud: ['https://a.test', 'https://b.test'] })));
    expect(error.hint).toBe(
      'The token\'s "aud" is "https://a.test", "https://b.test"; this verifier expects "https://payments.test", "https://refunds.test".',
    );
  });

  test('a token without aud is told what is expected', async () => {
    const error = await failure({ aud: undefined });
    expect(error.code).toBe('audience_mismatch');
    expect(error.hint).toBe('The token names no audience; this verifier expects "https://payments.test".');
  });
});

describe('unknown_issuer names the registered issuers, a near miss first', () => {
  test.each([
    ['https://issuer.test/', 'a trailing slash'],
    ['HTTPS://ISSUER.TEST', 'letter case'],
    ['http://issuer.test', 'http: against https:'],
    ['http://Issuer.test/', 'http: against https: and a trailing slash and letter case'],
  ])('%s differs from https://issuer.test by %s', async (iss, difference) => {
    const error = await failure({ iss, sub: iss });
    expect(error.code).toBe('unknown_issuer');
    expect(error.hint).toContain(`The token's "iss" is ${JSON.stringify(iss)}; the registered issuers are "https://issuer.test", `);
    expect(error.hint).toContain(`"https://issuer.test" differs from it only by ${difference} (issuers are compared exactly).`);
  });

  test('an iss with a non-ASCII lookalike letter names it by its code point (it prints like the registered one)', async () => {
    const iss = 'https://issuer.t\u0435st';
    const error = await failure({ iss, sub: iss });
    expect(error.code).toBe('unknown_issuer');
    expect(error.hint).toContain('"https://issuer.test" differs from it only by a non-ASCII character (U+0435) in place of "e"');
  });

  test('the near miss is listed first, whatever its place in the registry', async () => {
    const error = await failure({ iss: 'https://short.test/', sub: 'https://short.test/' });
    expect(error.hint).toContain('the registered issuers are "https://short.test", "https://issuer.test", "https://limited.test".');
  });

  test('an unrelated issuer is quoted against every registered issuer', async () => {
    const error = await failure({ iss: 'https://evil.test', sub: 'https://evil.test' });
    expect(error.hint).toContain('"iss" is "https://evil.test"');
    expect(error.hint).toContain('the registered issuers are "https://issuer.test", "https://limited.test", "https://short.test"');
    expect(error.hint).toContain('none differs from it only by a trailing slash, letter case or http/https');
  });
});

describe("unknown_key names the token's kid against the kids held", () => {
  test('a key the issuer never published', async () => {
    const stray = await generateTestKey({ kid: 'stray-key' });
    const error = await rejection(fx.verifier().verify(await acme().token({}, {}, { key: stray })));
    expect([error.code, error.status]).toEqual(['unknown_key', 401]);
    expect(error.hint).toBe(
      'The token\'s "kid" is "stray-key"; the usable keys held for "https://issuer.test" (its JWKS loaded 0 s ago) are "test-key". ' +
        'An unknown kid reloads the JWKS at most once per jwksCooldown.',
    );
  });

  test('within the cooldown, the age of the held keys is given, and a kid differing in case is named', async () => {
    const verifier = fx.verifier();
    const token = await acme().token({}, { kid: 'Test-Key' });
    // The first miss loads the JWKS, the second refetches it (a kid miss); later ones wait a cooldown.
    expect((await rejection(verifier.verify(token))).code).toBe('unknown_key');
    expect((await rejection(verifier.verify(token))).code).toBe('unknown_key');
    fx.clock.advance(12);
    const error = await rejection(verifier.verify(token));
    expect(error.code).toBe('unknown_key');
    expect(error.hint).toContain('(its JWKS loaded 12 s ago) are "test-key".');
    expect(error.hint).toContain('"test-key" differs from it only by letter case.');
  });
});

describe("unknown_key says why the JWKS's entry under the token's kid was ignored", () => {
  test('a 1024-bit key: the key rule it broke, as the jwks_fetch event reports it', async () => {
    const weak = await generateTestKey({ kid: 'test-key', modulusLength: 1024 });
    const events: VerifierEvent[] = [];
    const verifier = fx.verifier({ fetch: async () => Response.json({ keys: [weak.publicJwk] }), onEvent: (event) => events.push(event) });
    const error = await rejection(verifier.verify(await acme().token()));
    const reason = { kid: 'test-key', reason: 'modulus of 1024 bits, under 2048' };
    expect(events.find((event) => event.type === 'jwks_fetch')).toMatchObject({ ignored: [reason] });
    expect(error.facts).toMatchObject({ code: 'unknown_key', rule: 'key', expected: { kids: [], ignored: [reason] }, actual: 'test-key' });
    expect(error.hint).toBe(
      'The token\'s "kid" is "test-key"; the JWKS of "https://issuer.test" lists it, but it was ignored: modulus of 1024 bits, under 2048. ' +
        'The usable keys held for "https://issuer.test" (its JWKS loaded 0 s ago) are none.',
    );
  });

  test("a key published for an alg not accepted: the key's alg and those accepted", async () => {
    const jwk = { ...acme().jwks.keys[0], alg: 'RS384' };
    const verifier = fx.verifier({ fetch: async () => Response.json({ keys: [jwk] }) });
    const error = await rejection(verifier.verify(await acme().token()));
    expect(error.code).toBe('unknown_key');
    expect(error.hint).toContain('lists it, but it was ignored: published for alg "RS384", not one accepted ("RS256")');
  });

  test("a key published for an accepted alg other than the token's: the key's alg against the token's", async () => {
    const jwk = { ...acme().jwks.keys[0], alg: 'RS384' };
    const verifier = fx.verifier({ algorithms: ['RS256', 'RS384'], fetch: async () => Response.json({ keys: [jwk] }) });
    const error = await rejection(verifier.verify(await acme().token()));
    expect(error.facts).toEqual({
      code: 'unknown_key',
      rule: 'key',
      expected: { issuer: 'https://issuer.test', kid: 'test-key', alg: 'RS384' },
      actual: 'RS256',
    });
    expect(error.hint).toBe('The key "test-key" of "https://issuer.test" is published for "RS384"; the token\'s "alg" is "RS256".');
  });

  test('a kid the JWKS spells with control characters is quoted escaped, with the reason', async () => {
    const kid = 'k\u001b[2J\u202e';
    const weak = await generateTestKey({ kid, modulusLength: 1024 });
    const verifier = fx.verifier({ fetch: async () => Response.json({ keys: [weak.publicJwk] }) });
    const error = await rejection(verifier.verify(await acme().token({}, { kid })));
    expect(error.hint).toContain('"kid" is "k\\u001b[2J\\u202e"; the JWKS of "https://issuer.test" lists it, but it was ignored');
    expect(error.hint).not.toMatch(/[\u001b\u202e]/);
  });
});

describe('time claims', () => {
  test('an expiry in milliseconds keeps token_lifetime_exceeded and says it looks like milliseconds', async () => {
    const expt = fx.clock() + 300_000;
    const error = await failure({ expt });
    expect([error.code, error.status, error.claim]).toEqual(['token_lifetime_exceeded', 401, 'expt']);
    expect(error.hint).toContain(`"expt" − "iat" is ${expt - now()} s (from 2026-01-01T00:00:00Z to +057971-`);
    expect(error.hint).toContain(
      `; at most 86400 s is allowed. "expt" (${expt}) looks like milliseconds since the epoch: NumericDate claims are seconds.`,
    );
  });

  test('with exp and expt both in milliseconds, the one that counts is named', async () => {
    const error = await failure({ exp: fx.clock() + 300_000, expt: fx.clock() + 400_000 });
    expect(error.hint).toContain('"exp" (');
    expect(error.hint).toContain('looks like milliseconds');
  });

  test('an expiry not after the start names both claims and both times', async () => {
    const error = await failure({ iat: now() - 10, nbf: now() + 20, expt: now() - 20 });
    expect(error.code).toBe('invalid_claim');
    expect(error.hint).toContain(`"expt" is 2025-12-31T23:59:40Z (${now() - 20}), not after "nbf", 2026-01-01T00:00:20Z (${now() + 20})`);
    expect(error.hint).toContain('Sign it with "expt" after "nbf".');
  });

  test("a lifetime over an issuer's own limit says the limit is the issuer's", async () => {
    const error = await failure({ expt: now() + 900 }, undefined, short());
    expect(error.code).toBe('token_lifetime_exceeded');
    expect(error.hint).toBe(
      '"expt" − "iat" is 900 s (from 2026-01-01T00:00:00Z to 2026-01-01T00:15:00Z); at most 600 s is allowed for this issuer.',
    );
  });

  test('an iat in milliseconds is token_not_yet_valid, and the hint says milliseconds', async () => {
    const error = await failure({ iat: fx.clock(), expt: now() + 300 });
    expect(error.code).toBe('token_not_yet_valid');
    expect(error.hint).toContain('"iat" (');
    expect(error.hint).toContain('looks like milliseconds since the epoch');
  });

  test('an iat ahead of the clock asks whether the clocks are in step', async () => {
    const error = await failure({ iat: now() + 120, expt: now() + 300 });
    expect(error.hint).toBe(
      `"iat" is 2026-01-01T00:02:00Z (${now() + 120}), 120 s ahead of this verifier's clock, 2026-01-01T00:00:00Z (clock tolerance 30 s): ` +
        "are the issuer's and this server's clocks in step?",
    );
  });

  test('token_expired gives the expiry and the clock as dates, and how long ago in seconds', async () => {
    const token = await acme().token();
    fx.clock.advance(3600);
    const error = await rejection(fx.verifier().verify(token));
    expect([error.code, error.claim]).toEqual(['token_expired', 'expt']);
    expect(error.hint).toBe(
      `"expt" is 2026-01-01T00:05:00Z (${now() - 3600 + 300}), 3300 s before this verifier's clock, 2026-01-01T01:00:00Z (clock tolerance 30 s).`,
    );
  });

  test('token_expired from the result cache carries the hint too', async () => {
    const verifier = fx.verifier();
    const token = await acme().token();
    await verifyUntilCached(verifier, token);
    fx.clock.advance(600);
    const error = await rejection(verifier.verify(token));
    expect(error.code).toBe('token_expired');
    expect(error.hint).toContain('"expt" is 2026-01-01T00:05:00Z');
    expect(error.hint).toContain("300 s before this verifier's clock, 2026-01-01T00:10:00Z");
  });

  test('an expiry that looks like a duration is called so', async () => {
    const error = await failure({ expt: 300 });
    expect(error.code).toBe('token_expired');
    expect(error.hint).toContain('300 looks like a duration, not a time in seconds since the epoch.');
  });
});

describe('tenant_not_allowed', () => {
  test("names the tenant's product against the issuer's products", async () => {
    const error = await failure({ tenant_ern: 'ern:beta/tenants/t-1' });
    expect([error.code, error.status]).toEqual(['tenant_not_allowed', 401]);
    expect(error.hint).toBe('The token\'s tenant is of product "beta"; "https://issuer.test" is registered for "acme".');
  });

  test("never lists the tenants of a limited integration (they are other customers')", async () => {
    const error = await failure({ tenant_ern: 'ern:acme/tenants/t-2' }, undefined, limited());
    expect(error.code).toBe('tenant_not_allowed');
    expect(error.hint).toBe(
      'The token\'s tenant "t-2" is not among the 1 tenants "https://limited.test" is registered for (a limited integration).',
    );
    expect(error.hint).not.toContain('t-secret-1');
  });
});

describe('other codes', () => {
  test.each<[string, () => Promise<AuthError>, string, string]>([
    [
      'unsupported_algorithm',
      () => failure({}, { alg: 'HS256' }),
      'unsupported_algorithm',
      'The token\'s "alg" is "HS256"; this verifier accepts "RS256".',
    ],
    [
      'invalid_typ',
      () => failure({}, { typ: 'JWE' }),
      'invalid_typ',
      'The token\'s "typ" is "JWE"; accepted are "JWT", "at+jwt" (any case, "application/" prefix allowed) or no "typ".',
    ],
    [
      'missing_kid',
      () => failure({}, { kid: 7 }),
      'missing_kid',
      'The token\'s "kid" is a number; it must name its signing key in 1 to 256 characters.',
    ],
    [
      'invalid_claim',
      () => failure({ expt: '300' }),
      'invalid_claim',
      'The token\'s "expt" is the string "300"; it must be a NumericDate (seconds since the epoch, a number ≥ 0).',
    ],
    [
      'subject_mismatch',
      () => failure({ sub: 'https://issuer.test/' }),
      'subject_mismatch',
      'The token\'s "sub" is "https://issuer.test/"; "https://issuer.test" is registered with subjectMustEqualIssuer: "sub" must be exactly its "iss", "https://issuer.test", from which it differs only by a trailing slash.',
    ],
  ])('%s says what the token carries and what is expected', async (_name, run, code, hint) => {
    const error = await run();
    expect(error.code).toBe(code);
    expect(error.hint).toBe(hint);
  });

  test('malformed_token says when the token is an encrypted JWT', async () => {
    const error = await rejection(fx.verifier().verify('eyJh.eyJi.eyJj.eyJk.eyJl'));
    expect(error.code).toBe('malformed_token');
    expect(error.hint).toBe('The token has five segments: an encrypted token (JWE), which this verifier does not read.');
  });

  test('token_too_large gives the size against maxTokenBytes', async () => {
    const verifier = fx.verifier({ maxTokenBytes: 1024 });
    const error = await rejection(verifier.verify('a'.repeat(2000)));
    expect([error.code, error.status]).toEqual(['token_too_large', 401]);
    expect(error.hint).toBe('The token is at least 2000 bytes; maxTokenBytes is 1024.');
    expect((await rejection(verifier.verify('é'.repeat(1000)))).hint).toBe('The token is 2000 bytes; maxTokenBytes is 1024.');
  });

  test('invalid_signature names the key it was checked with', async () => {
    const other = await generateTestKey({ kid: 'test-key' });
    const error = await rejection(fx.verifier().verify(await acme().token({}, {}, { key: other })));
    expect(error.code).toBe('invalid_signature');
    expect(error.hint).toContain('The "RS256" signature does not verify with the key "test-key" of "https://issuer.test"');
  });

  test('key_revoked and issuer_suspended name the operator call', async () => {
    const verifier = fx.verifier();
    const token = await acme().token();
    await verifier.verify(token);
    verifier.revokeKey(acme().issuer, 'test-key');
    expect((await rejection(verifier.verify(token))).hint).toBe(
      'The key "test-key" of "https://issuer.test" was revoked with revokeKey().',
    );
    verifier.suspendIssuer(acme().issuer);
    expect((await rejection(verifier.verify(token))).hint).toBe(
      '"https://issuer.test" is suspended with suspendIssuer() until resumeIssuer().',
    );
  });

  test('jwks_unavailable names the JWKS URL and why it failed', async () => {
    const verifier = fx.verifier({ fetch: () => Promise.reject(new TypeError('fetch failed')), jwksBackoff: 0 });
    const error = await rejection(verifier.verify(await acme().token()));
    expect([error.code, error.status]).toEqual(['jwks_unavailable', 503]);
    expect(error.hint).toContain('"https://issuer.test/.well-known/jwks.json"');
    expect(error.hint).toContain('is that the URL the JWKS is served at now?');
  });
});

describe('verify_failure events', () => {
  test("carry the error's hint", async () => {
    const events: VerifierEvent[] = [];
    const verifier = fx.verifier({ onEvent: (event) => events.push(event) });
    const error = await rejection(verifier.verify(await acme().token({ aud: `${AUDIENCE}/` })));
    const failures = events.filter((event): event is VerifyFailureEvent => event.type === 'verify_failure');
    expect(failures).toEqual([
      {
        type: 'verify_failure',
        code: 'audience_mismatch',
        issuer: acme().issuer,
        kid: expect.any(String),
        cached: false,
        durationMs: expect.any(Number),
        claim: 'aud',
        facts: error.facts,
        hint: error.hint,
      },
    ]);
    expect(error.hint).toContain('trailing slash');
  });
});

describe('hints never quote the token, its signature or key material', () => {
  /** Every 24-character window of `secret`: none may appear in a hint. */
  function windows(secret: string): string[] {
    const result: string[] = [];
    for (let at = 0; at + 24 <= secret.length; at += 8) result.push(secret.slice(at, at + 24));
    return result;
  }

  test('for every hinted failure (attack: a hint echoing a bearer token into logs or a response)', async () => {
    const stray = await generateTestKey({ kid: 'stray-key' });
    const other = await generateTestKey({ kid: 'test-key' });
    const tokens = [
      await acme().token({ aud: `${AUDIENCE}/` }),
      await acme().token({ iss: 'https://issuer.test/', sub: 'https://issuer.test/' }),
      await acme().token({}, {}, { key: stray }),
      await acme().token({}, {}, { key: other }),
      await acme().token({ expt: fx.clock() + 300_000 }),
      await acme().token({ tenant_ern: 'ern:beta/tenants/t-1' }),
      await acme().token({ iat: now() + 120 }),
      await acme().token({ expt: 300 }),
      await acme().token({}, { alg: 'HS256' }),
      await acme().token({ sub: 'x' }),
    ];
    const verifier = fx.verifier();
    const keyMaterial = [acme().signingKey, stray, other].flatMap((key) => [
      String(key.publicJwk.n),
      Buffer.from(key.privateKeyPkcs8).toString('base64'),
      Buffer.from(key.privateKeyPkcs8).toString('base64url'),
    ]);
    let hinted = 0;
    for (const token of tokens) {
      const error = await rejection(verifier.verify(token));
      expect(error.hint, error.code).toBeTypeOf('string');
      hinted += 1;
      const secrets = [token, ...token.split('.'), ...keyMaterial].flatMap(windows);
      for (const secret of secrets) expect(error.hint).not.toContain(secret);
      expect(error.message).not.toContain(token.split('.')[2]);
    }
    expect(hinted).toBe(tokens.length);
  });

  test('a long value the client sent is cut, and control characters are escaped', async () => {
    const error = await failure({ aud: `https://x.test/${'a'.repeat(500)}\n` });
    expect(error.hint).toContain(`"https://x.test/${'a'.repeat(65)}…"`);
    expect(error.hint).not.toContain('\n');
    expect(error.hint!.length).toBeLessThan(300);
  });
});
