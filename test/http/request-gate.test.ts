import { beforeAll, describe, expect, it } from 'vitest';
import type { AuthContext } from '../../src/core/auth-context.js';
import { AuthError, ConfigurationError } from '../../src/core/errors.js';
import { normalizeScopeRequirement } from '../../src/core/scopes.js';
import { resolveAdapterOptions } from '../../src/http/adapter-options.js';
import type { AuthenticatingVerifier } from '../../src/http/authenticate.js';
import { gateRequest, gateScopes } from '../../src/http/request-gate.js';
import { createTestIssuer, createTestVerifier } from '../../src/testing/index.js';

const PREFLIGHT = { origin: 'https://shop.example', 'access-control-request-method': 'POST' };

/** A verifier standing in for the real one: it only counts and answers. */
function stubVerifier(verify: (token: string) => Promise<AuthContext>): AuthenticatingVerifier & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    verify: (token) => {
      calls.push(token);
      return verify(token);
    },
  };
}

describe('gateRequest', () => {
  let token: string;
  let verifier: AuthenticatingVerifier;
  let otherScopes: string;
  let customOnly: string;

  beforeAll(async () => {
    const issuer = await createTestIssuer();
    token = await issuer.token();
    otherScopes = await issuer.token({ scope: 'pay:manageIntegration' });
    customOnly = await issuer.token({ scope: 'partner:custom' });
    verifier = createTestVerifier(issuer, { fetch: async () => Response.json(issuer.jwks) });
  });

  it('returns the verified context of a Node request', async () => {
    const result = await gateRequest(resolveAdapterOptions('auth', { verifier }), {
      method: 'GET',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(result.ok && result.auth?.tenant.ern).toBe('ern:acme/tenants/t-1');
  });

  it('answers a cached token at once, so that the adapter passes the request on in the same call', async () => {
    const settings = resolveAdapterOptions('auth', { verifier });
    const request = { method: 'GET', headers: { authorization: `Bearer ${token}` } };
    await gateRequest(settings, request);
    await gateRequest(settings, request);
    const result = gateRequest(settings, request);
    expect(result).not.toBeInstanceOf(Promise);
    expect(!(result instanceof Promise) && result.ok && result.auth?.tenant.ern).toBe('ern:acme/tenants/t-1');
  });

  it('answers a header refused before verification at once, with the response to send', () => {
    const result = gateRequest(resolveAdapterOptions('auth', { verifier }), { method: 'GET', headers: { authorization: 'Bearer a b' } });
    expect(!(result instanceof Promise) && !result.ok && result.response?.status).toBe(400);
  });

  it('returns the verified context of a Web request', async () => {
    const request = new Request('http://127.0.0.1/', { headers: { authorization: `Bearer ${token}` } });
    const result = await gateRequest(resolveAdapterOptions('withAuth', { verifier }), request);
    expect(result.ok).toBe(true);
  });

  it("reads every Authorization value from Node's headersDistinct", async () => {
    const request = {
      method: 'GET',
      headers: { authorization: `Bearer ${token}` },
      headersDistinct: { authorization: [`Bearer ${token}`, `Bearer ${token}`] },
    };
    const result = await gateRequest(resolveAdapterOptions('auth', { verifier }), request);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatchObject({ code: 'invalid_request', status: 400 });
  });

  it("reads the Authorization value from Node's raw header lines, whatever the name's case", async () => {
    const request = {
      method: 'GET',
      headers: {},
      rawHeaders: ['Host', '127.0.0.1', 'Authorization', `Bearer ${token}`],
    };
    const result = await gateRequest(resolveAdapterOptions('auth', { verifier }), request);
    expect(result.ok && result.auth?.tenant.ern).toBe('ern:acme/tenants/t-1');
  });

  it("refuses two Authorization lines among Node's raw header lines as 400 invalid_request", async () => {
    const request = {
      method: 'GET',
      headers: {},
      rawHeaders: ['authorization', `Bearer ${token}`, 'authorization', `Bearer ${token}`],
    };
    const result = await gateRequest(resolveAdapterOptions('auth', { verifier }), request);
    expect(!result.ok && result.error).toMatchObject({ code: 'invalid_request', status: 400 });
  });

  it("refuses a token holding the route's scope but none of the gateway's scopes", async () => {
    const request = { method: 'GET', headers: { authorization: `Bearer ${customOnly}` } };
    const result = await gateRequest(resolveAdapterOptions('auth', { verifier }), request, normalizeScopeRequirement('partner:custom'));
    expect(!result.ok && result.error).toMatchObject({ code: 'insufficient_scope', status: 403 });
    expect(!result.ok && result.error).not.toMatchObject({ requiredScopes: ['partner:custom'] });
  });

  it('builds the response in the configured realm', async () => {
    const result = await gateRequest(resolveAdapterOptions('auth', { verifier, realm: 'payments' }), {
      method: 'GET',
      headers: {},
    });
    expect(!result.ok && result.response).toMatchObject({
      status: 401,
      headers: { 'www-authenticate': 'Bearer realm="payments"' },
    });
  });

  it('builds no response when failures are forwarded', async () => {
    const result = await gateRequest(resolveAdapterOptions('auth', { verifier, forwardErrors: true }), {
      method: 'GET',
      headers: {},
    });
    expect(result).toMatchObject({ ok: false, response: undefined });
    expect(!result.ok && result.error).toBeInstanceOf(AuthError);
  });

  it('lets an allowed preflight through without verifying it', async () => {
    const stub = stubVerifier(() => Promise.reject(new Error('not called')));
    const result = await gateRequest(resolveAdapterOptions('auth', { verifier: stub, allowPreflight: true }), {
      method: 'OPTIONS',
      headers: PREFLIGHT,
    });
    expect(result).toEqual({ ok: true, auth: null });
    expect(stub.calls).toEqual([]);
  });

  it('verifies a preflight when preflights are not allowed', async () => {
    const result = await gateRequest(resolveAdapterOptions('auth', { verifier }), {
      method: 'OPTIONS',
      headers: PREFLIGHT,
    });
    expect(!result.ok && result.error).toMatchObject({ code: 'missing_token' });
  });

  it('needs both the default requiredScopes and the route scopes', async () => {
    const settings = resolveAdapterOptions('auth', { verifier, requiredScopes: 'pay:processPayments' });
    const routeOnly = await gateRequest(
      settings,
      { method: 'GET', headers: { authorization: `Bearer ${otherScopes}` } },
      normalizeScopeRequirement('pay:manageIntegration'),
    );
    expect(!routeOnly.ok && routeOnly.error).toMatchObject({
      code: 'insufficient_scope',
      requiredScopes: ['pay:processPayments'],
    });
    const defaultOnly = await gateRequest(
      settings,
      { method: 'GET', headers: { authorization: `Bearer ${token}` } },
      normalizeScopeRequirement('pay:manageIntegration'),
    );
    expect(!defaultOnly.ok && defaultOnly.error).toMatchObject({
      code: 'insufficient_scope',
      requiredScopes: ['pay:manageIntegration'],
    });
  });

  it('answers a server fault in the verifier as a 500 internal_error without its detail, never rejecting', async () => {
    const stub = stubVerifier(() => Promise.reject(new Error('secret detail')));
    const result = await gateRequest(resolveAdapterOptions('auth', { verifier: stub }), {
      method: 'GET',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(!result.ok && result.response).toMatchObject({ status: 500, body: { code: 'internal_error' } });
    expect(JSON.stringify(!result.ok && result.response)).not.toContain('secret detail');
  });

  it('forwards a server fault in the verifier as it was thrown', async () => {
    const fault = new Error('bug');
    const stub = stubVerifier(() => Promise.reject(fault));
    const result = await gateRequest(resolveAdapterOptions('auth', { verifier: stub, forwardErrors: true }), {
      method: 'GET',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(!result.ok && result.error).toBe(fault);
  });
});

describe('gateScopes', () => {
  let auth: AuthContext;
  let verifier: AuthenticatingVerifier;
  let token: string;

  beforeAll(async () => {
    const issuer = await createTestIssuer();
    verifier = createTestVerifier(issuer, { fetch: async () => Response.json(issuer.jwks) });
    token = await issuer.token();
    auth = await verifier.verify(token);
  });

  it('passes a context holding the scopes', () => {
    expect(gateScopes({}, auth, { allOf: ['pay:processPayments'] })).toEqual({ ok: true });
  });

  it('fails a context lacking a scope with 403 insufficient_scope', () => {
    const result = gateScopes({}, auth, { allOf: ['hub:subscribe'] });
    expect(!result.ok && result.response).toMatchObject({ status: 403, body: { code: 'insufficient_scope' } });
  });

  it.each([null, undefined])('fails where no verification ran (auth %s) as a 500 configuration error', (missing) => {
    const result = gateScopes({}, missing, { allOf: ['pay:processPayments'] });
    expect(!result.ok && result.error).toBeInstanceOf(ConfigurationError);
    expect(!result.ok && result.response).toMatchObject({ status: 500, body: { code: 'configuration_error' } });
  });

  it('answers with the realm and error path the request was gated with', async () => {
    const request = { method: 'GET', headers: { authorization: `Bearer ${token}` } };
    await gateRequest(resolveAdapterOptions('auth', { verifier, realm: 'payments' }), request);
    const answered = gateScopes(request, auth, { allOf: ['hub:subscribe'] });
    expect(!answered.ok && answered.response?.headers['www-authenticate']).toMatch(/^Bearer realm="payments", error="insufficient_scope"/);
    const forwardedRequest = { method: 'GET', headers: { authorization: `Bearer ${token}` } };
    await gateRequest(resolveAdapterOptions('auth', { verifier, forwardErrors: true }), forwardedRequest);
    const forwarded = gateScopes(forwardedRequest, auth, { allOf: ['hub:subscribe'] });
    expect(forwarded).toMatchObject({ ok: false, response: undefined });
  });

  it('passes a CORS preflight that allowPreflight let through, its auth staying null', () => {
    const request = { method: 'OPTIONS', headers: { ...PREFLIGHT } };
    const gated = gateRequest(resolveAdapterOptions('auth', { verifier, allowPreflight: true }), request);
    expect(gated).toEqual({ ok: true, auth: null });
    expect(gateScopes(request, null, { allOf: ['pay:processPayments'] })).toEqual({ ok: true });
  });

  it('fails a CORS preflight where no gate ran as a 500 configuration error', () => {
    const result = gateScopes({ method: 'OPTIONS', headers: { ...PREFLIGHT } }, null, { allOf: ['pay:processPayments'] });
    expect(!result.ok && result.response).toMatchObject({ status: 500, body: { code: 'configuration_error' } });
  });

  it('fails a let-through preflight whose method was changed after the gate as a 500 configuration error', () => {
    const request = { method: 'OPTIONS', headers: { ...PREFLIGHT } };
    gateRequest(resolveAdapterOptions('auth', { verifier, allowPreflight: true }), request);
    request.method = 'GET';
    const result = gateScopes(request, null, { allOf: ['pay:processPayments'] });
    expect(!result.ok && result.response).toMatchObject({ status: 500, body: { code: 'configuration_error' } });
  });

  it('fails a let-through preflight whose auth was cleared to undefined as a 500 configuration error', () => {
    const request = { method: 'OPTIONS', headers: { ...PREFLIGHT } };
    gateRequest(resolveAdapterOptions('auth', { verifier, allowPreflight: true }), request);
    const result = gateScopes(request, undefined, { allOf: ['pay:processPayments'] });
    expect(!result.ok && result.response).toMatchObject({ status: 500, body: { code: 'configuration_error' } });
  });

  it('answers an ungated request in the default realm', () => {
    const result = gateScopes({}, auth, { allOf: ['hub:subscribe'] });
    expect(!result.ok && result.response?.headers['www-authenticate']).toMatch(/^Bearer realm="paygate"/);
  });
});
