/**
 * The one table of cases every adapter runs, against its real framework listening on 127.0.0.1,
 * driven with `fetch`. The JWKS is served by a real loopback server (`issuer.listen()`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Verifier, createVerifier } from '../../src/core/verifier.js';
import { type TestIssuer, createTestIssuer, createTestVerifier, serveJwks } from '../../src/testing/index.js';
import { getWithHeaderLines } from './http-client.js';
import type { AdapterHarness, RunningApp } from './reference-app.js';

const AUDIENCE = 'https://payments.test';
const REALM = 'test-realm';
const PREFLIGHT = { origin: 'https://shop.example', 'access-control-request-method': 'POST' };

interface Table {
  issuer: TestIssuer;
  verifier: Verifier;
  /** `{ verifier, realm: 'test-realm', allowPreflight: true }` */
  main: RunningApp;
  /** The verifier's options flat, `requiredScopes: 'pay:processPayments'`, `forwardErrors: true`. */
  flat: RunningApp;
  /** A verifier whose issuer's JWKS cannot be reached; default realm; `exposeHints: true`. */
  down: RunningApp;
  close: () => Promise<void>;
}

async function closedPortUrl(): Promise<string> {
  const server = await serveJwks(() => ({ keys: [] }));
  await server.close();
  return server.url;
}

async function setUp(harness: AdapterHarness): Promise<Table> {
  const issuer = await createTestIssuer({ audience: AUDIENCE });
  const jwks = await issuer.listen();
  const verifier = createTestVerifier(issuer);
  const unreachable = { issuer: 'https://down.test', jwksUri: await closedPortUrl(), products: ['acme'] };
  const downVerifier = createVerifier({ registry: [unreachable], audience: AUDIENCE, jwksTimeout: 2 });
  const main = await harness.start({ verifier, realm: REALM, allowPreflight: true });
  const flat = await harness.start({
    registry: [issuer.entry],
    audience: AUDIENCE,
    requiredScopes: 'pay:processPayments',
    forwardErrors: true,
  });
  const down = await harness.start({ verifier: downVerifier, exposeHints: true });
  return {
    issuer,
    verifier,
    main,
    flat,
    down,
    close: async () => {
      await Promise.all([main.close(), flat.close(), down.close()]);
      await jwks.close();
    },
  };
}

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

async function problem(response: Response): Promise<Record<string, unknown>> {
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  return (await response.json()) as Record<string, unknown>;
}

/** Runs the shared table against `harness`. */
export function describeAdapterTable(harness: AdapterHarness): void {
  describe(`the ${harness.name} adapter (shared table)`, () => {
    let t: Table;
    const at = (app: RunningApp, path: string, init?: RequestInit) => fetch(`${app.url}${path}`, init);
    const token = (claims?: Record<string, unknown>) => t.issuer.token(claims);

    beforeAll(async () => {
      t = await setUp(harness);
    });
    afterAll(async () => {
      await t?.close();
    });

    it('lets a valid token reach the handler with its frozen AuthContext', async () => {
      const response = await at(t.main, '/me', { headers: bearer(await token()) });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        tenant: 'ern:acme/tenants/t-1',
        scopes: ['pay:processPayments'],
        frozen: true,
      });
    });

    it('answers a request without Authorization with 401 and a bare Bearer challenge in the configured realm', async () => {
      const response = await at(t.main, '/me');
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe(`Bearer realm="${REALM}"`);
      expect(await problem(response)).toMatchObject({ status: 401, code: 'missing_token' });
    });

    it("answers a HEAD request it refuses with a GET refusal's headers, Content-Length included, and no body", async () => {
      const get = await at(t.main, '/me');
      const length = String(new TextEncoder().encode(await get.text()).byteLength);
      const head = await at(t.main, '/me', { method: 'HEAD' });
      expect(head.status).toBe(401);
      expect(head.headers.get('content-length')).toBe(length);
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
      expect(head.headers.get('www-authenticate')).toBe(get.headers.get('www-authenticate'));
      expect(await head.text()).toBe('');
    });

    it('uses the realm "paygate" when none is configured', async () => {
      const response = await at(t.down, '/me');
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="paygate"');
    });

    it.each([
      ['a malformed token', async () => 'not-a-jwt', 'malformed_token'],
      [
        'an expired token',
        async () => token({ iat: Math.floor(Date.now() / 1000) - 3600, expt: Math.floor(Date.now() / 1000) - 600 }),
        'token_expired',
      ],
      ['a token for another audience', async () => token({ aud: 'https://elsewhere.test' }), 'audience_mismatch'],
      ['a token with a tampered signature', async () => `${(await token()).slice(0, -4)}AAAA`, 'invalid_signature'],
    ])('answers %s with 401 problem+json carrying its code', async (_name, make, code) => {
      const response = await at(t.main, '/me', { headers: bearer(await make()) });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(
        new RegExp(`^Bearer realm="${REALM}", error="invalid_token", error_description="[^"]+"$`),
      );
      expect(await problem(response)).toMatchObject({ status: 401, code });
    });

    it("answers a token lacking a route's scope with 403 insufficient_scope naming the scope", async () => {
      const response = await at(t.main, '/manage', { headers: bearer(await token()) });
      expect(response.status).toBe(403);
      const challenge = response.headers.get('www-authenticate') ?? '';
      expect(challenge).toMatch(new RegExp(`^Bearer realm="${REALM}", error="insufficient_scope"`));
      expect(challenge).toContain('scope="pay:manageIntegration"');
      expect(await problem(response)).toMatchObject({ status: 403, code: 'insufficient_scope' });
    });

    it('lets a token holding the route scope through requireScopes', async () => {
      const response = await at(t.main, '/manage', {
        headers: bearer(await token({ scope: 'pay:manageIntegration' })),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ scopes: ['pay:manageIntegration'] });
    });

    it('needs every scope when requireScopes gets several', async () => {
      const partial = await at(t.main, '/both', { headers: bearer(await token()) });
      expect(partial.status).toBe(403);
      expect(partial.headers.get('www-authenticate')).toContain('scope="pay:processPayments hub:subscribe"');
      const full = await at(t.main, '/both', {
        headers: bearer(await token({ scope: 'pay:processPayments hub:subscribe' })),
      });
      expect(full.status).toBe(200);
    });

    it('needs one of the scopes when requireScopes gets { anyOf }', async () => {
      const one = await at(t.main, '/either', { headers: bearer(await token({ scope: 'hub:subscribe' })) });
      expect(one.status).toBe(200);
      const none = await at(t.main, '/either', { headers: bearer(await token()) });
      expect(none.status).toBe(403);
      expect(await problem(none)).toMatchObject({ status: 403, code: 'insufficient_scope' });
    });

    it('answers a token with no known scope with 403 insufficient_scope (the default policy)', async () => {
      const response = await at(t.main, '/me', { headers: bearer(await token({ scope: 'other:thing' })) });
      expect(response.status).toBe(403);
      expect(await problem(response)).toMatchObject({ status: 403, code: 'insufficient_scope' });
    });

    it('answers 503 with Retry-After and no challenge when the JWKS cannot be reached', async () => {
      const response = await at(t.down, '/me', {
        headers: bearer(await token({ iss: 'https://down.test', sub: 'https://down.test' })),
      });
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
      expect(response.headers.get('www-authenticate')).toBeNull();
      expect(await problem(response)).toMatchObject({ status: 503, code: 'jwks_unavailable' });
    });

    it('puts the hint in the body with exposeHints: the JWKS URL that failed', async () => {
      const response = await at(t.down, '/me', {
        headers: bearer(await token({ iss: 'https://down.test', sub: 'https://down.test' })),
      });
      const body = await problem(response);
      expect(body.hint).toEqual(expect.stringContaining('is that the URL the JWKS is served at now?'));
      expect(response.headers.get('www-authenticate')).toBeNull();
    });

    it('keeps hints out of the body by default', async () => {
      const response = await at(t.main, '/me', { headers: bearer(await token({ aud: `${AUDIENCE}/` })) });
      const body = await problem(response);
      expect(body).toMatchObject({ status: 401, code: 'audience_mismatch' });
      expect(body).not.toHaveProperty('hint');
      expect(response.headers.get('www-authenticate')).not.toContain('trailing slash');
    });

    it('puts the hint in the body with exposeHints for a 401 too, never in the challenge', async () => {
      const response = await at(t.down, '/me', { headers: bearer(await token({ aud: `${AUDIENCE}/` })) });
      const body = await problem(response);
      expect(body).toMatchObject({ status: 401, code: 'unknown_issuer' });
      expect(body.hint).toEqual(expect.stringContaining('"https://issuer.test"'));
      expect(response.headers.get('www-authenticate')).not.toContain('issuer.test');
    });

    it("leaves an error thrown by the app's own handler to the app", async () => {
      const response = await at(t.main, '/boom', { headers: bearer(await token()) });
      expect(response.status).toBe(418);
      expect(response.headers.get('www-authenticate')).toBeNull();
      expect(await response.json()).toEqual({ app: 'boom' });
    });

    it("leaves an error thrown by the app's own handler to the app when failures are forwarded", async () => {
      const response = await at(t.flat, '/boom', { headers: bearer(await token()) });
      expect(response.status).toBe(418);
      expect(await response.json()).toEqual({ app: 'boom' });
    });

    it('answers two Authorization headers with 400 invalid_request', async () => {
      const valid = `Bearer ${await token()}`;
      const response = await getWithHeaderLines(`${t.main.url}/me`, [
        ['authorization', valid],
        ['authorization', valid],
      ]);
      expect(response.status).toBe(400);
      expect(response.headers['www-authenticate']).toMatch(new RegExp(`^Bearer realm="${REALM}", error="invalid_request"`));
      expect(JSON.parse(response.body)).toMatchObject({ status: 400, code: 'invalid_request' });
    });

    it('answers two Authorization values joined in one header with 400 invalid_request', async () => {
      const valid = `Bearer ${await token()}`;
      const response = await at(t.main, '/me', { headers: { authorization: `${valid}, ${valid}` } });
      expect(response.status).toBe(400);
      expect(await problem(response)).toMatchObject({ status: 400, code: 'invalid_request' });
    });

    it('lets a CORS preflight reach the app unverified, its auth null, when allowPreflight is set', async () => {
      const response = await at(t.main, '/me', { method: 'OPTIONS', headers: PREFLIGHT });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ auth: null });
    });

    it.each([
      ['no Origin', { 'access-control-request-method': 'POST' }],
      ['no Access-Control-Request-Method', { origin: 'https://shop.example' }],
      ['neither', {}],
    ])('verifies an OPTIONS request with %s (not a preflight)', async (_name, headers) => {
      const response = await at(t.main, '/me', { method: 'OPTIONS', headers });
      expect(response.status).toBe(401);
      expect(await problem(response)).toMatchObject({ status: 401, code: 'missing_token' });
    });

    it('lets an OPTIONS request with a valid token through with its AuthContext', async () => {
      const response = await at(t.main, '/me', { method: 'OPTIONS', headers: bearer(await token()) });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ tenant: 'ern:acme/tenants/t-1' });
    });

    it('verifies a CORS preflight when allowPreflight is not set', async () => {
      const response = await at(t.flat, '/me', { method: 'OPTIONS', headers: PREFLIGHT });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ forwarded: 'missing_token' });
    });

    it('lets a CORS preflight that allowPreflight let through pass requireScopes, its auth null', async () => {
      const response = await at(t.main, '/manage', { method: 'OPTIONS', headers: PREFLIGHT });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ auth: null });
    });

    it('verifies an OPTIONS request without the preflight headers before requireScopes: 401, never a pass', async () => {
      const response = await at(t.main, '/manage', { method: 'OPTIONS' });
      expect(response.status).toBe(401);
      expect(await problem(response)).toMatchObject({ status: 401, code: 'missing_token' });
    });

    it('checks the scopes of an OPTIONS request carrying a token: 403 insufficient_scope', async () => {
      const response = await at(t.main, '/manage', { method: 'OPTIONS', headers: bearer(await token()) });
      expect(response.status).toBe(403);
      expect(await problem(response)).toMatchObject({ status: 403, code: 'insufficient_scope' });
    });

    it('verifies a GET carrying the preflight headers before requireScopes: 401, never a pass', async () => {
      const response = await at(t.main, '/manage', { headers: PREFLIGHT });
      expect(response.status).toBe(401);
      expect(await problem(response)).toMatchObject({ status: 401, code: 'missing_token' });
    });

    it('fails requireScopes on a CORS preflight where no verification ran as a 500 configuration error', async () => {
      const response = await at(t.main, '/unguarded', { method: 'OPTIONS', headers: PREFLIGHT });
      expect(response.status).toBe(500);
      expect(await problem(response)).toMatchObject({ status: 500, code: 'configuration_error' });
    });

    it('fails requireScopes where no verification ran as a 500 configuration error, never a pass', async () => {
      const response = await at(t.main, '/unguarded', { headers: bearer(await token()) });
      expect(response.status).toBe(500);
      expect(await problem(response)).toMatchObject({ status: 500, code: 'configuration_error' });
    });

    it("accepts the verifier's own options in place of a verifier", async () => {
      const response = await at(t.flat, '/me', { headers: bearer(await token()) });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ tenant: 'ern:acme/tenants/t-1' });
    });

    it('builds one verifier from flat options, so later requests reuse its keys', async () => {
      await at(t.flat, '/me', { headers: bearer(await token({ jti: 'first' })) });
      const before = t.issuer.jwksRequests;
      const response = await at(t.flat, '/me', { headers: bearer(await token({ jti: 'second' })) });
      expect(response.status).toBe(200);
      expect(t.issuer.jwksRequests).toBe(before);
    });

    it("requires both the default requiredScopes and a route's scopes", async () => {
      const routeOnly = await at(t.flat, '/manage', {
        headers: bearer(await token({ scope: 'pay:manageIntegration' })),
      });
      expect(routeOnly.status).toBe(403);
      expect(await routeOnly.json()).toMatchObject({ forwarded: 'insufficient_scope' });
      const defaultOnly = await at(t.flat, '/manage', { headers: bearer(await token()) });
      expect(defaultOnly.status).toBe(403);
      const both = await at(t.flat, '/manage', {
        headers: bearer(await token({ scope: 'pay:processPayments pay:manageIntegration' })),
      });
      expect(both.status).toBe(200);
    });

    it("hands failures, as the AuthError itself, to the framework's error path when forwardErrors is set", async () => {
      const response = await at(t.flat, '/me', { headers: bearer('not-a-jwt') });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({ forwarded: 'malformed_token', isAuthError: true });
    });

    it.each([
      ['realm', { realm: 'a"b' }],
      ['allowPreflight', { allowPreflight: 'yes' }],
      ['forwardErrors', { forwardErrors: 1 }],
      ['requiredScopes', { requiredScopes: 'two scopes' }],
      ['verifier', { verifier: {} }],
      ['unknown option', { realms: 'x' }],
    ])('rejects a bad %s with a TypeError naming it when the middleware is made', async (name, options) => {
      await expect(async () => harness.create({ verifier: t.verifier, ...options })).rejects.toThrow(TypeError);
      await expect(async () => harness.create({ verifier: t.verifier, ...options })).rejects.toThrow(
        name === 'unknown option' ? '"realms"' : name,
      );
    });

    it("rejects a verifier given together with the verifier's options", async () => {
      await expect(async () => harness.create({ verifier: t.verifier, audience: AUDIENCE })).rejects.toThrow(/not both/);
    });

    it('rejects options without a verifier or its options', async () => {
      await expect(async () => harness.create({ realm: 'x' })).rejects.toThrow(/verifier is required/);
    });

    it('rejects requireScopes without a valid scope when it is called', () => {
      expect(() => harness.requireScopes()).toThrow(TypeError);
      expect(() => harness.requireScopes('two scopes')).toThrow(/requireScopes/);
      expect(() => harness.requireScopes({ anyOf: [] })).toThrow(/requireScopes\.anyOf/);
    });
  });
}
