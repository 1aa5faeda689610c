/**
 * The example gateway (examples/gateway/app.mjs, on dist/ as `npm run example` runs it) hands its
 * verifier's `reportRefusal` to the reference handlers, so a token the handlers refuse for a
 * missing scope reaches the verifier's `onEvent`, as a refusal by the adapter does.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import type { VerifierEvent, VerifyFailureEvent } from '../../src/index.js';
import { createTestIssuer, createTestVerifier } from '../../src/testing/index.js';
// @ts-expect-error: the example is plain JavaScript, without declarations.
import { createGateway } from '../../examples/gateway/app.mjs';

type Gateway = (request: Request, log: Record<string, unknown>) => Promise<Response>;

describe('the example gateway and the verifier events', () => {
  it('reports a link creation refused by the handler for lack of pay:processPayments as insufficient_scope', async () => {
    const issuer = await createTestIssuer({ product: 'demo', tenant: 'ern:demo/tenants/clinic-1' });
    const failures: VerifyFailureEvent[] = [];
    const onEvent = (event: VerifierEvent): void => {
      if (event.type === 'verify_failure') failures.push(event);
    };
    await issuer.listen();
    onTestFinished(() => issuer.close());
    const verifier = createTestVerifier(issuer, { onEvent });
    const gateway = createGateway({ verifier, payPageUrl: 'https://pay.example/l' }) as Gateway;
    const token = await issuer.token({ scope: 'hub:subscribe' });
    const log: Record<string, unknown> = {};
    const response = await gateway(
      new Request('http://gateway.test/payment-links/', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{}',
      }),
      log,
    );
    expect(response.status).toBe(403);
    expect(log.code).toBe('insufficient_scope');
    expect(failures).toMatchObject([{ code: 'insufficient_scope', issuer: issuer.issuer }]);
  });
});

describe('the example gateway and hostile paths', () => {
  it('answers a link id with a malformed percent-escape 404 payment_link_not_found, not 500', async () => {
    const issuer = await createTestIssuer({ product: 'demo', tenant: 'ern:demo/tenants/clinic-1' });
    await issuer.listen();
    onTestFinished(() => issuer.close());
    const gateway = createGateway({ verifier: createTestVerifier(issuer), payPageUrl: 'https://pay.example/l' }) as Gateway;
    const token = await issuer.token({ scope: 'pay:processPayments' });
    const log: Record<string, unknown> = {};
    const response = await gateway(
      new Request('http://gateway.test/payment-links/%E0%A4%A', { headers: { authorization: `Bearer ${token}` } }),
      log,
    );
    expect([response.status, log.code]).toEqual([404, 'payment_link_not_found']);
  });

  it('authenticates before it answers a malformed link id', async () => {
    const issuer = await createTestIssuer({ product: 'demo', tenant: 'ern:demo/tenants/clinic-1' });
    const gateway = createGateway({ verifier: createTestVerifier(issuer), payPageUrl: 'https://pay.example/l' }) as Gateway;
    const log: Record<string, unknown> = {};
    const response = await gateway(new Request('http://gateway.test/payment-links/%'), log);
    expect([response.status, log.code]).toEqual([401, 'missing_token']);
  });
});

describe('the example gateway and methods a path does not have', () => {
  it.each([
    ['DELETE', '/payment-links/', 'POST'],
    ['GET', '/payment-links', 'POST'],
    ['PUT', '/payment-links/pl_1', 'GET, HEAD'],
    ['POST', '/payment-links/pl_1', 'GET, HEAD'],
    ['DELETE', '/info/', 'GET, HEAD'],
    ['POST', '/openapi.json', 'GET, HEAD'],
  ])('answers %s %s 405 method_not_allowed with Allow: %s, before authentication', async (method, path, allow) => {
    const issuer = await createTestIssuer({ product: 'demo', tenant: 'ern:demo/tenants/clinic-1' });
    const gateway = createGateway({ verifier: createTestVerifier(issuer), payPageUrl: 'https://pay.example/l' }) as Gateway;
    const log: Record<string, unknown> = {};
    const response = await gateway(new Request(`http://gateway.test${path}`, { method }), log);
    expect([response.status, response.headers.get('allow'), log.code]).toEqual([405, allow, 'method_not_allowed']);
    expect(await response.json()).toMatchObject({ status: 405, code: 'method_not_allowed' });
  });
});

describe('the example gateway and HEAD', () => {
  it('answers HEAD /info/ as GET /info/ for the same token', async () => {
    const issuer = await createTestIssuer({ product: 'demo', tenant: 'ern:demo/tenants/clinic-1' });
    await issuer.listen();
    onTestFinished(() => issuer.close());
    const gateway = createGateway({ verifier: createTestVerifier(issuer), payPageUrl: 'https://pay.example/l' }) as Gateway;
    const token = await issuer.token({ scope: 'pay:processPayments' });
    const answer = async (method: string) => {
      const response = await gateway(
        new Request('http://gateway.test/info/', { method, headers: { authorization: `Bearer ${token}` } }),
        {},
      );
      return [response.status, response.headers.get('content-type')];
    };
    expect(await answer('HEAD')).toEqual(await answer('GET'));
    expect(await answer('HEAD')).toEqual([200, 'application/json']);
  });

  it('authenticates HEAD as it does GET: without a token, 401 missing_token', async () => {
    const issuer = await createTestIssuer({ product: 'demo', tenant: 'ern:demo/tenants/clinic-1' });
    const gateway = createGateway({ verifier: createTestVerifier(issuer), payPageUrl: 'https://pay.example/l' }) as Gateway;
    const log: Record<string, unknown> = {};
    const response = await gateway(new Request('http://gateway.test/payment-links/pl_1', { method: 'HEAD' }), log);
    expect([response.status, log.code]).toEqual([401, 'missing_token']);
  });
});
