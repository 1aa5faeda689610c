import { Hono, type MiddlewareHandler } from 'hono';
import { describe, expect, it } from 'vitest';
import { auth } from '../../../src/adapters/hono/index.js';
import { AuthError } from '../../../src/core/errors.js';
import { verifyUntilCached } from '../../support/result-cache.js';
import { describeAdapterTable } from '../adapter-table.js';
import { useLoopbackIssuer } from '../loopback-issuer.js';
import { describeAuth } from '../reference-app.js';
import { type Env, honoHarness, referenceApp } from './hono-app.js';

describeAdapterTable(honoHarness({ Hono }));

describe('the Hono adapter', () => {
  const fx = useLoopbackIssuer();

  it('passes a cached token on to the next handler within the same call, with no turn of the event loop', async () => {
    const token = await fx.issuer.token();
    await verifyUntilCached(fx.verifier, token);
    const middleware = auth({ verifier: fx.verifier });
    const app = new Hono<Env>();
    let reachedInCall = false;
    let inCall = false;
    app.use(async (c, next) => {
      inCall = true;
      const pending = middleware(c, next);
      inCall = false;
      await pending;
    });
    app.get('/me', (c) => {
      reachedInCall = inCall;
      return c.json(describeAuth(c.get('auth')));
    });
    const response = await app.request('/me', { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    expect(reachedInCall).toBe(true);
  });

  it('keeps headers set by earlier middleware (CORS, say) on a failure it answers', async () => {
    const app = new Hono<Env>();
    app.use(async (c, next) => {
      c.header('access-control-allow-origin', 'https://shop.example');
      await next();
    });
    app.use(auth({ verifier: fx.verifier }));
    app.get('/me', (c) => c.text('reached'));
    const response = await app.request('/me');
    expect(response.status).toBe(401);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="paygate"');
  });

  it('refuses to run as middleware itself (app.use(auth)), saying to call it with its options', async () => {
    const app = new Hono();
    let refused: unknown;
    app.onError((error, c) => {
      refused = error;
      return c.text('refused', 500);
    });
    app.use(auth as unknown as MiddlewareHandler);
    app.get('/me', (c) => c.text('reached'));
    expect((await app.request('/me')).status).toBe(500);
    expect(String(refused)).toMatch(
      /^TypeError: auth: takes one options object, got 2 arguments: auth itself was mounted as middleware; .*app\.use\(auth\(\{ verifier \}\)\)$/,
    );
  });

  it('throws the AuthError itself to app.onError when forwardErrors is set', async () => {
    const app = new Hono<Env>();
    let seen: unknown;
    app.onError((error, c) => {
      seen = error;
      return c.text('handled', 401);
    });
    app.use(auth({ verifier: fx.verifier, forwardErrors: true }));
    app.get('/me', (c) => c.text('reached'));
    const response = await app.request('/me');
    expect(await response.text()).toBe('handled');
    expect(seen).toBeInstanceOf(AuthError);
    expect(seen).toMatchObject({ code: 'missing_token', status: 401 });
  });

  describe('on @hono/node-server (c.env.incoming, the message Node parsed)', () => {
    /** Node's message as `@hono/node-server` hands it in `c.env`: raw header lines, headers, method. */
    const incoming = (lines: string[]) => ({ incoming: { method: 'GET', rawHeaders: lines, headers: {} } });

    it("reads Authorization from Node's raw header lines, not from the Request built from them", async () => {
      const token = await fx.issuer.token();
      const app = referenceApp({ Hono }, { verifier: fx.verifier });
      const fromLines = await app.request('/me', {}, incoming(['Authorization', `Bearer ${token}`]));
      const notFromRequest = await app.request('/me', { headers: { authorization: `Bearer ${token}` } }, incoming([]));
      expect(fromLines.status).toBe(200);
      expect(notFromRequest.status).toBe(401);
      expect(await notFromRequest.json()).toMatchObject({ code: 'missing_token' });
    });

    it('answers two Authorization lines with 400 invalid_request, as Node received them', async () => {
      const token = await fx.issuer.token();
      const app = referenceApp({ Hono }, { verifier: fx.verifier });
      const response = await app.request('/me', {}, incoming(['Authorization', `Bearer ${token}`, 'authorization', `Bearer ${token}`]));
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'invalid_request' });
    });

    it.each([
      ['no raw header lines', { incoming: { method: 'GET', headers: {} } }],
      ['raw header lines but no headers', { incoming: { method: 'GET', rawHeaders: [] } }],
      ['not an object', { incoming: 'node' }],
    ])('reads the Request when c.env.incoming has %s', async (_case, env) => {
      const app = referenceApp({ Hono }, { verifier: fx.verifier });
      const response = await app.request('/me', { headers: { authorization: `Bearer ${await fx.issuer.token()}` } }, env);
      expect(response.status).toBe(200);
    });

    it("answers requireScopes' refusal with the middleware's settings (its hints), as for the request it gated", async () => {
      const app = referenceApp({ Hono }, { verifier: fx.verifier, exposeHints: true });
      const response = await app.request('/manage', {}, incoming(['Authorization', `Bearer ${await fx.issuer.token()}`]));
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ code: 'insufficient_scope', hint: expect.any(String) });
    });
  });

  it('answers through app.request() as through a server', async () => {
    const app = referenceApp({ Hono }, { verifier: fx.verifier });
    const response = await app.request('/manage', { headers: { authorization: `Bearer ${await fx.issuer.token()}` } });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ code: 'insufficient_scope' });
  });
});
