/**
 * The Hono reference app and harness, built from the `hono` module it is given: the latest Hono
 * (hono.test.ts) or the oldest the peer range declares (lowest-versions.test.ts). Served by
 * `@hono/node-server`, which calls only the app's `fetch`.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Context, Hono, Env as HonoEnv } from 'hono';
import { type AuthVariables, auth, requireScopes } from '../../../src/adapters/hono/index.js';
import type { AdapterOptions } from '../../../src/http/adapter-options.js';
import { type AdapterHarness, AppError, ROUTE_SCOPES, type RunningApp, appErrorResponse, describeAuth } from '../reference-app.js';

export type Env = { Variables: AuthVariables };

/** The module the reference app is built from: `hono`'s `Hono` class. */
export interface HonoModule {
  readonly Hono: typeof Hono;
}

/** The reference app on `framework`, its `auth()` made with `options`. */
export function referenceApp(framework: HonoModule, options: AdapterOptions): Hono<Env> {
  const app = new framework.Hono<Env>();
  const me = (c: Context<Env>) => c.json(describeAuth(c.get('auth')));
  app.onError((error, c) => {
    const { status, body } = appErrorResponse(error);
    return c.json(body, status as 418);
  });
  app.get('/unguarded', requireScopes(...ROUTE_SCOPES.unguarded), (c) => c.json(describeAuth(c.get('auth'))));
  app.options('/unguarded', requireScopes(...ROUTE_SCOPES.unguarded), (c) => c.json(describeAuth(c.get('auth'))));
  app.use(auth(options));
  app.get('/me', me);
  app.options('/me', me);
  app.get('/manage', requireScopes(...ROUTE_SCOPES.manage), (c) => c.json(describeAuth(c.get('auth'))));
  app.options('/manage', requireScopes(...ROUTE_SCOPES.manage), (c) => c.json(describeAuth(c.get('auth'))));
  app.get('/both', requireScopes(...ROUTE_SCOPES.both), (c) => c.json(describeAuth(c.get('auth'))));
  app.get('/either', requireScopes(...ROUTE_SCOPES.either), (c) => c.json(describeAuth(c.get('auth'))));
  app.get('/boom', () => {
    throw new AppError('boom');
  });
  return app;
}

/** `app` served on 127.0.0.1 at a free port, by `@hono/node-server`. */
export async function listen<E extends HonoEnv>(app: Hono<E>): Promise<RunningApp> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
      resolve({
        url: `http://127.0.0.1:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            if ('closeAllConnections' in server) server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** The shared table's harness for the Hono adapter on `framework`, named `name`. */
export function honoHarness(framework: HonoModule, name = 'Hono'): AdapterHarness {
  return {
    name,
    start: async (options) => listen(referenceApp(framework, options)),
    create: (options) => auth(options as AdapterOptions),
    requireScopes: (...scopes) => requireScopes(...(scopes as [string])),
  };
}
