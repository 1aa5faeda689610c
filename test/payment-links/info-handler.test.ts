import { describe, expect, it } from 'vitest';
import { createInfoHandler } from '../../src/payment-links/index.js';
import { PUBLIC_TENANT, TENANT_A, makeInfoHandler, useCallers } from './support.js';

const callers = useCallers();
const info = makeInfoHandler();

describe('GET /info/', () => {
  it('answers 200 with what the gateway understood of the token', async () => {
    const auth = await callers.auth({ scope: 'pay:processPayments hub:subscribe', user_ern: '//users/u-7' });
    const response = await info({ auth, headers: {} });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
    expect(response.body).toEqual({
      tenant_ern: TENANT_A,
      tenant_id: 't-1',
      public_tenant: false,
      tenant_name: 'Test Tenant',
      product: 'acme',
      issuer: 'https://issuer.test',
      audience: 'https://payments.test',
      scopes: ['pay:processPayments', 'hub:subscribe'],
      user_ern: '//users/u-7',
      expires: auth.expiresAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    });
  });

  it('accepts any one known scope, hub:subscribe included', async () => {
    const response = await info({ auth: await callers.auth({ scope: 'hub:subscribe' }), headers: {} });
    expect(response.status).toBe(200);
  });

  it('answers the public tenant too', async () => {
    const response = await info({
      auth: await callers.auth({ tenant_ern: PUBLIC_TENANT, user_ern: PUBLIC_TENANT }),
      headers: {},
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ tenant_ern: PUBLIC_TENANT, public_tenant: true, user_ern: PUBLIC_TENANT });
  });

  it('reports a token without tenant name or user as nulls', async () => {
    const response = await info({ auth: await callers.auth({ tenant_name: undefined }), headers: {} });
    expect(response.body).toMatchObject({ tenant_name: null, user_ern: null });
  });

  it('refuses a token with none of the known scopes with 403 insufficient_scope', async () => {
    const response = await info({ auth: await callers.auth({ scope: 'profile' }), headers: {} });
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ code: 'insufficient_scope', status: 403 });
    expect(response.headers['www-authenticate']).toContain('error="insufficient_scope"');
  });

  it('fails as a configuration error (500) where no verification ran', async () => {
    const response = await info({ auth: null, headers: {} });
    expect(response.status).toBe(500);
    expect(response.body).toMatchObject({ code: 'configuration_error' });
  });

  it('refuses a realm that cannot stand in a challenge', () => {
    expect(() => createInfoHandler({ realm: 'a"b' })).toThrow(TypeError);
  });
});
