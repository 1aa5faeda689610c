import { describe, expect, test } from 'vitest';
import type { AuthContext } from '../../src/core/auth-context.js';
import { ConfigurationError } from '../../src/core/errors.js';
import { requirementFailure } from '../../src/http/authenticate.js';
import {
  type AuthResult,
  type AuthenticateInput,
  type AuthenticatingVerifier,
  authenticate,
  authorizeScopes,
  toErrorResponse,
} from '../../src/index.js';
import { normalizeScopeRequirement } from '../../src/internal/index.js';
import { seconds, useFixture } from '../support/fixture.js';
import { verifyUntilCached } from '../support/result-cache.js';

const fx = useFixture();

function failed(result: AuthResult) {
  if (result.ok) throw new Error('expected a failure');
  return result.error;
}

describe('authenticate', () => {
  test('a valid bearer token with a known scope yields its AuthContext', async () => {
    const result = await authenticate(fx.verifier(), { authorization: `Bearer ${await fx.issuer.token()}` });
    expect(result.ok && result.auth.tenant.ern).toBe('ern:acme/tenants/t-1');
  });

  test('accepts every Authorization value as an array', async () => {
    const result = await authenticate(fx.verifier(), { authorization: [`Bearer ${await fx.issuer.token()}`] });
    expect(result.ok).toBe(true);
  });

  test('refuses an input that is not an object, naming the value found (a server fault, thrown at once)', () => {
    expect(() => authenticate(fx.verifier(), null as unknown as AuthenticateInput)).toThrow(
      /^authenticate: options must be an object, got null$/,
    );
  });

  test.each([
    ['null', null, /^authenticate: verifier must be a verifier from createVerifier\(\), got null$/],
    [
      'an object without verify()',
      {},
      /^authenticate: verifier must be a verifier from createVerifier\(\) \(verifier\.verify must be a function, got undefined\)$/,
    ],
  ])('refuses a verifier that is %s, naming it, where a TypeError of its own was thrown on', async (_name, verifier, message) => {
    const authorization = `Bearer ${await fx.issuer.token()}`;
    expect(() => authenticate(verifier as unknown as AuthenticatingVerifier, { authorization })).toThrow(message);
  });

  test('refuses a test issuer given as the verifier, saying to pass createTestVerifier(issuer)', async () => {
    const authorization = `Bearer ${await fx.issuer.token()}`;
    expect(() => authenticate(fx.issuer as unknown as AuthenticatingVerifier, { authorization })).toThrow(
      /^authenticate: verifier must be a verifier from createVerifier\(\), got a test issuer .*: pass createTestVerifier\(issuer\)/,
    );
  });

  test('a token not in the cache comes as a promise', async () => {
    expect(authenticate(fx.verifier(), { authorization: `Bearer ${await fx.issuer.token()}` })).toBeInstanceOf(Promise);
  });

  test('a header refused before verification is a result at once, the verifier never called', () => {
    const verify = () => Promise.reject(new Error('not called'));
    const result = authenticate({ verify }, { authorization: 'Basic dXNlcjpwYXNz' });
    expect(!(result instanceof Promise) && !result.ok && result.error.code).toBe('missing_token');
  });

  test.each([
    ['a b64token one byte over the limit', 'a'.repeat(1025)],
    ['a b64token of 1 MB', 'a'.repeat(1_048_576)],
  ])("%s is token_too_large (401): the size is the verifier's rule", async (_name, token) => {
    const error = failed(await authenticate(fx.verifier({ maxTokenBytes: 1024 }), { authorization: `Bearer ${token}` }));
    expect(error.code).toBe('token_too_large');
    expect(error.status).toBe(401);
  });

  test('credentials that are not a b64token are invalid_request before the verifier is asked (no re-labelling afterwards)', async () => {
    const calls: string[] = [];
    const verifier = fx.verifier();
    const counting = {
      verify: (token: string) => {
        calls.push(token);
        return verifier.verify(token);
      },
    };
    const error = failed(await authenticate(counting, { authorization: `Bearer ${'"'.repeat(9000)}` }));
    expect(error.code).toBe('invalid_request');
    expect(calls).toEqual([]);
  });

  test("a hand-made verifier's holds() is called as its method, as verify() and verifyNow() are (a wrapper class works)", async () => {
    class Wrapping {
      constructor(readonly inner: ReturnType<typeof fx.verifier>) {}
      verify(token: string) {
        return this.inner.verify(token);
      }
      verifyNow(token: string) {
        return this.inner.verifyNow(token);
      }
      holds(token: string) {
        return this.inner.holds(token);
      }
    }
    const wrapping = new Wrapping(fx.verifier());
    const authorization = `Bearer ${await fx.issuer.token()}`;
    const results = [];
    for (let use = 0; use < 3; use += 1) results.push((await authenticate(wrapping, { authorization })).ok);
    expect(results).toEqual([true, true, true]);
    expect(wrapping.holds(authorization.slice('Bearer '.length))).toBe(true);
  });

  test('a missing header is a missing_token result, not an exception', async () => {
    expect(failed(await authenticate(fx.verifier(), { authorization: undefined })).code).toBe('missing_token');
  });

  test("a bad token is a result carrying the verifier's code", async () => {
    expect(failed(await authenticate(fx.verifier(), { authorization: 'Bearer abc.def.ghi' })).code).toBe('malformed_token');
  });

  test.each([
    ['a character outside b64token', 'abc.d*f.ghi'],
    ['padding inside the token', 'ab=c.def.ghi'],
    ['a non-ASCII character', 'abc.d\u00e9f.ghi'],
  ])('credentials with %s are invalid_request (400), as extractBearerToken says', async (_name, token) => {
    const error = failed(await authenticate(fx.verifier(), { authorization: `Bearer ${token}` }));
    expect(error.code).toBe('invalid_request');
    expect(error.status).toBe(400);
  });

  test.each([
    ['"~" (a b64token character, not base64url)', 'abc.d~f.ghi'],
    ['trailing padding', 'abc.def.ghi='],
    ['standard base64 "+"', 'abc.d+f.ghi'],
  ])('a b64token that is not a compact JWS, with %s, is malformed_token (401)', async (_name, token) => {
    const error = failed(await authenticate(fx.verifier(), { authorization: `Bearer ${token}` }));
    expect(error.code).toBe('malformed_token');
    expect(error.status).toBe(401);
  });

  test('two Authorization headers are invalid_request (attack: credential smuggling)', async () => {
    const token = await fx.issuer.token();
    const error = failed(await authenticate(fx.verifier(), { authorization: [`Bearer ${token}`, `Bearer ${token}`] }));
    expect(error.code).toBe('invalid_request');
  });

  test('a token with no known scope is insufficient_scope by the default policy, naming every known scope', async () => {
    const error = failed(await authenticate(fx.verifier(), { authorization: `Bearer ${await fx.issuer.token({ scope: 'custom:x' })}` }));
    expect(error.code).toBe('insufficient_scope');
    expect(error.status).toBe(403);
    expect(toErrorResponse(error).headers['www-authenticate']).toContain(
      'scope="pay:processPayments pay:chargeToken pay:manageIntegration hub:subscribe"',
    );
  });

  test("an insufficient_scope hint names the scopes granted and the policy's, and reaches the body only with exposeHints", async () => {
    const error = failed(
      await authenticate(fx.verifier(), {
        authorization: `Bearer ${await fx.issuer.token({ scope: 'custom:x pay:refunds' })}`,
      }),
    );
    expect(error.hint).toBe(
      'The token grants "custom:x", "pay:refunds"; it needs one of "pay:processPayments", "pay:chargeToken", "pay:manageIntegration", "hub:subscribe".',
    );
    expect(toErrorResponse(error).body).not.toHaveProperty('hint');
    expect(toErrorResponse(error, { exposeHints: true }).body).toMatchObject({ hint: error.hint });
  });

  test('an insufficient_scope hint names what an all-of requirement lacks, and says when the token grants no scope', async () => {
    const token = await fx.issuer.token({ scope: 'pay:processPayments' });
    const lacking = failed(
      await authenticate(fx.verifier(), {
        authorization: `Bearer ${token}`,
        requiredScopes: ['pay:processPayments', 'hub:subscribe', 'pay:chargeToken'],
      }),
    );
    expect(lacking.hint).toBe('The token grants "pay:processPayments"; it lacks "hub:subscribe", "pay:chargeToken".');
    const none = failed(await authenticate(fx.verifier(), { authorization: `Bearer ${await fx.issuer.token({ scope: '' })}` }));
    expect(none.hint).toMatch(/^The token grants no scope; it needs one of "pay:processPayments"/);
  });

  test('an insufficient_scope hint stays one bounded line however many long scopes there are', async () => {
    const long = (prefix: string) => Array.from({ length: 10 }, (_, index) => `${prefix}:${String(index).repeat(100)}`);
    const token = await fx.issuer.token({ scope: ['pay:processPayments', ...long('granted')].join(' ') });
    const error = failed(await authenticate(fx.verifier(), { authorization: `Bearer ${token}`, requiredScopes: long('needed') }));
    expect(error.hint?.length).toBe(1000);
    expect(error.hint?.endsWith('…')).toBe(true);
    expect(error.hint).toContain('and 3 more');
  });

  test('route scopes add to the default policy: both must hold', async () => {
    const token = await fx.issuer.token({ scope: 'pay:processPayments' });
    const error = failed(await authenticate(fx.verifier(), { authorization: `Bearer ${token}`, requiredScopes: 'hub:subscribe' }));
    expect(error.code).toBe('insufficient_scope');
    expect(error.requiredScopes).toEqual(['hub:subscribe']);
  });

  test.each([
    ['a single scope', 'hub:subscribe', true],
    ['an array (all of)', ['pay:processPayments', 'hub:subscribe'], true],
    ['an array (all of), one missing', ['pay:processPayments', 'pay:chargeToken'], false],
    ['{ allOf }', { allOf: ['pay:processPayments', 'hub:subscribe'] }, true],
    ['{ anyOf }', { anyOf: ['pay:chargeToken', 'hub:subscribe'] }, true],
    ['{ anyOf }, none granted', { anyOf: ['pay:chargeToken', 'pay:manageIntegration'] }, false],
  ])('requiredScopes as %s', async (_name, requiredScopes, ok) => {
    const token = await fx.issuer.token({ scope: 'pay:processPayments hub:subscribe' });
    const result = await authenticate(fx.verifier(), { authorization: `Bearer ${token}`, requiredScopes });
    expect(result.ok).toBe(ok);
  });

  test('an array changed after a first use is read as it is now (no requirement is remembered by identity)', async () => {
    const token = await fx.issuer.token({ scope: 'pay:processPayments' });
    const requiredScopes = ['pay:processPayments'];
    const verifier = fx.verifier();
    expect((await authenticate(verifier, { authorization: `Bearer ${token}`, requiredScopes })).ok).toBe(true);
    requiredScopes.push('pay:manageIntegration');
    const error = failed(await authenticate(verifier, { authorization: `Bearer ${token}`, requiredScopes }));
    expect(error.requiredScopes).toEqual(['pay:processPayments', 'pay:manageIntegration']);
  });

  test('a requirement normalized once is a frozen copy: a later change to the array given is not seen', async () => {
    const token = await fx.issuer.token({ scope: 'pay:processPayments' });
    const scopes = ['pay:processPayments'];
    const requiredScopes = normalizeScopeRequirement(scopes);
    scopes.push('pay:manageIntegration');
    expect(Object.isFrozen(requiredScopes)).toBe(true);
    expect(normalizeScopeRequirement(requiredScopes)).toBe(requiredScopes);
    expect((await authenticate(fx.verifier(), { authorization: `Bearer ${token}`, requiredScopes })).ok).toBe(true);
  });

  test('a malformed requiredScopes throws a TypeError at once (a server misconfiguration, not a client fault)', () => {
    expect(() => authenticate(fx.verifier(), { authorization: undefined, requiredScopes: [] })).toThrow(TypeError);
  });
});

describe('a token in the result cache', () => {
  /** A verifier holding a token that expires in an hour, and its Authorization header. */
  async function cachedToken() {
    const verifier = fx.verifier();
    const iat = seconds(fx.clock);
    const token = await fx.issuer.token({ iat, expt: iat + 3600 });
    const context = await verifyUntilCached(verifier, token);
    return { verifier, context, input: { authorization: `Bearer ${token}` } };
  }

  test('is answered with the cached context itself', async () => {
    const { verifier, context, input } = await cachedToken();
    const result = await authenticate(verifier, input);
    expect(result.ok && result.auth).toBe(context);
  });

  test('is answered at once: the result itself, not a promise', async () => {
    const { verifier, context, input } = await cachedToken();
    const result = authenticate(verifier, input);
    expect(result).not.toBeInstanceOf(Promise);
    expect(!(result instanceof Promise) && result.ok && result.auth).toBe(context);
  });

  test('is answered at once when it fails too (its issuer suspended)', async () => {
    const { verifier, input } = await cachedToken();
    verifier.suspendIssuer(fx.issuer.issuer);
    const result = authenticate(verifier, input);
    expect(!(result instanceof Promise) && !result.ok && result.error.code).toBe('issuer_suspended');
  });

  test('is answered at once, as the policy says, when a route scope is missing', async () => {
    const { verifier, input } = await cachedToken();
    const result = authenticate(verifier, { ...input, requiredScopes: 'hub:subscribe' });
    expect(!(result instanceof Promise) && !result.ok && result.error.code).toBe('insufficient_scope');
  });

  test('comes as a promise from a verifier that has only verify()', async () => {
    const { verifier, context, input } = await cachedToken();
    const pending = authenticate({ verify: (token) => verifier.verify(token) }, input);
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toEqual({ ok: true, auth: context });
  });

  test('fails once its issuer is suspended with issuer_suspended (attack: a suspended integration riding on cached tokens)', async () => {
    const { verifier, input } = await cachedToken();
    verifier.suspendIssuer(fx.issuer.issuer);
    expect(failed(await authenticate(verifier, input)).code).toBe('issuer_suspended');
  });

  test('fails once it has expired with token_expired', async () => {
    const { verifier, input } = await cachedToken();
    fx.clock.advance(3600 + 30);
    expect(failed(await authenticate(verifier, input)).code).toBe('token_expired');
  });

  test('fails when the clock is back before its iat beyond the tolerance', async () => {
    const { verifier, input } = await cachedToken();
    fx.clock.advance(-31);
    expect(failed(await authenticate(verifier, input)).code).toBe('token_not_yet_valid');
  });

  test('still passes once its keys are past their max-age: the verifier reloads them', async () => {
    const { verifier, input } = await cachedToken();
    fx.clock.advance(600);
    expect((await authenticate(verifier, input)).ok).toBe(true);
  });

  test('fails once its key is revoked with key_revoked', async () => {
    const { verifier, input } = await cachedToken();
    verifier.revokeKey(fx.issuer.issuer, fx.issuer.signingKey.kid);
    expect(failed(await authenticate(verifier, input)).code).toBe('key_revoked');
  });
});

describe('authorizeScopes', () => {
  test('passes a context that holds the scopes', async () => {
    const auth = await fx.verifier().verify(await fx.issuer.token({ scope: 'hub:subscribe' }));
    expect(authorizeScopes(auth, 'hub:subscribe')).toEqual({ ok: true });
  });

  test('fails with insufficient_scope when a scope is missing', async () => {
    const auth = await fx.verifier().verify(await fx.issuer.token({ scope: 'hub:subscribe' }));
    const result = authorizeScopes(auth, 'pay:chargeToken');
    expect(!result.ok && result.error.code).toBe('insufficient_scope');
  });

  test('fails as a configuration error (500), never a pass, where no verification ran', () => {
    const result = authorizeScopes(null, 'hub:subscribe');
    expect(!result.ok && toErrorResponse(result.error).status).toBe(500);
  });

  test("fails as a configuration error (500) on another library's auth value, a JWT payload without scopes", () => {
    // express-jwt sets req.auth to the token's payload: requireScopes() must not throw a TypeError on it.
    const foreign = { sub: 'someone', scope: 'hub:subscribe' } as unknown as AuthContext;
    const result = authorizeScopes(foreign, 'hub:subscribe');
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toBeInstanceOf(ConfigurationError);
    expect(!result.ok && result.error.message).toMatch(/got undefined/);
  });
});

describe('requirementFailure', () => {
  test('passes a context that holds the required scopes', async () => {
    const auth = await fx.verifier().verify(await fx.issuer.token({ scope: 'hub:subscribe' }));
    expect(requirementFailure(auth, normalizeScopeRequirement({ allOf: ['hub:subscribe'] }))).toBeNull();
  });

  test('names the missing requirement in a 403 insufficient_scope', async () => {
    const auth = await fx.verifier().verify(await fx.issuer.token({ scope: 'hub:subscribe' }));
    const error = requirementFailure(auth, normalizeScopeRequirement({ anyOf: ['pay:chargeToken', 'pay:manageIntegration'] }));
    expect(error).toMatchObject({
      code: 'insufficient_scope',
      status: 403,
      requiredScopes: ['pay:chargeToken', 'pay:manageIntegration'],
    });
  });
});
