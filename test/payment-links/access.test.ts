import { describe, expect, it } from 'vitest';
import { TENANT_A, PUBLIC_TENANT, jsonRequest, makeHandler, useCallers, validBody } from './support.js';

const callers = useCallers();

describe('POST /payment-links/ callers', () => {
  it('refuses a token without pay:processPayments with 403 insufficient_scope naming the scope', async () => {
    const handler = makeHandler();
    const response = await handler(jsonRequest(await callers.auth({ scope: 'hub:subscribe pay:chargeToken' }), validBody()));
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ code: 'insufficient_scope', status: 403 });
    expect(response.headers['www-authenticate']).toBe(
      'Bearer realm="paygate", error="insufficient_scope", error_description="Insufficient scope", scope="pay:processPayments"',
    );
    expect(await handler.store.list(TENANT_A)).toEqual([]);
  });

  it("names the gateway's four scopes for a token holding none of them: the default policy is judged first", async () => {
    const handler = makeHandler();
    const response = await handler(jsonRequest(await callers.auth({ scope: 'pay:readReports' }), validBody()));
    expect(response.status).toBe(403);
    expect(response.headers['www-authenticate']).toContain(
      'scope="pay:processPayments pay:chargeToken pay:manageIntegration hub:subscribe"',
    );
  });

  it('uses the configured realm in the challenge', async () => {
    const handler = makeHandler({ realm: 'gateway' });
    const response = await handler(jsonRequest(await callers.auth({ scope: 'hub:subscribe' }), validBody()));
    expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="gateway"/);
  });

  it('refuses the public tenant with 403 public_tenant_not_allowed', async () => {
    const handler = makeHandler();
    const auth = await callers.auth({ tenant_ern: PUBLIC_TENANT });
    const response = await handler(jsonRequest(auth, validBody()));
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({
      code: 'public_tenant_not_allowed',
      status: 403,
      type: 'urn:paygate-auth:problem:public_tenant_not_allowed',
    });
    expect(await handler.store.list(PUBLIC_TENANT)).toEqual([]);
  });

  it('checks the caller before the body: a bad body from a public tenant is still 403', async () => {
    const handler = makeHandler();
    const response = await handler({
      auth: await callers.auth({ tenant_ern: PUBLIC_TENANT }),
      headers: {},
      body: 'not json',
    });
    expect(response.status).toBe(403);
  });

  it('fails as a configuration error (500) where no verification ran', async () => {
    const handler = makeHandler();
    const response = await handler(jsonRequest(null, validBody()));
    expect(response.status).toBe(500);
    expect(response.body).toMatchObject({ code: 'configuration_error' });
  });
});
