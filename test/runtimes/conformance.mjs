/**
 * The runtime conformance suite: one list of cases against the built package's public entries
 * (`paygate-auth`, `/fetch`, `/hono`, `/testing`, `/issuer`), run under Node by vitest
 * (`conformance.test.ts`), under Deno and Bun by `main.mjs`, and under workerd by `worker.mjs`.
 * Plain JavaScript with Web APIs only (no `node:` module, no test framework), so that every
 * runtime loads it as it stands. Every JWKS is served from this process, by a `fetch` handed to
 * the verifier: workerd opens no loopback server.
 */
import { AUTH_ERROR_CODES, AuthError, IssuerRegistry, createVerifier, toErrorResponse } from 'paygate-auth';
import { Hono } from 'hono';
import { requireScopes, withAuth } from 'paygate-auth/fetch';
import { auth as honoAuth, requireScopes as honoScopes } from 'paygate-auth/hono';
import { InMemoryKeyStore, IssuerError, createIssuer, jwksFetchHandler } from 'paygate-auth/issuer';
import { createTestIssuer, createTestVerifier } from 'paygate-auth/testing';

const AUDIENCE = 'https://payments.test';
const TENANT = 'ern:acme/tenants/t-1';
const HOUR = 3600_000;

/** Throws unless `actual` is `expected` (`Object.is`). */
function equal(actual, expected, what) {
  if (!Object.is(actual, expected)) throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

/** Throws unless `condition` holds. */
function check(condition, what) {
  if (!condition) throw new Error(what);
}

/** The rejection of `promise`, or a failure when it fulfils. */
async function rejection(promise, what) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error(`${what}: expected a rejection, got a fulfilment`);
}

/**
 * A `fetch` that answers the given URLs from this process, counting requests, and refuses any
 * other URL (nothing leaves the process).
 */
function inProcessFetch(routes) {
  const fetch = async (input) => {
    const route = routes.get(input);
    if (route === undefined) throw new TypeError(`conformance: no in-process route for ${input}`);
    fetch.requests += 1;
    return route(new Request(input));
  };
  fetch.requests = 0;
  return fetch;
}

/** One test issuer, its JWKS served in-process, and a WebCrypto verifier trusting it; built once. */
let shared;
function context() {
  shared ??= (async () => {
    const issuer = await createTestIssuer({ product: 'acme', audience: AUDIENCE, tenant: TENANT });
    const fetch = inProcessFetch(new Map([[issuer.jwksUri, () => Response.json(issuer.jwks)]]));
    const verifierFor = (options = {}) =>
      createVerifier({ registry: [issuer.entry], audience: AUDIENCE, fetch, crypto: 'webcrypto', ...options });
    return { issuer, fetch, verifierFor, verifier: verifierFor() };
  })();
  return shared;
}

/** Swaps in the signature of another token: a valid signature, over other bytes. */
async function tampered(issuer) {
  const [header, payload] = (await issuer.token()).split('.');
  const other = (await issuer.token({ scope: 'hub:subscribe' })).split('.')[2];
  return `${header}.${payload}.${other}`;
}

const now = () => Math.floor(Date.now() / 1000);

/**
 * Each rejection: how to provoke it (a verifier, and a token or an `Authorization` header: `null`
 * for none), and the
 * code the verifier and `withAuth` must answer with. Status and `error` come from the package's own
 * table, `AUTH_ERROR_CODES`; a case below checks that every code in it has a row.
 */
const REJECTIONS = [
  { code: 'missing_token', request: async () => ({ authorization: null }) },
  { code: 'invalid_request', request: async () => ({ authorization: 'Bearer' }) },
  {
    code: 'token_too_large',
    request: async ({ issuer }) => ({ token: await issuer.token({ padding: 'x'.repeat(9000) }) }),
  },
  { code: 'malformed_token', request: async () => ({ token: 'not.a-token' }) },
  {
    code: 'unsupported_algorithm',
    request: async ({ issuer }) => ({ token: await issuer.token({}, { alg: 'HS256' }) }),
  },
  { code: 'missing_kid', request: async ({ issuer }) => ({ token: await issuer.token({}, { kid: undefined }) }) },
  { code: 'invalid_typ', request: async ({ issuer }) => ({ token: await issuer.token({}, { typ: 'JOSE' }) }) },
  { code: 'unsupported_crit', request: async ({ issuer }) => ({ token: await issuer.token({}, { crit: ['exp'] }) }) },
  {
    code: 'unknown_issuer',
    request: async ({ issuer }) => ({
      token: await issuer.token({ iss: 'https://other.test', sub: 'https://other.test' }),
    }),
  },
  {
    code: 'issuer_suspended',
    request: async ({ issuer, verifierFor }) => {
      const verifier = verifierFor();
      await verifier.suspendIssuer(issuer.issuer);
      return { verifier, token: await issuer.token() };
    },
  },
  {
    code: 'key_revoked',
    request: async ({ issuer, verifierFor }) => {
      const verifier = verifierFor();
      await verifier.revokeKey(issuer.issuer, issuer.signingKey.kid);
      return { verifier, token: await issuer.token() };
    },
  },
  { code: 'unknown_key', request: async ({ issuer }) => ({ token: await issuer.token({}, { kid: 'no-such-key' }) }) },
  { code: 'invalid_signature', request: async ({ issuer }) => ({ token: await tampered(issuer) }) },
  {
    code: 'invalid_claim',
    claim: 'tenant_ern',
    request: async ({ issuer }) => ({ token: await issuer.token({ tenant_ern: 42 }) }),
  },
  {
    code: 'token_expired',
    request: async ({ issuer }) => ({ token: await issuer.token({ iat: now() - 900, expt: now() - 600 }) }),
  },
  {
    code: 'token_not_yet_valid',
    request: async ({ issuer }) => ({
      token: await issuer.token({ iat: now() + 600, nbf: now() + 600, expt: now() + 900 }),
    }),
  },
  {
    code: 'token_lifetime_exceeded',
    request: async ({ issuer }) => ({ token: await issuer.token({ iat: now(), expt: now() + 10 * 86_400 }) }),
  },
  {
    code: 'audience_mismatch',
    request: async ({ issuer }) => ({ token: await issuer.token({ aud: 'https://other.test' }) }),
  },
  {
    code: 'subject_mismatch',
    request: async ({ issuer }) => ({ token: await issuer.token({ sub: 'https://someone.test' }) }),
  },
  {
    code: 'tenant_not_allowed',
    request: async ({ issuer }) => ({ token: await issuer.token({ tenant_ern: 'ern:other/tenants/t-1' }) }),
  },
  {
    code: 'jwks_unavailable',
    request: async ({ issuer }) => {
      const down = async () => new Response('unavailable', { status: 500 });
      const verifier = createVerifier({
        registry: [issuer.entry],
        audience: AUDIENCE,
        fetch: down,
        crypto: 'webcrypto',
      });
      return { verifier, token: await issuer.token() };
    },
  },
  {
    code: 'insufficient_scope',
    requiredScopes: 'hub:subscribe',
    request: async ({ issuer }) => ({ token: await issuer.token({ scope: 'pay:processPayments' }) }),
  },
];

/** Calls a `withAuth` handler with the given `Authorization` header (or, with `null`, none). */
function call(handler, authorization) {
  const headers = authorization === null ? {} : { authorization };
  return handler(new Request('https://api.test/payment-links/', { method: 'POST', headers }));
}

/** Checks a failure answer: status, challenge, and the problem body of `code`. */
async function expectProblem(response, code, claim) {
  const { status, error } = AUTH_ERROR_CODES[code];
  equal(response.status, status, `${code}: status`);
  equal(response.headers.get('content-type'), 'application/problem+json', `${code}: content-type`);
  const challenge = response.headers.get('www-authenticate');
  if (status === 503) {
    check(/^\d+$/.test(response.headers.get('retry-after') ?? ''), `${code}: a Retry-After in seconds`);
  } else {
    check(challenge?.startsWith('Bearer realm="paygate"'), `${code}: a Bearer challenge`);
    if (error !== null) check(challenge.includes(`error="${error}"`), `${code}: the challenge names error="${error}"`);
  }
  const body = await response.json();
  equal(body.code, code, `${code}: body.code`);
  equal(body.status, status, `${code}: body.status`);
  equal(typeof body.type, 'string', `${code}: body.type`);
  equal(typeof body.title, 'string', `${code}: body.title`);
  if (claim !== undefined) equal(body.claim, claim, `${code}: body.claim`);
  return body;
}

function rejectionCase(row) {
  return {
    name: `withAuth answers ${row.code} with status ${AUTH_ERROR_CODES[row.code].status} and its problem body`,
    async run() {
      const ctx = await context();
      const { verifier = ctx.verifier, token, authorization = `Bearer ${token}` } = await row.request(ctx);
      const options = { verifier, ...(row.requiredScopes === undefined ? {} : { requiredScopes: row.requiredScopes }) };
      const handler = withAuth(() => new Response('reached'), options);
      await expectProblem(await call(handler, authorization), row.code, row.claim);
      if (token === undefined || row.requiredScopes !== undefined) return;
      // The verifier itself refuses it with the same code, as an AuthError carrying the status.
      const error = await rejection(verifier.verify(token), row.code);
      check(error instanceof AuthError, `${row.code}: verify() rejects with an AuthError`);
      equal(error.code, row.code, `${row.code}: error.code`);
      equal(error.status, AUTH_ERROR_CODES[row.code].status, `${row.code}: error.status`);
      equal(toErrorResponse(error).body.code, row.code, `${row.code}: toErrorResponse(error).body.code`);
    },
  };
}

/** A fresh issuer kit on an in-memory store, its clock `clock.now` (ms), its JWKS handler, and a verifier fetching it. */
async function issuerKit() {
  const clock = { now: Date.UTC(2026, 0, 1) };
  const issuer = await createIssuer({
    issuer: 'https://auth.acme.test',
    audience: AUDIENCE,
    product: 'acme',
    keyStore: new InMemoryKeyStore(),
    now: () => clock.now,
  });
  const handler = jwksFetchHandler(issuer);
  const jwksUri = 'https://auth.acme.test/.well-known/jwks.json';
  const fetch = inProcessFetch(new Map([[jwksUri, handler]]));
  const verifier = createVerifier({
    registry: [{ issuer: 'https://auth.acme.test', jwksUri, products: ['acme'] }],
    audience: AUDIENCE,
    fetch,
    crypto: 'webcrypto',
    now: () => clock.now,
  });
  return { clock, issuer, handler, verifier };
}

/** @type {readonly { readonly name: string, readonly run: () => Promise<void> }[]} */
export const cases = [
  {
    name: 'the WebCrypto verifier accepts a test-kit token and reads its tenant and scopes',
    async run() {
      const { issuer, verifier } = await context();
      const auth = await verifier.verify(await issuer.token({ scope: 'pay:processPayments hub:subscribe' }));
      equal(auth.issuer, issuer.issuer, 'auth.issuer');
      equal(auth.tenant.id, 't-1', 'auth.tenant.id');
      equal(auth.tenant.product, 'acme', 'auth.tenant.product');
      check(auth.scopes.has('hub:subscribe') && auth.scopes.has('pay:processPayments'), 'auth.scopes holds both scopes');
    },
  },
  {
    name: "the runtime's default engine accepts the same token",
    async run() {
      const { issuer, fetch } = await context();
      const verifier = createVerifier({ registry: [issuer.entry], audience: AUDIENCE, fetch });
      equal((await verifier.verify(await issuer.token())).tenant.id, 't-1', 'auth.tenant.id');
    },
  },
  {
    name: 'the JWKS served in-process is fetched once for several tokens of a known key',
    async run() {
      const { issuer, fetch } = await context();
      const verifier = createVerifier({ registry: [issuer.entry], audience: AUDIENCE, fetch, crypto: 'webcrypto' });
      const before = fetch.requests;
      for (const scope of ['pay:processPayments', 'hub:subscribe', 'pay:chargeToken']) await verifier.verify(await issuer.token({ scope }));
      equal(fetch.requests - before, 1, 'JWKS requests');
    },
  },
  {
    name: 'every rejection code of AUTH_ERROR_CODES has a case in this suite',
    async run() {
      const covered = new Set(REJECTIONS.map((row) => row.code));
      const missing = Object.keys(AUTH_ERROR_CODES).filter((code) => !covered.has(code));
      equal(missing.join(', '), '', 'codes without a case');
    },
  },
  ...REJECTIONS.map(rejectionCase),
  {
    name: 'withAuth passes the verified caller and the runtime arguments to the handler (200)',
    async run() {
      const { issuer, verifier } = await context();
      const handler = withAuth((request, auth, env) => Response.json({ tenant: auth.tenant.id, env, method: request.method }), {
        verifier,
        requiredScopes: 'pay:processPayments',
      });
      const request = new Request('https://api.test/payment-links/', {
        method: 'POST',
        headers: { authorization: `Bearer ${await issuer.token()}` },
      });
      const response = await handler(request, 'env-value');
      equal(response.status, 200, 'status');
      const body = await response.json();
      equal(body.tenant, 't-1', 'tenant');
      equal(body.env, 'env-value', 'the extra argument');
      equal(body.method, 'POST', 'the request passed on');
    },
  },
  {
    name: "requireScopes refuses a token that lacks the route's scope with 403 and a scope challenge",
    async run() {
      const { issuer, verifier } = await context();
      const handler = withAuth(
        requireScopes('pay:manageIntegration')(() => new Response('reached')),
        { verifier },
      );
      const response = await call(handler, `Bearer ${await issuer.token({ scope: 'pay:processPayments' })}`);
      check((response.headers.get('www-authenticate') ?? '').includes('scope="pay:manageIntegration"'), 'the challenge names the scope');
      await expectProblem(response, 'insufficient_scope');
      const granted = await call(handler, `Bearer ${await issuer.token({ scope: 'pay:manageIntegration' })}`);
      equal(granted.status, 200, 'status with the scope');
      equal(await granted.text(), 'reached', 'the route ran');
    },
  },
  {
    name: "the Hono middleware sets c.get('auth'), guards a route's scopes and answers a missing token with 401",
    async run() {
      const { issuer, verifier } = await context();
      const app = new Hono();
      app.use(honoAuth({ verifier }));
      app.get('/info', (c) => c.json({ tenant: c.get('auth').tenant.id }));
      app.post('/hub', honoScopes('hub:subscribe'), (c) => c.text('reached'));
      const token = await issuer.token({ scope: 'pay:processPayments' });
      const info = await app.request('/info', { headers: { authorization: `Bearer ${token}` } });
      equal(info.status, 200, 'status with a valid token');
      equal((await info.json()).tenant, 't-1', 'tenant');
      const again = await app.request('/info', { headers: { authorization: `Bearer ${token}` } });
      equal(again.status, 200, 'status with the same token again');
      await expectProblem(await app.request('/info'), 'missing_token');
      const hub = await app.request('/hub', { method: 'POST', headers: { authorization: `Bearer ${token}` } });
      check((hub.headers.get('www-authenticate') ?? '').includes('scope="hub:subscribe"'), 'the challenge names the scope');
      await expectProblem(hub, 'insufficient_scope');
    },
  },
  {
    name: "the test kit's verifier follows a rotation: the new key's tokens pass, the retired key's fail",
    async run() {
      const issuer = await createTestIssuer({ product: 'acme', audience: AUDIENCE, issuer: 'https://rotating.test' });
      const fetch = inProcessFetch(new Map([[issuer.jwksUri, () => Response.json(issuer.jwks)]]));
      const verifier = createTestVerifier(issuer, { fetch, crypto: 'webcrypto' });
      const old = await issuer.token();
      await verifier.verify(old);
      const key = await issuer.rotate({ retire: true });
      const fresh = await issuer.token();
      equal((await verifier.verify(fresh)).tenant.id, 't-1', 'a token of the new key');
      equal(JSON.parse(atob(fresh.split('.')[0].replace(/-/g, '+').replace(/_/g, '/'))).kid, key.kid, 'the new kid');
      equal((await rejection(verifier.verify(old), 'old key')).code, 'unknown_key', 'a token of the retired key');
    },
  },
  {
    name: 'the registry refuses a JWKS at a cloud metadata address or an IPv4-mapped loopback address, naming the rule',
    async run() {
      const { issuer } = await context();
      for (const [jwksUri, rule] of [
        ['https://169.254.169.254/latest/meta-data/', 'metadata'],
        ['https://[::ffff:127.0.0.1]/jwks.json', 'ipv4_mapped'],
        ['https://metadata.google.internal/jwks.json', 'metadata'],
      ]) {
        let error;
        try {
          new IssuerRegistry([{ ...issuer.entry, jwksUri }]);
        } catch (caught) {
          error = caught;
        }
        check(error instanceof TypeError, `${jwksUri}: a TypeError`);
        equal(error.code, 'jwks_address_refused', `${jwksUri}: error.code`);
        equal(error.rule, rule, `${jwksUri}: error.rule`);
      }
    },
  },
  {
    name: 'a download from a private address the verifier does not allow makes no request, whatever the fetch',
    async run() {
      const { issuer } = await context();
      const jwksUri = 'https://10.0.0.7/jwks.json';
      const fetch = inProcessFetch(new Map([[jwksUri, () => Response.json(issuer.jwks)]]));
      const registry = new IssuerRegistry([{ ...issuer.entry, jwksUri }], { jwksAllowedHosts: ['10.0.0.7'] });
      const refused = await createVerifier({ registry, audience: AUDIENCE, fetch, jwksAllowedHosts: [] }).warmUp();
      equal(refused[0].ok, false, 'refused: report.ok');
      check(refused[0].error.includes('rule private'), `refused: the report names the rule (${refused[0].error})`);
      equal(fetch.requests, 0, 'no request');
      const allowed = await createVerifier({ registry, audience: AUDIENCE, fetch, crypto: 'webcrypto' }).warmUp();
      equal(allowed[0].ok, true, "allowed by the registry's jwksAllowedHosts: report.ok");
      equal(fetch.requests, 1, 'one request once allowed');
    },
  },
  {
    name: "the test kit's claims have defaults and take overrides and removals",
    async run() {
      const issuer = (await context()).issuer;
      const claims = issuer.claims({ scope: 'hub:subscribe', tenant_name: undefined });
      equal(claims.scope, 'hub:subscribe', 'an override');
      check(!('tenant_name' in claims), 'a removal');
      equal(claims.tenant_ern, TENANT, 'a default');
      equal(claims.expt - claims.iat, 300, 'the default lifetime');
    },
  },
  {
    name: "the issuer kit's first key signs only after its publication lead (key_not_ready)",
    async run() {
      const { clock, issuer } = await issuerKit();
      const error = await rejection(issuer.sign({ tenant: TENANT, scopes: ['pay:processPayments'] }), 'sign');
      check(error instanceof IssuerError, 'sign() rejects with an IssuerError');
      equal(error.code, 'key_not_ready', 'error.code');
      clock.now += HOUR;
      check(typeof (await issuer.sign({ tenant: TENANT, scopes: ['pay:processPayments'] })) === 'string', 'a token an hour later');
    },
  },
  {
    name: "the issuer kit's tokens pass a verifier that fetches its JWKS handler",
    async run() {
      const { clock, issuer, verifier } = await issuerKit();
      clock.now += HOUR;
      const token = await issuer.sign({ tenant: TENANT, scopes: ['hub:subscribe'], user: '//users/u-7' });
      const auth = await verifier.verify(token);
      equal(auth.tenant.id, 't-1', 'auth.tenant.id');
      check(auth.scopes.has('hub:subscribe'), 'auth.scopes');
    },
  },
  {
    name: 'the issuer kit refuses a scope the gateway does not know, naming the field',
    async run() {
      const { clock, issuer } = await issuerKit();
      clock.now += HOUR;
      const error = await rejection(issuer.sign({ tenant: TENANT, scopes: ['pay:everything'] }), 'sign');
      equal(error.code, 'invalid_scope', 'error.code');
      equal(error.field, 'scopes', 'error.field');
    },
  },
  {
    name: "the issuer kit's JWKS handler answers GET with the published keys and refuses POST with 405",
    async run() {
      const { issuer, handler } = await issuerKit();
      const response = await handler(new Request('https://auth.acme.test/.well-known/jwks.json'));
      equal(response.status, 200, 'status');
      equal(response.headers.get('content-type'), 'application/jwk-set+json', 'content-type');
      equal(response.headers.get('cache-control'), 'public, max-age=600', 'cache-control');
      const { keys } = await response.json();
      equal(keys.length, 2, 'keys published: the first key and its standby');
      const kids = issuer.keys().map((key) => key.kid);
      equal(keys.map((key) => key.kid).join(), kids.join(), 'the published kids');
      equal(Object.keys(keys[0]).sort().join(','), 'alg,e,kid,kty,n,use', 'JWK members');
      const post = await handler(new Request('https://auth.acme.test/.well-known/jwks.json', { method: 'POST' }));
      equal(post.status, 405, 'POST status');
      check((post.headers.get('allow') ?? '').includes('GET'), 'Allow names GET');
    },
  },
];

/**
 * Runs `list` one case at a time, printing a line per failure and, last, `<label>: N passed, M
 * failed` alone on its line. Resolves the counts.
 */
export async function runCases(list, label, print = console.log) {
  let passed = 0;
  let failed = 0;
  for (const { name, run } of list) {
    try {
      await run();
      passed += 1;
    } catch (error) {
      failed += 1;
      print(`not ok - ${name}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    }
  }
  print(`${label}: ${passed} passed, ${failed} failed`);
  return { passed, failed };
}
