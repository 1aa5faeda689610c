import express, { type NextFunction, type Request, type Response } from 'express';
import { describe, expect, it } from 'vitest';
import { auth, requireScopes } from '../../../src/adapters/express/index.js';
import { AuthError } from '../../../src/core/errors.js';
import { verifyUntilCached } from '../../support/result-cache.js';
import { describeAdapterTable } from '../adapter-table.js';
import { useLoopbackIssuer } from '../loopback-issuer.js';
import { serveOnLoopback } from '../reference-app.js';
import { expressHarness } from './express-app.js';

describeAdapterTable(expressHarness(express));

describe('the Express adapter', () => {
  const fx = useLoopbackIssuer();

  it('calls next() for a cached token before the middleware returns, with req.auth set', async () => {
    const token = await fx.issuer.token();
    const cached = await verifyUntilCached(fx.verifier, token);
    const middleware = auth({ verifier: fx.verifier });
    const req = { method: 'GET', headers: {}, rawHeaders: ['Authorization', `Bearer ${token}`] } as unknown as Request;
    let called = false;
    void middleware(req, {} as Response, () => {
      called = true;
    });
    expect(called).toBe(true);
    expect(req.auth).toBe(cached);
  });

  it('leaves a response already sent alone when a failure comes after it, rejecting nothing', async () => {
    let fail: (error: AuthError) => void = () => undefined;
    const verifying = new Promise<never>((_resolve, reject) => {
      fail = reject;
    });
    const gate = auth({ verifier: { verify: () => verifying } });
    const outcomes: Promise<unknown>[] = [];
    const errors: unknown[] = [];
    const app = express();
    // A timeout middleware that answered while the JWKS was being fetched.
    app.use((_req, res, next) => {
      res.status(503).end('timed out');
      next();
    });
    // Express 4 drops what a middleware returns: a rejection there is an unhandled rejection.
    app.use(
      (req, res, next) =>
        void outcomes.push(
          Promise.resolve(gate(req, res, next)).then(
            () => 'settled',
            (error: unknown) => error,
          ),
        ),
    );
    app.use((error: unknown, _req: Request, _res: Response, _next: NextFunction) => void errors.push(error));
    const running = await serveOnLoopback(app);
    try {
      const response = await fetch(`${running.url}/me`, { headers: { authorization: 'Bearer abc' } });
      expect(response.status).toBe(503);
      fail(new AuthError('jwks_unavailable', 'The keys cannot be loaded.'));
      expect(await Promise.all(outcomes)).toEqual(['settled']);
      expect(errors).toEqual([]);
    } finally {
      await running.close();
    }
  });

  it('refuses to run as middleware itself (app.use(auth)), saying to call it with its options', () => {
    const mounted = auth as unknown as (...args: unknown[]) => unknown;
    expect(() => mounted({ method: 'GET', headers: {}, url: '/' }, {}, () => {})).toThrow(
      /^auth: takes one options object, got 3 arguments: auth itself was mounted as middleware; .*app\.use\(auth\(\{ verifier \}\)\)$/,
    );
  });

  it("answers requireScopes behind another library's req.auth (a JWT payload) with 500 configuration_error", async () => {
    const app = express();
    app.use((req, _res, next) => {
      (req as { auth?: unknown }).auth = { sub: 'someone', scope: 'pay:processPayments' }; // as express-jwt does
      next();
    });
    app.get('/payments', requireScopes('pay:processPayments'), (_req, res) => void res.send('reached'));
    const running = await serveOnLoopback(app);
    try {
      const response = await fetch(`${running.url}/payments`);
      expect(response.status).toBe(500);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await response.json()).toMatchObject({ code: 'configuration_error' });
    } finally {
      await running.close();
    }
  });

  it('answers a HEAD request it refuses with the Content-Length of the body a GET gets, as Koa and Fastify do', async () => {
    const app = express();
    app.use(auth({ verifier: fx.verifier }));
    app.get('/me', (_req, res) => void res.send('reached'));
    const running = await serveOnLoopback(app);
    try {
      const get = await fetch(`${running.url}/me`);
      const length = String(new TextEncoder().encode(await get.text()).byteLength);
      const head = await fetch(`${running.url}/me`, { method: 'HEAD' });
      expect(head.status).toBe(401);
      expect(head.headers.get('content-length')).toBe(length);
    } finally {
      await running.close();
    }
  });

  it('passes the AuthError itself to next(err) when forwardErrors is set', async () => {
    const middleware = auth({
      verifier: { verify: async () => Promise.reject(new Error('unreachable')) },
      forwardErrors: true,
    });
    const forwarded = await new Promise<unknown>((resolve) => {
      const req = { method: 'GET', headers: {}, headersDistinct: {} } as unknown as Request;
      void middleware(req, {} as Response, resolve);
    });
    expect(forwarded).toBeInstanceOf(AuthError);
    expect(forwarded).toMatchObject({ code: 'missing_token', status: 401 });
  });
});
