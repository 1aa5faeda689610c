import { createPrivateKey, sign } from 'node:crypto';
import { inspect } from 'node:util';
import { describe, expect, test } from 'vitest';
import { IssuerRegistry, createVerifier, parseUserReference } from '../../src/index.js';
import { encodeSegment } from '../../src/testing/index.js';
import { T0, rejection, seconds, useFixture } from '../support/fixture.js';
import { verifyUntilCached } from '../support/result-cache.js';

const fx = useFixture(
  {},
  { issuer: 'https://limited.test', product: 'acme', tenants: ['t-1'], kid: 'limited-key' },
  { issuer: 'https://beta.test', product: 'beta', tenant: 'ern:beta/tenants/b-1' },
  { issuer: 'https://limited-public.test', product: 'acme', tenants: ['t-1', 'public'], kid: 'limited-public-key' },
);
const acme = () => fx.issuers[0]!;
const limited = () => fx.issuers[1]!;
const beta = () => fx.issuers[2]!;
const limitedWithPublic = () => fx.issuers[3]!;
const now = () => seconds(fx.clock);
const HOUR = 3600;
const DAY = 24 * HOUR;

async function codeOf(claims: Record<string, unknown>, issuer = acme()): Promise<{ code: string; claim: string | undefined }> {
  const error = await rejection(fx.verifier().verify(await issuer.token(claims)));
  return { code: error.code, claim: error.claim };
}

describe('iss: an exact match with a registered issuer', () => {
  test.each([
    ['a trailing slash', 'https://issuer.test/'],
    ['another case', 'HTTPS://ISSUER.TEST'],
    ['leading white space', ' https://issuer.test'],
    ['an unregistered issuer', 'https://evil.test'],
  ])('an iss with %s is unknown_issuer (attack: a look-alike issuer)', async (_name, iss) => {
    expect(await codeOf({ iss, sub: iss })).toEqual({ code: 'unknown_issuer', claim: undefined });
  });

  test('after a token of a registered issuer, a look-alike on the same verifier is still unknown_issuer (the last match answers its exact text only)', async () => {
    const verifier = fx.verifier();
    await verifier.verify(await acme().token());
    const codes: string[] = [];
    for (const iss of ['https://issuer.tesT', 'https://issuer.test/', 'https://issuer.tes']) {
      codes.push((await rejection(verifier.verify(await acme().token({ iss, sub: iss })))).code);
    }
    expect(codes).toEqual(['unknown_issuer', 'unknown_issuer', 'unknown_issuer']);
  });

  test.each([
    ['missing', undefined],
    ['a number', 1],
    ['an array', ['https://issuer.test']],
  ])('an iss that is %s is invalid_claim naming iss', async (_name, iss) => {
    expect(await codeOf({ iss })).toEqual({ code: 'invalid_claim', claim: 'iss' });
  });

  test('a token signed by one issuer but naming another fails (attack: one issuer signing for another)', async () => {
    // beta's key has the same kid as acme's; the signature is checked with acme's key.
    const forged = await beta().token({ iss: acme().issuer, sub: acme().issuer, tenant_ern: 'ern:acme/tenants/t-1' });
    expect((await rejection(fx.verifier().verify(forged))).code).toBe('invalid_signature');
  });
});

describe("kid collisions across issuers: keys are looked up in the named issuer's JWKS only", () => {
  test("with both issuers' keys held under one kid, a token signed by one and naming the other is invalid_signature either way", async () => {
    const verifier = fx.verifier();
    await verifier.verify(await beta().token());
    await verifier.verify(await acme().token());
    expect(beta().signingKey.kid).toBe(acme().signingKey.kid);
    const asAcme = await beta().token({ iss: acme().issuer, sub: acme().issuer, tenant_ern: 'ern:acme/tenants/t-1' });
    const asBeta = await acme().token({ iss: beta().issuer, sub: beta().issuer, tenant_ern: 'ern:beta/tenants/b-1' });
    expect((await rejection(verifier.verify(asAcme))).code).toBe('invalid_signature');
    expect((await rejection(verifier.verify(asBeta))).code).toBe('invalid_signature');
  });

  test("a token naming a kid only another issuer publishes is unknown_key, though that issuer's key is held (attack: borrowing another issuer's key)", async () => {
    const verifier = fx.verifier();
    await verifier.verify(await limited().token());
    await verifier.verify(await acme().token());
    const forged = await limited().token({ iss: acme().issuer, sub: acme().issuer });
    expect(JSON.parse(Buffer.from(forged.split('.')[0] as string, 'base64url').toString())).toMatchObject({ kid: 'limited-key' });
    expect((await rejection(verifier.verify(forged))).code).toBe('unknown_key');
  });
});

describe('expiry: expt or exp, the earlier wins', () => {
  test('a token whose expiry is only in expt is accepted, and expiresAt is that expiry', async () => {
    const auth = await fx.verifier().verify(await acme().token({ exp: undefined, expt: now() + 120 }));
    expect(auth.expiresAt.getTime()).toBe((now() + 120) * 1000);
  });

  test('a token whose expiry is only in exp is accepted', async () => {
    const auth = await fx.verifier().verify(await acme().token({ expt: undefined, exp: now() + 60 }));
    expect(auth.expiresAt.getTime()).toBe((now() + 60) * 1000);
  });

  test('a token with neither exp nor expt is invalid_claim naming exp', async () => {
    expect(await codeOf({ expt: undefined, exp: undefined })).toEqual({ code: 'invalid_claim', claim: 'exp' });
  });

  test('with both, an expt in the past expires the token even though exp is later (attack: a far exp hiding an expired expt)', async () => {
    expect(await codeOf({ expt: now() - 120, exp: now() + 600 })).toEqual({ code: 'token_expired', claim: 'expt' });
  });

  test('with both, an exp in the past expires the token even though expt is later', async () => {
    expect(await codeOf({ expt: now() + 600, exp: now() - 120 })).toEqual({ code: 'token_expired', claim: 'exp' });
  });

  test('with both, expiresAt is the earlier', async () => {
    const auth = await fx.verifier().verify(await acme().token({ expt: now() + 600, exp: now() + 300 }));
    expect(auth.expiresAt.getTime()).toBe((now() + 300) * 1000);
  });

  test('a token expired by less than the clock tolerance is accepted', async () => {
    await expect(fx.verifier().verify(await acme().token({ iat: now() - 100, expt: now() - 29 }))).resolves.toBeDefined();
  });

  test('a token expired by exactly the clock tolerance is token_expired', async () => {
    expect(await codeOf({ iat: now() - 100, expt: now() - 30 })).toMatchObject({ code: 'token_expired' });
  });

  test('clockTolerance sets the tolerance', async () => {
    const token = await acme().token({ iat: now() - 100, expt: now() - 10 });
    expect((await rejection(fx.verifier({ clockTolerance: 5 }).verify(token))).code).toBe('token_expired');
  });

  test('a cached result is re-checked for expiry on every use', async () => {
    const verifier = fx.verifier();
    const token = await acme().token({ expt: now() + 60 });
    await verifyUntilCached(verifier, token);
    fx.clock.advance(120);
    expect((await rejection(verifier.verify(token))).code).toBe('token_expired');
  });
});

describe('iat and nbf', () => {
  test('a token without iat is invalid_claim naming iat', async () => {
    expect(await codeOf({ iat: undefined })).toEqual({ code: 'invalid_claim', claim: 'iat' });
  });

  test('an iat in the future beyond the tolerance is token_not_yet_valid (attack: pre-minted tokens)', async () => {
    expect(await codeOf({ iat: now() + 31, expt: now() + 300 })).toEqual({ code: 'token_not_yet_valid', claim: 'iat' });
  });

  test('an iat in the future within the tolerance is accepted', async () => {
    await expect(fx.verifier().verify(await acme().token({ iat: now() + 29, expt: now() + 300 }))).resolves.toBeDefined();
  });

  test('an iat exactly the clock tolerance (30 s) ahead is accepted: the tolerance is inclusive', async () => {
    const auth = await fx.verifier().verify(await acme().token({ iat: now() + 30, expt: now() + 300 }));
    expect(auth.issuer).toBe(acme().issuer);
  });

  test('an iat one second beyond the clock tolerance is token_not_yet_valid, naming the tolerance it broke', async () => {
    const error = await rejection(fx.verifier().verify(await acme().token({ iat: now() + 31, expt: now() + 300 })));
    expect([error.code, error.claim]).toEqual(['token_not_yet_valid', 'iat']);
    expect(error.facts).toMatchObject({ expected: { now: now(), tolerance: 30 }, actual: now() + 31 });
  });

  test('an nbf in the future beyond the tolerance is token_not_yet_valid', async () => {
    expect(await codeOf({ nbf: now() + 60 })).toEqual({ code: 'token_not_yet_valid', claim: 'nbf' });
  });

  test('an nbf exactly the clock tolerance (30 s) ahead is accepted: the tolerance is inclusive', async () => {
    const auth = await fx.verifier().verify(await acme().token({ nbf: now() + 30, expt: now() + 300 }));
    expect(auth.issuer).toBe(acme().issuer);
  });

  test('an nbf one second beyond the clock tolerance is token_not_yet_valid (attack: a token used before its window opens)', async () => {
    const error = await rejection(fx.verifier().verify(await acme().token({ nbf: now() + 31, expt: now() + 300 })));
    expect([error.code, error.claim]).toEqual(['token_not_yet_valid', 'nbf']);
    expect(error.facts).toMatchObject({ expected: { now: now(), tolerance: 30 }, actual: now() + 31 });
  });

  test('clockTolerance applies to nbf: 5 s of tolerance refuses an nbf 6 s ahead', async () => {
    const token = await acme().token({ nbf: now() + 6, expt: now() + 300 });
    await expect(fx.verifier({ clockTolerance: 6 }).verify(token)).resolves.toBeDefined();
    expect((await rejection(fx.verifier({ clockTolerance: 5 }).verify(token))).code).toBe('token_not_yet_valid');
  });

  test('an nbf in the past is accepted', async () => {
    await expect(fx.verifier().verify(await acme().token({ nbf: now() - 10 }))).resolves.toBeDefined();
  });

  test('a token becomes valid once its nbf is reached', async () => {
    const verifier = fx.verifier();
    const token = await acme().token({ nbf: now() + 120, expt: now() + 600 });
    expect((await rejection(verifier.verify(token))).code).toBe('token_not_yet_valid');
    fx.clock.advance(120);
    await expect(verifier.verify(token)).resolves.toBeDefined();
  });
});

describe('lifetime: expiry − (nbf ?? iat) more than 0 and at most the maximum', () => {
  test('an expiry before nbf is invalid_claim, though the tolerance lets each end through (attack: a token valid at no moment)', async () => {
    const error = await rejection(fx.verifier().verify(await acme().token({ iat: now() - 10, nbf: now() + 20, expt: now() - 20 })));
    expect(error.code).toBe('invalid_claim');
    expect(error.claim).toBe('expt');
    expect(error.facts).toEqual({
      code: 'invalid_claim',
      rule: 'lifetime',
      claim: 'expt',
      expected: 'expiry_after_start',
      actual: { lifetime: -40, expiry: now() - 20, expiryClaim: 'expt', start: now() + 20, startClaim: 'nbf' },
    });
  });

  test('an expiry equal to iat is invalid_claim: a lifetime of 0 s', async () => {
    const error = await rejection(fx.verifier().verify(await acme().token({ iat: now() - 5, expt: now() - 5 })));
    expect(error.facts).toMatchObject({ rule: 'lifetime', actual: { lifetime: 0, startClaim: 'iat' } });
  });

  test('an expiry one second after iat, within the tolerance, is accepted', async () => {
    await expect(fx.verifier().verify(await acme().token({ iat: now() - 6, expt: now() - 5 }))).resolves.toBeDefined();
  });

  test('a lifetime of exactly 24 h is accepted', async () => {
    await expect(fx.verifier().verify(await acme().token({ iat: now(), expt: now() + DAY }))).resolves.toBeDefined();
  });

  test('a lifetime of 24 h and one second is token_lifetime_exceeded (attack: long-lived stolen tokens)', async () => {
    expect(await codeOf({ iat: now(), expt: now() + DAY + 1 })).toEqual({
      code: 'token_lifetime_exceeded',
      claim: 'expt',
    });
  });

  test('the lifetime counts from nbf when present', async () => {
    const token = await acme().token({ iat: now() - 2 * DAY, nbf: now() - HOUR, expt: now() + DAY - HOUR });
    await expect(fx.verifier().verify(token)).resolves.toBeDefined();
  });

  test('the lifetime counts from an nbf earlier than iat: 24 h and one second from nbf is token_lifetime_exceeded (attack: a backdated nbf stretching the window)', async () => {
    // From iat the lifetime is 23 h and one second; the token is valid from nbf, though.
    const error = await rejection(
      fx.verifier().verify(await acme().token({ iat: now(), nbf: now() - HOUR, expt: now() + DAY - HOUR + 1 })),
    );
    expect([error.code, error.claim]).toEqual(['token_lifetime_exceeded', 'expt']);
    expect(error.facts).toMatchObject({ actual: { lifetime: DAY + 1, start: now() - HOUR, startClaim: 'nbf' } });
  });

  test('the lifetime counts from an nbf earlier than iat: exactly 24 h from nbf is accepted', async () => {
    const token = await acme().token({ iat: now(), nbf: now() - HOUR, expt: now() + DAY - HOUR });
    await expect(fx.verifier().verify(token)).resolves.toBeDefined();
  });

  test('the verifier option maxTokenLifetime lowers the maximum', async () => {
    const token = await acme().token({ iat: now(), expt: now() + 2 * HOUR });
    expect((await rejection(fx.verifier({ maxTokenLifetime: HOUR }).verify(token))).code).toBe('token_lifetime_exceeded');
  });

  test("an issuer entry's maxTokenLifetime wins over the verifier's", async () => {
    const strict = createVerifier({
      registry: new IssuerRegistry([{ ...acme().entry, maxTokenLifetime: HOUR }]),
      audience: 'https://payments.test',
      now: fx.clock,
    });
    const token = await acme().token({ iat: now(), expt: now() + 2 * HOUR });
    await expect(fx.verifier().verify(token)).resolves.toBeDefined();
    expect((await rejection(strict.verify(token))).code).toBe('token_lifetime_exceeded');
  });
  test("a lifetime of exactly an issuer entry's maxTokenLifetime is accepted, and one second more is token_lifetime_exceeded", async () => {
    const strict = createVerifier({
      registry: new IssuerRegistry([{ ...acme().entry, maxTokenLifetime: HOUR }]),
      audience: 'https://payments.test',
      now: fx.clock,
    });
    await expect(strict.verify(await acme().token({ iat: now(), expt: now() + HOUR }))).resolves.toBeDefined();
    const error = await rejection(strict.verify(await acme().token({ iat: now(), expt: now() + HOUR + 1 })));
    expect(error.code).toBe('token_lifetime_exceeded');
    expect(error.facts).toMatchObject({ expected: { maximum: HOUR, issuerOwn: true }, actual: { lifetime: HOUR + 1 } });
  });

  test("a lifetime of exactly the verifier's maxTokenLifetime is accepted, and one second more is token_lifetime_exceeded", async () => {
    const verifier = fx.verifier({ maxTokenLifetime: HOUR });
    await expect(verifier.verify(await acme().token({ iat: now(), expt: now() + HOUR }))).resolves.toBeDefined();
    const error = await rejection(verifier.verify(await acme().token({ iat: now(), expt: now() + HOUR + 1 })));
    expect(error.facts).toMatchObject({ code: 'token_lifetime_exceeded', expected: { maximum: HOUR, issuerOwn: false } });
  });
});

describe('aud: one value equal to one configured audience', () => {
  test('an aud array naming this service among others is accepted, and audience is the match', async () => {
    const auth = await fx.verifier().verify(await acme().token({ aud: ['https://other.test', 'https://payments.test'] }));
    expect(auth.audience).toBe('https://payments.test');
  });

  test('a verifier with several audiences accepts any of them', async () => {
    const auth = await fx
      .verifier({ audience: ['https://a.test', 'https://b.test'] })
      .verify(await acme().token({ aud: 'https://b.test' }));
    expect(auth.audience).toBe('https://b.test');
  });

  test('a token for another service is audience_mismatch (attack: replaying a token across services)', async () => {
    expect(await codeOf({ aud: 'https://reports.test' })).toEqual({ code: 'audience_mismatch', claim: 'aud' });
  });

  test.each([
    ['missing', undefined],
    ['an empty array', []],
  ])('an aud that is %s is audience_mismatch', async (_name, aud) => {
    expect(await codeOf({ aud })).toEqual({ code: 'audience_mismatch', claim: 'aud' });
  });

  test('audience matching is exact (no normalisation)', async () => {
    expect(await codeOf({ aud: 'https://payments.test/' })).toMatchObject({ code: 'audience_mismatch' });
  });

  test('after a token for this service, a look-alike audience on the same verifier is still audience_mismatch', async () => {
    const verifier = fx.verifier();
    await verifier.verify(await acme().token());
    const codes: string[] = [];
    for (const aud of ['https://payments.tesT', 'https://payments.test/', ['https://payments.tes']]) {
      codes.push((await rejection(verifier.verify(await acme().token({ aud })))).code);
    }
    expect(codes).toEqual(['audience_mismatch', 'audience_mismatch', 'audience_mismatch']);
  });

  test('the audience option cannot be empty', () => {
    expect(() => fx.verifier({ audience: [] })).toThrow(/audience must be/);
    expect(() => fx.verifier({ audience: '' })).toThrow(/audience must be/);
  });
});

describe('sub: equals iss', () => {
  test('a sub other than iss is subject_mismatch (attack: a token minted for another subject)', async () => {
    expect(await codeOf({ sub: 'someone-else' })).toEqual({ code: 'subject_mismatch', claim: 'sub' });
  });

  test('a token without sub is subject_mismatch', async () => {
    expect(await codeOf({ sub: undefined })).toEqual({ code: 'subject_mismatch', claim: 'sub' });
  });

  test('an issuer entry with subjectMustEqualIssuer false accepts another sub', async () => {
    const verifier = createVerifier({
      registry: new IssuerRegistry([{ ...acme().entry, subjectMustEqualIssuer: false }]),
      audience: 'https://payments.test',
      now: fx.clock,
    });
    await expect(verifier.verify(await acme().token({ sub: 'service-7' }))).resolves.toBeDefined();
  });

  test('an issuer entry with subjectMustEqualIssuer false still needs a sub, and the hint says so', async () => {
    const verifier = createVerifier({
      registry: new IssuerRegistry([{ ...acme().entry, subjectMustEqualIssuer: false }]),
      audience: 'https://payments.test',
      now: fx.clock,
    });
    const error = await rejection(verifier.verify(await acme().token({ sub: undefined })));
    expect([error.code, error.claim]).toEqual(['subject_mismatch', 'sub']);
    expect(error.hint).toContain('carries no "sub"');
    expect(error.hint).toContain('subjectMustEqualIssuer false');
  });
});

describe("tenant_ern: a tenant of the issuer's products and listed tenants", () => {
  test("another product's tenant is tenant_not_allowed (attack: one product's issuer reaching another product's tenants)", async () => {
    expect(await codeOf({ tenant_ern: 'ern:beta/tenants/b-1' })).toEqual({
      code: 'tenant_not_allowed',
      claim: 'tenant_ern',
    });
  });

  test("a tenant_ern whose product differs from the issuer's only in case is tenant_not_allowed (names are case-sensitive)", async () => {
    expect(await codeOf({ tenant_ern: 'ern:ACME/tenants/t-1' })).toEqual({ code: 'tenant_not_allowed', claim: 'tenant_ern' });
  });

  test('a limited integration naming its listed tenant id in another case is tenant_not_allowed', async () => {
    expect(await codeOf({ tenant_ern: 'ern:acme/tenants/T-1' }, limited())).toEqual({ code: 'tenant_not_allowed', claim: 'tenant_ern' });
  });

  test('a limited integration reaching an unlisted tenant is tenant_not_allowed (attack: widening a limited grant)', async () => {
    expect(await codeOf({ tenant_ern: 'ern:acme/tenants/t-2' }, limited())).toEqual({
      code: 'tenant_not_allowed',
      claim: 'tenant_ern',
    });
  });

  test("a limited integration does not reach its product's public tenant unless public is listed", async () => {
    expect(await codeOf({ tenant_ern: 'ern:acme/tenants/public' }, limited())).toMatchObject({
      code: 'tenant_not_allowed',
    });
  });

  test("a limited integration listing public reaches its product's public tenant", async () => {
    const auth = await fx.verifier().verify(await limitedWithPublic().token({ tenant_ern: 'ern:acme/tenants/public' }));
    expect(auth.tenant).toEqual({ ern: 'ern:acme/tenants/public', product: 'acme', id: 'public', isPublic: true });
  });

  test("a limited integration listing public still does not reach another product's public tenant", async () => {
    expect(await codeOf({ tenant_ern: 'ern:beta/tenants/public' }, limitedWithPublic())).toEqual({
      code: 'tenant_not_allowed',
      claim: 'tenant_ern',
    });
  });

  test('a limited integration reaches its listed tenant', async () => {
    const auth = await fx.verifier().verify(await limited().token());
    expect(auth.tenant).toEqual({ ern: 'ern:acme/tenants/t-1', product: 'acme', id: 't-1', isPublic: false });
  });

  test('the public tenant is reported as public', async () => {
    const auth = await fx.verifier().verify(await acme().token({ tenant_ern: 'ern:acme/tenants/public' }));
    expect(auth.tenant.isPublic).toBe(true);
  });

  test.each([
    ['missing', undefined],
    ['malformed', 'acme/t-1'],
    ['a user ERN', 'ern:acme/tenants/t-1/users/u-1'],
    ['a number', 5],
  ])('a tenant_ern that is %s is invalid_claim naming tenant_ern', async (_name, tenant_ern) => {
    expect(await codeOf({ tenant_ern })).toEqual({ code: 'invalid_claim', claim: 'tenant_ern' });
  });
});

describe('scope, tenant_name, user_ern', () => {
  test('scopes are parsed into a set, unknown scopes kept', async () => {
    const auth = await fx.verifier().verify(await acme().token({ scope: 'pay:processPayments hub:subscribe custom:thing' }));
    expect([...auth.scopes]).toEqual(['pay:processPayments', 'hub:subscribe', 'custom:thing']);
  });

  test('no scope claim means no scopes', async () => {
    const auth = await fx.verifier().verify(await acme().token({ scope: undefined }));
    expect(auth.scopes.size).toBe(0);
  });

  test('a scope with a doubled space is invalid_claim naming scope', async () => {
    expect(await codeOf({ scope: 'pay:processPayments  hub:subscribe' })).toEqual({
      code: 'invalid_claim',
      claim: 'scope',
    });
  });

  test('tenant_name is optional', async () => {
    const auth = await fx.verifier().verify(await acme().token({ tenant_name: undefined }));
    expect(auth.tenantName).toBeNull();
  });

  test.each([
    ['a tenant user', 'ern:acme/tenants/t-1/users/u-1', { form: 'tenant_user', tenantId: 't-1', userId: 'u-1' }],
    ['a product user', 'ern:acme/tenants/users/u-1', { form: 'product_user', tenantId: null, userId: 'u-1' }],
    ['a relative user', '//users/u-1', { form: 'relative', product: null, userId: 'u-1' }],
    ['the public tenant as a system actor', 'ern:acme/tenants/public', { form: 'system', tenantId: 'public', userId: null }],
  ])('user_ern as %s is parsed', async (_name, user_ern, expected) => {
    const auth = await fx.verifier().verify(await acme().token({ user_ern }));
    expect(auth.user).toMatchObject({ ern: user_ern, ...expected });
  });

  test("a user of the token's own tenant is read as parseUserReference reads it", async () => {
    const auth = await fx.verifier().verify(await acme().token({ user_ern: 'ern:acme/tenants/t-1/users/u-1' }));
    expect(auth.user).toEqual(parseUserReference('ern:acme/tenants/t-1/users/u-1'));
    expect(Object.isFrozen(auth.user)).toBe(true);
  });

  test("a user of another tenant of the product, whose id extends the token's tenant id, is that tenant's user", async () => {
    const auth = await fx.verifier().verify(await acme().token({ user_ern: 'ern:acme/tenants/t-10/users/u-1' }));
    expect(auth.user).toMatchObject({ form: 'tenant_user', tenantId: 't-10', userId: 'u-1' });
  });

  test.each([
    ['malformed', 'users/u-1'],
    ['a private tenant ERN', 'ern:acme/tenants/t-1'],
    ["another product's user", 'ern:beta/tenants/b-1/users/u-1'],
    ["the token's tenant with an empty user id", 'ern:acme/tenants/t-1/users/'],
    ["the token's tenant with a user id holding a space", 'ern:acme/tenants/t-1/users/u 1'],
    ["the token's tenant with a user id of 257 characters", `ern:acme/tenants/t-1/users/${'u'.repeat(257)}`],
    ["the token's tenant with a path after the user id", 'ern:acme/tenants/t-1/users/u-1/x'],
  ])('a user_ern that is %s is invalid_claim naming user_ern', async (_name, user_ern) => {
    expect(await codeOf({ user_ern })).toEqual({ code: 'invalid_claim', claim: 'user_ern' });
  });
});

describe('claim types: a wrong type is invalid_claim naming the claim', () => {
  test.each([
    ['exp', 'tomorrow'],
    ['expt', '1767225900'],
    ['expt', null],
    ['expt', -1],
    ['iat', true],
    ['nbf', '0'],
    ['aud', 42],
    ['aud', ['https://payments.test', 7]],
    ['sub', 7],
    ['tenant_ern', ['ern:acme/tenants/t-1']],
    ['scope', ['pay:processPayments']],
    ['tenant_name', 3],
    ['user_ern', { id: 'u-1' }],
  ])('%s = %j is invalid_claim naming it', async (claim, value) => {
    expect(await codeOf({ [claim]: value })).toEqual({ code: 'invalid_claim', claim });
  });
});

describe('the result', () => {
  test('carries tenant, tenant name, user, scopes, issuer, audience, expiry and the claims', async () => {
    const auth = await fx.verifier().verify(await acme().token({ user_ern: '//users/u-9' }));
    expect(auth).toMatchObject({
      tenant: { ern: 'ern:acme/tenants/t-1', product: 'acme', id: 't-1', isPublic: false },
      tenantName: 'Test Tenant',
      user: { form: 'relative', userId: 'u-9' },
      issuer: 'https://issuer.test',
      audience: 'https://payments.test',
    });
    expect(auth.expiresAt).toEqual(new Date(T0 + 300_000));
    expect(auth.claims.tenant_ern).toBe('ern:acme/tenants/t-1');
  });

  test('is frozen, its scopes cannot change and its expiry cannot be altered through a Date', async () => {
    const auth = await fx.verifier().verify(await acme().token({ extra: { nested: [1] } }));
    expect(Object.isFrozen(auth)).toBe(true);
    expect(Object.isFrozen(auth.tenant)).toBe(true);
    expect(Object.isFrozen(auth.claims)).toBe(true);
    expect(Object.isFrozen(auth.claims.extra)).toBe(true);
    expect(() => (auth.scopes as Set<string>).add('pay:manageIntegration')).toThrow(TypeError);
    expect(() => (auth.scopes as Set<string>).delete('pay:processPayments')).toThrow(TypeError);
    auth.expiresAt.setTime(0);
    expect(auth.expiresAt.getTime()).toBe(T0 + 300_000);
  });

  test('serializes to JSON with every member (scopes as an array, expiresAt in ISO 8601) and without the token', async () => {
    const token = await acme().token({ scope: 'pay:processPayments hub:subscribe' });
    const auth = await fx.verifier().verify(token);
    const json = JSON.parse(JSON.stringify(auth)) as Record<string, unknown>;
    expect(Object.keys(json)).toEqual(['tenant', 'tenantName', 'user', 'scopes', 'issuer', 'audience', 'expiresAt', 'claims']);
    expect(json.scopes).toEqual(['pay:processPayments', 'hub:subscribe']);
    expect(json.expiresAt).toBe(new Date(T0 + 300_000).toISOString());
    expect(json.claims).toEqual({ ...auth.claims });
    for (const segment of token.split('.')) expect(JSON.stringify(auth)).not.toContain(segment);
  });

  test('shows the same members to util.inspect (console.log), never the token', async () => {
    const token = await acme().token();
    const shown = inspect(await fx.verifier().verify(token), { depth: 4 });
    expect(shown).toContain("issuer: 'https://issuer.test'");
    expect(shown).toContain('expiresAt:');
    expect(shown).not.toContain(token.split('.')[2]);
  });

  test('drops __proto__ and constructor claims (attack: prototype pollution through claims)', async () => {
    const key = acme().signingKey;
    const payload = JSON.stringify(acme().claims()).replace(/}$/, ',"__proto__":{"admin":true},"constructor":{"x":1}}');
    const input = `${encodeSegment({ alg: 'RS256', kid: key.kid })}.${Buffer.from(payload).toString('base64url')}`;
    const token = signExact(input);
    const auth = await fx.verifier().verify(token);
    expect(Object.hasOwn(auth.claims, '__proto__')).toBe(false);
    expect(Object.hasOwn(auth.claims, 'constructor')).toBe(false);
    expect((auth.claims as { admin?: unknown }).admin).toBeUndefined();
    expect(({} as { admin?: unknown }).admin).toBeUndefined();
  });
});

/** Signs an already-encoded signing input with acme's key (the kit signs JSON it encodes itself). */
function signExact(input: string): string {
  const key = createPrivateKey({ key: Buffer.from(acme().signingKey.privateKeyPkcs8), format: 'der', type: 'pkcs8' });
  return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}
