import { describe, expect, test } from 'vitest';
import { AUTH_ERROR_CODES, AuthError, type AuthErrorCode, ConfigurationError, KNOWN_SCOPES, toErrorResponse } from '../../src/index.js';

describe('toErrorResponse', () => {
  test('missing_token is 401 with a challenge that carries no error', () => {
    const response = toErrorResponse(new AuthError('missing_token', 'No token.'));
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer realm="paygate"');
  });

  test('an invalid token is 401 with error="invalid_token" and a description', () => {
    const response = toErrorResponse(new AuthError('token_expired', 'The token has expired.', { claim: 'exp' }));
    expect(response.status).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer realm="paygate", error="invalid_token", error_description="Token expired"');
  });

  test('invalid_request is 400 with error="invalid_request"', () => {
    const response = toErrorResponse(new AuthError('invalid_request', 'Two headers.'));
    expect(response.status).toBe(400);
    expect(response.headers['www-authenticate']).toBe(
      'Bearer realm="paygate", error="invalid_request", error_description="Invalid authorization request"',
    );
  });

  test('insufficient_scope is 403 with the scopes needed in scope="…"', () => {
    const error = new AuthError('insufficient_scope', 'Lacks scopes.', {
      requiredScopes: ['pay:processPayments', 'hub:subscribe'],
    });
    const response = toErrorResponse(error);
    expect(response.status).toBe(403);
    expect(response.headers['www-authenticate']).toBe(
      'Bearer realm="paygate", error="insufficient_scope", error_description="Insufficient scope", scope="pay:processPayments hub:subscribe"',
    );
  });

  test.each([
    ['a quote and a parameter', ['pay:x", error="forged']],
    ['a line break', ['pay:x\r\nset-cookie: a=b']],
    ['non-ASCII text', ['pay:é']],
  ])('a hand-made insufficient_scope error whose requiredScopes hold %s puts no scope="…" in the challenge', (_name, scopes) => {
    const error = new AuthError('insufficient_scope', 'Lacks scopes.', { requiredScopes: scopes });
    const response = toErrorResponse(error);
    expect(response.status).toBe(403);
    expect(response.headers['www-authenticate']).toBe(
      'Bearer realm="paygate", error="insufficient_scope", error_description="Insufficient scope"',
    );
  });

  test.each([
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
  ])('a hand-made jwks_unavailable error whose retryAfter is %s gets Retry-After: 1, a value a client can read', (_name, retryAfter) => {
    const response = toErrorResponse(new AuthError('jwks_unavailable', 'Keys unavailable.', { retryAfter }));
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('1');
  });

  test('jwks_unavailable is 503 with Retry-After in whole seconds and no challenge', () => {
    const response = toErrorResponse(new AuthError('jwks_unavailable', 'Keys unavailable.', { retryAfter: 2.2 }));
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('3');
    expect(response.headers['www-authenticate']).toBeUndefined();
  });

  test.each(Object.keys(AUTH_ERROR_CODES) as AuthErrorCode[])(
    "%s: the challenge is under 256 bytes with the default realm and all the gateway's scopes",
    (code) => {
      const error = new AuthError(code, 'Refused.', { requiredScopes: KNOWN_SCOPES });
      const value = toErrorResponse(error).headers['www-authenticate'] ?? '';
      expect(new TextEncoder().encode(value).byteLength).toBeLessThan(256);
    },
  );

  test("an error that only looks like an AuthError (its name and code) answers its code's status and challenge, not its own fields", () => {
    // isAuthError accepts copies of the package by name and code: the rest of such an object is not this package's text.
    const lookAlike = Object.assign(new Error('The request said "x".'), {
      name: 'AuthError',
      code: 'invalid_request',
      status: 200,
      error: 'invalid_request", error_description="forged',
      title: 'forged title',
    });
    const response = toErrorResponse(lookAlike);
    expect(response.status).toBe(400);
    expect(response.headers['www-authenticate']).toBe(
      'Bearer realm="paygate", error="invalid_request", error_description="Invalid authorization request"',
    );
    expect(response.body).toMatchObject({ status: 400, code: 'invalid_request', title: 'Invalid authorization request' });
  });

  test('an error that only looks like an AuthError has its detail and claim cut and escaped in the body', () => {
    const lookAlike = Object.assign(new Error(`x\u202e${'y'.repeat(1_000_000)}`), {
      name: 'AuthError',
      code: 'invalid_claim',
      claim: `aud\u2028${'z'.repeat(1_000_000)}`,
    });
    const { body } = toErrorResponse(lookAlike);
    expect(body.detail.length).toBeLessThan(1100);
    expect(body.detail).not.toContain('\u202e');
    expect(body.claim?.length).toBeLessThan(1100);
    expect(body.claim).not.toContain('\u2028');
  });

  test('the realm is configurable and appears in every challenge', () => {
    const response = toErrorResponse(new AuthError('malformed_token', 'Bad.'), { realm: 'payments-eu' });
    expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="payments-eu", /);
  });

  test('a realm that cannot be quoted is refused', () => {
    expect(() => toErrorResponse(new AuthError('malformed_token', 'Bad.'), { realm: 'a"b' })).toThrow(TypeError);
  });

  test('a refused realm is named with the value found', () => {
    expect(() => toErrorResponse(new AuthError('malformed_token', 'Bad.'), { realm: 'caf\u00e9' })).toThrow(
      /^realm must be .*, got "café"$/,
    );
  });

  test('the body is RFC 9457 problem+json carrying the code and the claim', () => {
    const response = toErrorResponse(new AuthError('invalid_claim', 'The "aud" claim must be a string.', { claim: 'aud' }));
    expect(response.headers['content-type']).toBe('application/problem+json');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toEqual({
      type: 'urn:paygate-auth:problem:invalid_claim',
      title: 'Invalid claim',
      status: 401,
      detail: 'The "aud" claim must be a string.',
      code: 'invalid_claim',
      claim: 'aud',
    });
  });

  test.each(Object.keys(AUTH_ERROR_CODES) as AuthErrorCode[])('the %s challenge carries a fixed description, never the message', (code) => {
    const hostile = `\u202e${'/'.repeat(20_000)}"\r\nSet-Cookie: a=b`;
    const challenge = toErrorResponse(new AuthError(code, hostile)).headers['www-authenticate'];
    if (challenge === undefined) return;
    expect(challenge).not.toContain('//');
    expect(challenge).not.toContain('Set-Cookie');
    expect(new TextEncoder().encode(challenge).byteLength).toBeLessThan(256);
    expect(challenge).toMatch(/^[\x20-\x7e]*$/);
  });

  test.each(Object.keys(AUTH_ERROR_CODES) as AuthErrorCode[])('%s keeps its documented status', (code) => {
    const response = toErrorResponse(new AuthError(code, 'x'));
    expect(response.status).toBe(AUTH_ERROR_CODES[code].status);
    expect(response.body.code).toBe(code);
  });

  test('a configuration error is 500 configuration_error without its message', () => {
    const response = toErrorResponse(new ConfigurationError('requireScopes() ran where no verification did'));
    expect(response.status).toBe(500);
    expect(response.body.code).toBe('configuration_error');
    expect(response.body.detail).not.toContain('requireScopes');
  });

  test('any other error is 500 internal_error and says nothing of it (it may hold secrets)', () => {
    const response = toErrorResponse(new Error('database password is hunter2'));
    expect(response.status).toBe(500);
    expect(response.body.code).toBe('internal_error');
    expect(JSON.stringify(response)).not.toContain('hunter2');
  });
});

describe('toErrorResponse and hints', () => {
  const hinted = new AuthError('audience_mismatch', 'The token is not meant for this service ("aud").', {
    claim: 'aud',
    facts: { rule: 'aud', claim: 'aud', expected: ['https://payments.test'], actual: 'https://x.test' },
  });

  test('leaves the hint out of the body by default', () => {
    const response = toErrorResponse(hinted);
    expect(response.body).not.toHaveProperty('hint');
    expect(JSON.stringify(response)).not.toContain('x.test');
  });

  test('puts the hint in the body with exposeHints: true', () => {
    const response = toErrorResponse(hinted, { exposeHints: true });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({
      type: 'urn:paygate-auth:problem:audience_mismatch',
      title: 'Audience mismatch',
      status: 401,
      detail: 'The token is not meant for this service ("aud").',
      code: 'audience_mismatch',
      claim: 'aud',
      hint: hinted.hint,
    });
  });

  test('never puts the hint in WWW-Authenticate', () => {
    expect(toErrorResponse(hinted, { exposeHints: true }).headers['www-authenticate']).not.toContain('payments.test');
  });

  test('adds no hint member for an error without one', () => {
    expect(toErrorResponse(new AuthError('missing_token', 'No token.'), { exposeHints: true }).body).not.toHaveProperty('hint');
  });

  test('a non-boolean exposeHints is refused, naming it', () => {
    expect(() => toErrorResponse(hinted, { exposeHints: 'yes' as unknown as boolean })).toThrow(
      /^toErrorResponse: exposeHints must be a boolean/,
    );
  });
});
