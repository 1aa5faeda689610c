import Router from '@koa/router';
import Koa, { type Context } from 'koa';
import { describe, expect, it } from 'vitest';
import { auth, requireScopes } from '../../../src/adapters/koa/index.js';
import { AuthError } from '../../../src/core/errors.js';
import type { AdapterOptions } from '../../../src/http/adapter-options.js';
import { verifyUntilCached } from '../../support/result-cache.js';
import { describeAdapterTable } from '../adapter-table.js';
import { useLoopbackIssuer } from '../loopback-issuer.js';
import { type AdapterHarness, AppError, ROUTE_SCOPES, appErrorResponse, serveOnLoopback, describeAuth } from '../reference-app.js';

function referenceApp(options: AdapterOptions): Koa {
  const app = new Koa();
  const me = (ctx: Context) => {
    ctx.body = describeAuth(ctx.state.auth);
  };
  const unguarded = new Router()
    .get('/unguarded', requireScopes(...ROUTE_SCOPES.unguarded), me)
    .options('/unguarded', requireScopes(...ROUTE_SCOPES.unguarded), me);
  const guarded = new Router()
    .get('/me', me)
    .options('/me', me)
    .get('/manage', requireScopes(...ROUTE_SCOPES.manage), me)
    .options('/manage', requireScopes(...ROUTE_SCOPES.manage), me)
    .get('/both', requireScopes(...ROUTE_SCOPES.both), me)
    .get('/either', requireScopes(...ROUTE_SCOPES.either), me)
    .get('/boom', () => {
      throw new AppError('boom');
    });
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const { status, body } = appErrorResponse(error);
      ctx.status = status;
      ctx.body = body;
    }
  });
  app.use(unguarded.routes());
  app.use(auth(options));
  app.use(guarded.routes());
  return app;
}

const harness: AdapterHarness = {
  name: 'Koa',
  start: (options) => serveOnLoopback(referenceApp(options).callback()),
  create: (options) => auth(options as AdapterOptions),
  requireScopes: (...scopes) => requireScopes(...(scopes as [string])),
};

describeAdapterTable(harness);

describe('the Koa adapter', () => {
  const fx = useLoopbackIssuer();

  it('calls next() for a cached token before the middleware returns, with ctx.state.auth set', async () => {
    const token = await fx.issuer.token();
    const cached = await verifyUntilCached(fx.verifier, token);
    const middleware = auth({ verifier: fx.verifier });
    const ctx = { req: { method: 'GET', headers: {}, rawHeaders: ['authorization', `Bearer ${token}`] }, state: {} } as unknown as Context;
    let called = false;
    const pending = middleware(ctx, async () => {
      called = true;
    });
    expect(called).toBe(true);
    await pending;
    expect(ctx.state.auth).toBe(cached);
  });

  it('refuses to run as middleware itself (app.use(auth)), saying to call it with its options', () => {
    const mounted = auth as unknown as (...args: unknown[]) => unknown;
    expect(() => mounted({ method: 'GET', req: {}, state: {} }, async () => {})).toThrow(
      /^auth: takes one options object, got 2 arguments: auth itself was mounted as middleware; .*app\.use\(auth\(\{ verifier \}\)\)$/,
    );
  });

  it('throws the AuthError itself to upstream middleware when forwardErrors is set', async () => {
    const middleware = auth({
      verifier: { verify: () => Promise.reject(new Error('not called')) },
      forwardErrors: true,
    });
    const ctx = { req: { method: 'GET', headers: {}, headersDistinct: {} }, state: {} } as unknown as Context;
    const thrown = await (async () => middleware(ctx, async () => undefined))().catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(AuthError);
    expect(thrown).toMatchObject({ code: 'missing_token', status: 401 });
  });
});
