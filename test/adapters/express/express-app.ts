/**
 * The Express reference app and harness, built from the `express` module it is given: the latest
 * Express (express.test.ts) or the oldest the peer range declares (lowest-versions.test.ts).
 */
import type express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { auth, requireScopes } from '../../../src/adapters/express/index.js';
import type { AdapterOptions } from '../../../src/http/adapter-options.js';
import { type AdapterHarness, AppError, ROUTE_SCOPES, appErrorResponse, describeAuth, serveOnLoopback } from '../reference-app.js';

function referenceApp(framework: typeof express, options: AdapterOptions): express.Express {
  const app = framework();
  const me = (req: Request, res: Response) => void res.json(describeAuth(req.auth));
  app.get('/unguarded', requireScopes(...ROUTE_SCOPES.unguarded), me);
  app.options('/unguarded', requireScopes(...ROUTE_SCOPES.unguarded), me);
  app.use(auth(options));
  app.get('/me', me);
  app.options('/me', me);
  app.get('/manage', requireScopes(...ROUTE_SCOPES.manage), me);
  app.options('/manage', requireScopes(...ROUTE_SCOPES.manage), me);
  app.get('/both', requireScopes(...ROUTE_SCOPES.both), me);
  app.get('/either', requireScopes(...ROUTE_SCOPES.either), me);
  app.get('/boom', () => {
    throw new AppError('boom');
  });
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const { status, body } = appErrorResponse(error);
    res.status(status).json(body);
  });
  return app;
}

/** The shared table's harness for the Express adapter on `framework`, named `name`. */
export function expressHarness(framework: typeof express, name = 'Express'): AdapterHarness {
  return {
    name,
    start: (options) => serveOnLoopback(referenceApp(framework, options)),
    create: (options) => auth(options as AdapterOptions),
    requireScopes: (...scopes) => requireScopes(...(scopes as [string])),
  };
}
