import { describe, expect, test } from 'vitest';
import { AuthError, IssuerRegistry } from '../../src/index.js';
import { withHint } from '../../src/core/errors.js';
import { type HintSources, explainFailure } from '../../src/core/hints.js';

const registry = new IssuerRegistry([{ issuer: 'https://issuer.test', jwksUri: 'https://issuer.test/jwks.json', products: ['acme'] }]);
const sources: HintSources = {
  audiences: ['https://payments.test'],
  registry,
  keys: () => ({ version: 1, issuers: [] }),
  now: Date.UTC(2026, 0, 1),
  clockTolerance: 30,
  maxTokenLifetime: 86_400,
  maxTokenBytes: 8192,
};
const segment = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const token = `${segment({ alg: 'RS256', kid: 'k1' })}.${segment({ iss: 'https://issuer.test/', aud: 'x' })}.c2ln`;

describe('explainFailure', () => {
  test('returns a copy with the hint, leaving the original untouched (errors may be shared)', () => {
    const original = new AuthError('unknown_issuer', 'The token\'s issuer ("iss") is not registered.');
    const explained = explainFailure(original, token, sources) as AuthError;
    expect(explained).not.toBe(original);
    expect(original.hint).toBeUndefined();
    expect(explained.hint).toContain('"https://issuer.test" differs from it only by a trailing slash');
    expect([explained.code, explained.status, explained.message, explained.stack]).toEqual([original.code, original.status, original.message, original.stack]);
  });

  test('with one issuer registered, an unrelated iss is said to match neither it nor a near miss of it', () => {
    const unrelated = `${segment({ alg: 'RS256', kid: 'k1' })}.${segment({ iss: 'https://other.test' })}.c2ln`;
    const explained = explainFailure(new AuthError('unknown_issuer', 'Unknown.'), unrelated, sources) as AuthError;
    expect(explained.hint).toBe(
      'The token\'s "iss" is "https://other.test"; the one registered issuer neither matches it, nor differs from it only by a trailing slash, letter case or http/https.',
    );
  });

  test('keeps a hint already given', () => {
    const original = new AuthError('unknown_issuer', 'Unknown.', { hint: 'given' });
    expect(explainFailure(original, token, sources)).toBe(original);
  });

  test('passes through what is not an AuthError', () => {
    const error = new TypeError('boom');
    expect(explainFailure(error, token, sources)).toBe(error);
  });

  test('leaves the error unhinted, never throws, when a source fails', () => {
    const original = new AuthError('unknown_key', 'Unknown key.', { issuer: 'https://issuer.test' });
    const failing = { ...sources, keys: () => { throw new Error('broken'); } };
    expect(explainFailure(original, token, failing)).toBe(original);
  });

  test('leaves the error unhinted when the token does not decode', () => {
    const original = new AuthError('audience_mismatch', 'Not for us.', { claim: 'aud' });
    expect((explainFailure(original, 'not-a-token', sources) as AuthError).hint).toBe('The token names no audience; this verifier expects "https://payments.test".');
    expect(explainFailure(new AuthError('unknown_issuer', 'x'), 'not-a-token', sources)).toBeInstanceOf(AuthError);
  });

  test('withHint keeps every fact of the error', () => {
    const cause = new Error('network');
    const original = new AuthError('jwks_unavailable', 'Down.', { retryAfter: 3, issuer: 'https://issuer.test', cause });
    const copy = withHint(original, 'h');
    expect([copy.retryAfter, copy.issuer, copy.cause, copy.hint]).toEqual([3, 'https://issuer.test', cause, 'h']);
  });
});
