/**
 * Facts at the throw site: a failing rule records what it compared as data; the hint is written
 * from those facts only when read, and never from the token again.
 */
import { describe, expect, test } from 'vitest';
import { AuthError, type FailureFacts } from '../../src/index.js';
import { withIssuer } from '../../src/core/errors.js';
import { AUDIENCE, rejection, useFixture } from '../support/fixture.js';

const fx = useFixture();

describe('a failing rule records its facts', () => {
  test.each<[string, Record<string, unknown>, Record<string, unknown> | undefined, FailureFacts]>([
    [
      'aud',
      { aud: 'https://other.test' },
      undefined,
      { code: 'audience_mismatch', rule: 'aud', claim: 'aud', expected: [AUDIENCE], actual: 'https://other.test' },
    ],
    [
      'iss',
      { iss: 'https://evil.test', sub: 'https://evil.test' },
      undefined,
      { code: 'unknown_issuer', rule: 'iss', claim: 'iss', expected: ['https://issuer.test'], actual: 'https://evil.test' },
    ],
    ['typ', {}, { typ: 'JOSE' }, { code: 'invalid_typ', rule: 'typ', expected: ['JWT', 'at+jwt'], actual: 'JOSE' }],
    [
      'sub',
      { sub: 'client-7' },
      undefined,
      { code: 'subject_mismatch', rule: 'sub', claim: 'sub', expected: 'https://issuer.test', actual: 'client-7' },
    ],
    [
      'tenant_ern',
      { tenant_ern: 'ern:acme/tenant/t-1' },
      undefined,
      {
        code: 'invalid_claim',
        rule: 'tenant_ern',
        claim: 'tenant_ern',
        expected: { shapes: ['ern:<product>/tenants/<tenant-id>'] },
        actual: 'ern:acme/tenant/t-1',
        part: 'shape',
      },
    ],
  ])('%s: the code, the rule, the claim, what was expected and what the token had', async (_name, claims, header, facts) => {
    const error = await rejection(fx.verifier().verify(await fx.issuer.token(claims, header)));
    expect(error.facts).toEqual(facts);
  });

  test('a token with no expiry names expt and exp, keeping claim "exp"', async () => {
    const error = await rejection(fx.verifier().verify(await fx.issuer.token({ expt: undefined, exp: undefined })));
    expect([error.code, error.claim]).toEqual(['invalid_claim', 'exp']);
    expect(error.facts).toEqual({ code: 'invalid_claim', rule: 'expiry', claim: 'exp', expected: ['expt', 'exp'] });
    expect(error.message).toContain('"expt"');
    expect(error.message).toContain('"exp"');
    expect(error.hint).toContain('"expt"');
    expect(error.hint).toContain('"exp"');
  });
});

describe('the hint', () => {
  test('is written from the facts only when read, once', () => {
    let reads = 0;
    const facts: FailureFacts = {
      code: 'audience_mismatch',
      rule: 'aud',
      claim: 'aud',
      expected: [AUDIENCE],
      get actual() {
        reads += 1;
        return 'https://other.test';
      },
    };
    const error = new AuthError('audience_mismatch', 'Not for us.', { claim: 'aud', facts });
    expect(reads).toBe(0);
    expect(error.hint).toContain('"https://other.test"');
    const afterFirst = reads;
    expect(error.hint).toContain('"https://other.test"');
    expect(reads).toBe(afterFirst);
  });

  test('is undefined for an error without facts', () => {
    expect(new AuthError('missing_token', 'No token.').hint).toBeUndefined();
  });

  test('is left out, never thrown, when the facts cannot be written (facts a JavaScript caller made up)', () => {
    const made = { rule: 'expiry', expected: null } as unknown as FailureFacts<'token_expired'>;
    const error = new AuthError('token_expired', 'Expired.', { facts: made });
    expect(error.facts?.code).toBe('token_expired');
    expect(error.hint).toBeUndefined();
  });

  test("takes the error's code into facts given without one, and keeps facts that carry it as they are", () => {
    const facts = { rule: 'aud', claim: 'aud', expected: [AUDIENCE], actual: 'https://x.test' } as const;
    expect(new AuthError('audience_mismatch', 'Not for us.', { facts }).facts).toEqual({ code: 'audience_mismatch', ...facts });
    const coded: FailureFacts<'audience_mismatch'> = { code: 'audience_mismatch', ...facts };
    expect(new AuthError('audience_mismatch', 'Not for us.', { facts: coded }).facts).toBe(coded);
  });

  test('withIssuer keeps every fact of the error', () => {
    const cause = new Error('network');
    const facts: FailureFacts = {
      code: 'jwks_unavailable',
      rule: 'key',
      expected: { issuer: 'https://issuer.test', jwksUri: 'https://issuer.test/jwks.json', failure: null, reason: null },
    };
    const original = new AuthError('jwks_unavailable', 'Down.', { retryAfter: 3, cause, facts });
    const copy = withIssuer(original, 'https://issuer.test');
    expect([copy.retryAfter, copy.issuer, copy.cause, copy.facts, copy.hint]).toEqual([
      3,
      'https://issuer.test',
      cause,
      facts,
      original.hint,
    ]);
  });
});
