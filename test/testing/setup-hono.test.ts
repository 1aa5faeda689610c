/** Hono's `app.request`, through paygate-auth/fetch, the JWKS served by msw. */
import { Hono } from 'hono';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { requireScopes, withAuth } from '../../src/adapters/fetch/index.js';
import { type TestIssuer, createTestIssuer, createTestVerifier } from '../../src/testing/index.js';
import { jwksHandlers } from '../../src/testing/msw.js';

const server = setupServer();
let issuer: TestIssuer;
let app: Hono;

beforeAll(async () => {
  issuer = await createTestIssuer({ audience: 'https://payments.test' });
  server.use(...jwksHandlers(issuer));
  server.listen({ onUnhandledRequest: 'error' });
  const whoami = withAuth(
    requireScopes('pay:processPayments')((_request, auth) => Response.json({ tenant: auth.tenant.id })),
    {
      verifier: createTestVerifier(issuer),
    },
  );
  app = new Hono();
  app.get('/whoami', (c) => whoami(c.req.raw));
});
afterAll(() => server.close());

describe('Hono app.request with the JWKS on msw', () => {
  test('a valid token reaches the route', async () => {
    const response = await app.request('/whoami', { headers: { Authorization: `Bearer ${await issuer.token()}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ tenant: 't-1' });
  });

  test('a token for another audience gets 401 audience_mismatch', async () => {
    const response = await app.request('/whoami', {
      headers: { Authorization: `Bearer ${await issuer.token({ aud: 'https://other.test' })}` },
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: 'audience_mismatch' });
  });
});
