import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { describe, expect, it } from 'vitest';
import defaultExport, { paygateAuth, requireScopes } from '../../../src/adapters/fastify/index.js';
import type { AdapterOptions } from '../../../src/http/adapter-options.js';
import { describeAdapterTable } from '../adapter-table.js';
import { useLoopbackIssuer } from '../loopback-issuer.js';
import { type RunningApp, appErrorResponse } from '../reference-app.js';
import { fastifyHarness, listen, me, referenceApp } from './fastify-app.js';

/** Fastify's own `semver`, with which `register()` checks a plugin's declared range. */
const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
const semver = fromFastify('semver') as { satisfies(version: string, range: string): boolean };
/** The last Fastify release whose `request.routeOptions` has no `config` (it came in 4.23.0). */
const WITHOUT_ROUTE_CONFIG = '4.22.2';

describeAdapterTable(fastifyHarness(Fastify));

describe('the Fastify adapter', () => {
  const fx = useLoopbackIssuer();

  async function started(build: (app: FastifyInstance) => unknown): Promise<RunningApp> {
    const app = Fastify();
    await app.register(paygateAuth, { verifier: fx.verifier, realm: 'test-realm' });
    await build(app);
    return listen(app);
  }

  it('declares only the Fastify releases whose request.routeOptions carries config, so that an older one fails at boot', () => {
    // Before 4.23, `config.scopes` was never read: a token lacking the route's scope got through.
    const declared = (paygateAuth as unknown as Record<symbol, { fastify: string }>)[Symbol.for('plugin-meta')]?.fastify ?? '*';
    expect(semver.satisfies(WITHOUT_ROUTE_CONFIG, declared)).toBe(false);
    expect(semver.satisfies('4.23.0', declared)).toBe(true);
    expect(semver.satisfies((fromFastify('./package.json') as { version: string }).version, declared)).toBe(true);
  });

  it('names the same Fastify releases in its peer dependency', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      peerDependencies: Record<string, string>;
    };
    expect(semver.satisfies(WITHOUT_ROUTE_CONFIG, manifest.peerDependencies.fastify as string)).toBe(false);
    expect(semver.satisfies('4.23.0', manifest.peerDependencies.fastify as string)).toBe(true);
  });

  it("lets a CORS preflight that allowPreflight let through pass a route's config.scopes, its auth null", async () => {
    const app = await listen(await referenceApp(Fastify, { verifier: fx.verifier, allowPreflight: true }));
    try {
      const preflight = { origin: 'https://shop.example', 'access-control-request-method': 'POST' };
      const response = await fetch(`${app.url}/either`, { method: 'OPTIONS', headers: preflight });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ auth: null });
      const plain = await fetch(`${app.url}/either`, { method: 'OPTIONS' });
      expect(plain.status).toBe(401);
    } finally {
      await app.close();
    }
  });

  it('is also the default export', () => {
    expect(defaultExport).toBe(paygateAuth);
  });

  it('is not encapsulated: request.auth reaches routes of sibling plugins', async () => {
    const app = await started((fastify) =>
      fastify.register(async (child) => {
        child.get('/child', me);
      }),
    );
    try {
      const response = await fetch(`${app.url}/child`, {
        headers: { authorization: `Bearer ${await fx.issuer.token()}` },
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ tenant: 'ern:acme/tenants/t-1' });
      expect((await fetch(`${app.url}/child`)).status).toBe(401);
    } finally {
      await app.close();
    }
  });

  it('enforces a route config.scopes given as an array, all of them', async () => {
    const app = await started((fastify) => {
      fastify.get('/scoped', { config: { scopes: ['pay:processPayments', 'hub:subscribe'] } }, me);
    });
    try {
      const partial = await fetch(`${app.url}/scoped`, {
        headers: { authorization: `Bearer ${await fx.issuer.token()}` },
      });
      expect(partial.status).toBe(403);
      expect(partial.headers.get('www-authenticate')).toContain('scope="pay:processPayments hub:subscribe"');
      expect(await partial.json()).toMatchObject({ code: 'insufficient_scope' });
      const full = await fetch(`${app.url}/scoped`, {
        headers: { authorization: `Bearer ${await fx.issuer.token({ scope: 'pay:processPayments hub:subscribe' })}` },
      });
      expect(full.status).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('lets a route with config.auth false through unverified, its request.auth null', async () => {
    const app = await started((fastify) => {
      fastify.get('/public', { config: { auth: false } }, me);
    });
    try {
      const response = await fetch(`${app.url}/public`);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ auth: null });
    } finally {
      await app.close();
    }
  });

  it('forwards requireScopes on a config.auth false route to the error handler when forwardErrors is set', async () => {
    const app = Fastify();
    app.setErrorHandler((error, _request, reply: FastifyReply) => {
      const { status, body } = appErrorResponse(error);
      return reply.code(status).send(body);
    });
    await app.register(paygateAuth, { verifier: fx.verifier, forwardErrors: true });
    app.get('/public', { config: { auth: false }, preHandler: requireScopes('pay:processPayments') }, me);
    const running = await listen(app);
    try {
      const response = await fetch(`${running.url}/public`);
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({ forwarded: 'configuration_error', isAuthError: false });
    } finally {
      await running.close();
    }
  });

  it('rejects a malformed route config.scopes when the route is declared', async () => {
    const app = Fastify();
    await app.register(paygateAuth, { verifier: fx.verifier });
    expect(() => app.get('/bad', { config: { scopes: 'two scopes' } }, me)).toThrow(/config\.scopes/);
    await app.close();
  });

  it('rejects a config.auth that is not a boolean when the route is declared, naming the value', async () => {
    const app = Fastify();
    await app.register(paygateAuth, { verifier: fx.verifier });
    expect(() => app.get('/bad', { config: { auth: 'no' as unknown as boolean } }, me)).toThrow(
      /^route GET \/bad: config\.auth must be a boolean, got "no"$/,
    );
    await app.close();
  });

  it('rejects config.scopes on a route with config.auth false when the route is declared', async () => {
    const app = Fastify();
    await app.register(paygateAuth, { verifier: fx.verifier });
    expect(() => app.get('/bad', { config: { auth: false, scopes: 'pay:processPayments' } }, me)).toThrow(/config\.auth false/);
    await app.close();
  });

  it("refuses a second registration inside the first one's scope, saying where scopes go instead", async () => {
    const app = Fastify();
    try {
      await app.register(paygateAuth, { verifier: fx.verifier });
      const nested = app.register(
        async (child) => {
          await child.register(paygateAuth, { verifier: fx.verifier, requiredScopes: 'hub:subscribe' });
        },
        { prefix: '/hub' },
      );
      await expect(nested).rejects.toThrow(/^paygateAuth: request\.auth is already declared here .*config\.scopes or requireScopes/);
      await expect(nested).rejects.toBeInstanceOf(TypeError);
    } finally {
      await app.close();
    }
  });

  it.each([
    [
      'prefix',
      '/api',
      /^paygateAuth: prefix is an option of Fastify's register\(\), which it ignores for this plugin \(not encapsulated\), got "\/api": .*inside a plugin of your own registered with \{ prefix \}/,
    ],
    ['logLevel', 'warn', /^paygateAuth: logLevel is an option of Fastify's register\(\), .*, got "warn": /],
  ])("refuses Fastify's register option %s, which does not apply to it, saying what to do instead", async (name, value, message) => {
    const app = Fastify();
    try {
      await expect(app.register(paygateAuth, { verifier: fx.verifier, [name]: value } as AdapterOptions)).rejects.toThrow(message);
    } finally {
      await app.close();
    }
  });

  it('takes one registration in each of two sibling plugins', async () => {
    const app = Fastify();
    for (const prefix of ['/a', '/b']) {
      void app.register(
        async (child) => {
          await child.register(paygateAuth, { verifier: fx.verifier });
          child.get('/me', me);
        },
        { prefix },
      );
    }
    const running = await listen(app);
    try {
      const headers = { authorization: `Bearer ${await fx.issuer.token()}` };
      expect((await fetch(`${running.url}/a/me`, { headers })).status).toBe(200);
      expect((await fetch(`${running.url}/b/me`)).status).toBe(401);
    } finally {
      await running.close();
    }
  });

  it('leaves request.auth undefined, not null, in a sibling plugin the plugin is not registered in', async () => {
    const app = Fastify();
    void app.register(async (child) => {
      await child.register(paygateAuth, { verifier: fx.verifier });
    });
    void app.register(async (sibling) => {
      sibling.get('/outside', async (request) => ({ undefined: request.auth === undefined, null: request.auth === null }));
    });
    try {
      const response = await app.inject({ url: '/outside' });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ undefined: true, null: false });
    } finally {
      await app.close();
    }
  });

  it('verifies a route declared while the plugin is still loading (its register not awaited)', async () => {
    const app = Fastify();
    void app.register(paygateAuth, { verifier: fx.verifier });
    app.get('/early', me);
    const running = await listen(app);
    try {
      expect((await fetch(`${running.url}/early`)).status).toBe(401);
      const known = await fetch(`${running.url}/early`, {
        headers: { authorization: `Bearer ${await fx.issuer.token()}` },
      });
      expect(known.status).toBe(200);
    } finally {
      await running.close();
    }
  });

  it('verifies a route registered before the plugin, and enforces its config.scopes', async () => {
    const app = Fastify();
    app.get('/before', { config: { scopes: 'hub:subscribe' } }, me);
    await app.register(paygateAuth, { verifier: fx.verifier });
    const running = await listen(app);
    try {
      expect((await fetch(`${running.url}/before`)).status).toBe(401);
      const lacking = await fetch(`${running.url}/before`, { headers: { authorization: `Bearer ${await fx.issuer.token()}` } });
      expect(lacking.status).toBe(403);
      const holding = await fetch(`${running.url}/before`, {
        headers: { authorization: `Bearer ${await fx.issuer.token({ scope: 'pay:processPayments hub:subscribe' })}` },
      });
      expect(holding.status).toBe(200);
    } finally {
      await running.close();
    }
  });

  it('answers a route declared before the plugin loaded whose config.scopes is malformed with 500 configuration_error, as problem+json', async () => {
    const app = Fastify();
    void app.register(paygateAuth, { verifier: fx.verifier });
    app.get('/bad', { config: { scopes: 'bad scope' } }, me);
    try {
      const response = await app.inject({ url: '/bad', headers: { authorization: `Bearer ${await fx.issuer.token()}` } });
      expect(response.statusCode).toBe(500);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.json().code).toBe('configuration_error');
    } finally {
      await app.close();
    }
  });

  it('forwards the ConfigurationError of such a route, naming the route and the value found', async () => {
    const app = Fastify();
    let forwarded: { code?: unknown; message?: unknown } = {};
    app.setErrorHandler(async (error: { code?: unknown; message?: unknown }, _request, reply: FastifyReply) => {
      forwarded = error;
      return reply.code(599).send();
    });
    void app.register(paygateAuth, { verifier: fx.verifier, forwardErrors: true });
    app.get('/bad', { config: { scopes: 'bad scope' } }, me);
    try {
      const response = await app.inject({ url: '/bad', headers: { authorization: `Bearer ${await fx.issuer.token()}` } });
      expect(response.statusCode).toBe(599);
      expect(forwarded.code).toBe('configuration_error');
      expect(forwarded.message).toContain('route GET /bad: config.scopes[0]');
      expect(forwarded.message).toContain('got "bad scope"');
      expect(forwarded.message).toContain('await app.register(paygateAuth');
    } finally {
      await app.close();
    }
  });

  it('answers an unknown route with 401 before 404, so that routes are not probed unauthenticated', async () => {
    const app = await started(() => undefined);
    try {
      expect((await fetch(`${app.url}/nowhere`)).status).toBe(401);
      const known = await fetch(`${app.url}/nowhere`, {
        headers: { authorization: `Bearer ${await fx.issuer.token()}` },
      });
      expect(known.status).toBe(404);
    } finally {
      await app.close();
    }
  });
});
