/**
 * The Koa reference app and harness, built from the `koa` module it is given: the latest Koa
 * (koa.test.ts) or the oldest the peer range declares (lowest-versions.test.ts).
 */
import Router from '@koa/router';
import type Koa from 'koa';
import type { Context } from 'koa';
import { auth, requireScopes } from '../../../src/adapters/koa/index.js';
import type { AdapterOptions } from '../../../src/http/adapter-options.js';
import { type AdapterHarness, AppError, ROUTE_SCOPES, appErrorResponse, describeAuth, serveOnLoopback } from '../reference-app.js';

function referenceApp(framework: typeof Koa, options: AdapterOptions): Koa {
  const app = new framework();
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

/** The shared table's harness for the Koa adapter on `framework`, named `name`. */
export function koaHarness(framework: typeof Koa, name = 'Koa'): AdapterHarness {
  return {
    name,
    start: (options) => serveOnLoopback(referenceApp(framework, options).callback()),
    create: (options) => auth(options as AdapterOptions),
    requireScopes: (...scopes) => requireScopes(...(scopes as [string])),
  };
}
