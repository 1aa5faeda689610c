import { type Context, Hono, type Next } from 'hono';
import { describe, expect, it } from 'vitest';
import { type RequireScopesArguments, requireScopes, withAuth } from '../../../src/adapters/fetch/index.js';
import type { AuthContext } from '../../../src/core/auth-context.js';
import { AuthError } from '../../../src/core/errors.js';
import type { AdapterOptions } from '../../../src/http/adapter-options.js';
import { describeAdapterTable } from '../adapter-table.js';
import { listen } from '../hono/hono-app.js';
import { useLoopbackIssuer } from '../loopback-issuer.js';
import { type AdapterHarness, AppError, ROUTE_SCOPES, appErrorResponse, describeAuth } from '../reference-app.js';

type Env = { Variables: { auth: AuthContext | null } };

/** Hono middleware made of `withAuth`: the verified auth goes to `c.var.auth`. */
function honoAuth(options: AdapterOptions) {
  const gate = withAuth(async (_request, auth, c: Context<Env>, next: Next) => {
    c.set('auth', auth);
    await next();
    return c.res;
  }, options);
  return (c: Context<Env>, next: Next) => gate(c.req.raw, c, next);
}

/** A Hono route guarded by `requireScopes(...)`. */
function scoped(...scopes: RequireScopesArguments) {
  const handler = requireScopes(...scopes)((_request, auth, c: Context<Env>) => c.json(describeAuth(auth)));
  return (c: Context<Env>) => handler(c.req.raw, c.var.auth, c);
}

function referenceApp(options: AdapterOptions): Hono<Env> {
  const app = new Hono<Env>();
  const me = (c: Context<Env>) => c.json(describeAuth(c.var.auth));
  app.onError((error, c) => {
    const { status, body } = appErrorResponse(error);
    return c.json(body, status as 418);
  });
  const unguarded = requireScopes(...ROUTE_SCOPES.unguarded)((_request, auth) => Response.json(describeAuth(auth)));
  app.get('/unguarded', (c) => unguarded(c.req.raw, null));
  app.options('/unguarded', (c) => unguarded(c.req.raw, null));
  app.use(honoAuth(options));
  app.get('/me', me);
  app.options('/me', me);
  app.get('/manage', scoped(...ROUTE_SCOPES.manage));
  app.options('/manage', scoped(...ROUTE_SCOPES.manage));
  app.get('/both', scoped(...ROUTE_SCOPES.both));
  app.get('/either', scoped(...ROUTE_SCOPES.either));
  app.get('/boom', () => {
    throw new AppError('boom');
  });
  return app;
}

const harness: AdapterHarness = {
  name: 'fetch (Hono)',
  start: async (options) => listen(referenceApp(options)),
  create: (options) => withAuth(() => new Response(), options as AdapterOptions),
  requireScopes: (...scopes) => requireScopes(...(scopes as [string])),
};

describeAdapterTable(harness);

describe('the fetch adapter', () => {
  const fx = useLoopbackIssuer();

  it('hands a plain Request, unchanged, and its AuthContext to the handler under Node', async () => {
    const request = new Request('http://127.0.0.1/payments', {
      method: 'POST',
      headers: { authorization: `Bearer ${await fx.issuer.token()}` },
      body: '{"amount":"1.00"}',
    });
    let seen: { request: Request; auth: AuthContext } | undefined;
    const handler = withAuth(
      (received, auth) => {
        seen = { request: received, auth };
        return new Response(null, { status: 204 });
      },
      { verifier: fx.verifier },
    );
    const response = await handler(request);
    expect(response.status).toBe(204);
    expect(seen?.request).toBe(request);
    expect(seen?.auth.tenant.ern).toBe('ern:acme/tenants/t-1');
    expect(request.bodyUsed).toBe(false);
    expect(await request.text()).toBe('{"amount":"1.00"}');
  });

  it("passes the runtime's extra arguments on, as Workers' env and ctx", async () => {
    const env = { PAYMENTS: 'binding' };
    const ctx = { waitUntil: (_promise: Promise<unknown>) => undefined };
    const handler = withAuth(
      (_request, _auth, receivedEnv: typeof env, receivedCtx: typeof ctx) =>
        Response.json({ same: receivedEnv === env && receivedCtx === ctx }),
      { verifier: fx.verifier },
    );
    const response = await handler(
      new Request('http://127.0.0.1/', { headers: { authorization: `Bearer ${await fx.issuer.token()}` } }),
      env,
      ctx,
    );
    expect(await response.json()).toEqual({ same: true });
  });

  it('answers a failure with a Web Response carrying the problem+json body and the challenge', async () => {
    const handler = withAuth(() => new Response('reached'), { verifier: fx.verifier });
    const response = await handler(new Request('http://127.0.0.1/'));
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="paygate"');
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await response.json()).toMatchObject({ status: 401, code: 'missing_token' });
  });

  it('refuses a handler that is not a function, naming the value found', () => {
    expect(() => withAuth({ verifier: fx.verifier } as never, { verifier: fx.verifier })).toThrow(
      /^withAuth: handler must be a function, got object$/,
    );
  });

  it('says the arguments are swapped when given the options first and the handler second', () => {
    expect(() => withAuth({ verifier: fx.verifier } as never, (() => new Response()) as never)).toThrow(
      /^withAuth: handler must be a function, got object: the arguments are swapped, write withAuth\(handler, \{ verifier \}\)$/,
    );
  });

  it('rejects with the AuthError itself when forwardErrors is set', async () => {
    const handler = withAuth(() => new Response('reached'), { verifier: fx.verifier, forwardErrors: true });
    const rejection = await handler(new Request('http://127.0.0.1/')).catch((error: unknown) => error);
    expect(rejection).toBeInstanceOf(AuthError);
    expect(rejection).toMatchObject({ code: 'missing_token', status: 401 });
  });

  it("rejects with the handler's own error, untouched", async () => {
    const own = new AppError('boom');
    const handler = withAuth(
      () => {
        throw own;
      },
      { verifier: fx.verifier },
    );
    await expect(
      handler(new Request('http://127.0.0.1/', { headers: { authorization: `Bearer ${await fx.issuer.token()}` } })),
    ).rejects.toBe(own);
  });

  it('serves a Hono app mounted behind withAuth, its routes reading auth from the environment', async () => {
    const app = new Hono<{ Bindings: { auth: AuthContext } }>().get('/me', (c) => c.json({ tenant: c.env.auth.tenant.ern }));
    const fetchHandler = withAuth((request, auth) => app.fetch(request, { auth }), { verifier: fx.verifier });
    const ok = await fetchHandler(new Request('http://127.0.0.1/me', { headers: { authorization: `Bearer ${await fx.issuer.token()}` } }));
    expect(await ok.json()).toEqual({ tenant: 'ern:acme/tenants/t-1' });
    expect((await fetchHandler(new Request('http://127.0.0.1/me'))).status).toBe(401);
  });

  it('rejects a handler that is not a function when it is wrapped', () => {
    expect(() => withAuth('nope' as never, { verifier: fx.verifier })).toThrow(/handler/);
  });
});
