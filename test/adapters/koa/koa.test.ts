import Koa, { type Context } from 'koa';
import { describe, expect, it } from 'vitest';
import { auth } from '../../../src/adapters/koa/index.js';
import { AuthError } from '../../../src/core/errors.js';
import { verifyUntilCached } from '../../support/result-cache.js';
import { describeAdapterTable } from '../adapter-table.js';
import { useLoopbackIssuer } from '../loopback-issuer.js';
import { koaHarness } from './koa-app.js';

describeAdapterTable(koaHarness(Koa));

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
