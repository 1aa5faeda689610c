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
    ['aud', { aud: 'https://other.test' }, undefined, { rule: 'aud', claim: 'aud', expected: [AUDIENCE], actual: 'https://other.test' }],
    [
      'iss',
      { iss: 'https://evil.test', sub: 'https://evil.test' },
      undefined,
      { rule: 'iss', claim: 'iss', expected: ['https://issuer.test'], actual: 'https://evil.test' },
    ],
    ['typ', {}, { typ: 'JOSE' }, { rule: 'typ', expected: ['JWT', 'at+jwt'], actual: 'JOSE' }],
    ['sub', { sub: 'client-7' }, undefined, { rule: 'sub', claim: 'sub', expected: 'https://issuer.test', actual: 'client-7' }],
  ])('%s: the rule, the claim, what was expected and what the token had', async (_name, claims, header, facts) => {
    const error = await rejection(fx.verifier().verify(await fx.issuer.token(claims, header)));
    expect(error.facts).toEqual(facts);
  });

  test('a token with no expiry names expt and exp, keeping claim "exp"', async () => {
    const error = await rejection(fx.verifier().verify(await fx.issuer.token({ expt: undefined, exp: undefined })));
    expect([error.code, error.claim]).toEqual(['invalid_claim', 'exp']);
    expect(error.facts).toMatchObject({ rule: 'expiry', claim: 'exp', expected: ['expt', 'exp'] });
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

  test('is left out, never thrown, when the facts cannot be written', () => {
    const error = new AuthError('token_expired', 'Expired.', { facts: { rule: 'expiry', expected: null } });
    expect(error.hint).toBeUndefined();
  });

  test('withIssuer keeps every fact of the error', () => {
    const cause = new Error('network');
    const facts: FailureFacts = {
      rule: 'key',
      expected: { issuer: 'https://issuer.test', jwksUri: 'https://issuer.test/jwks.json', failure: null },
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
