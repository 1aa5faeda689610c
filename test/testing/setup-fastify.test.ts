/** Fastify's `inject`, the JWKS served by the kit's loopback server. */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { authOf, paygateAuth, requireScopes } from '../../src/adapters/fastify/index.js';
import { type TestIssuer, createTestIssuer, createTestVerifier } from '../../src/testing/index.js';

let issuer: TestIssuer;
let app: FastifyInstance;

beforeAll(async () => {
  issuer = await createTestIssuer({ audience: 'https://payments.test' });
  await issuer.listen();
  app = Fastify();
  await app.register(paygateAuth, { verifier: createTestVerifier(issuer) });
  app.get('/whoami', { preHandler: requireScopes('pay:processPayments') }, async (request) => ({
    tenant: authOf(request).tenant.id,
  }));
  app.get('/open', { config: { auth: false } }, async (request) => ({ tenant: authOf(request).tenant.id }));
});
afterAll(async () => {
  await app.close();
  await issuer.close();
});

describe('Fastify inject with the JWKS on loopback', () => {
  test('a valid token reaches the route', async () => {
    const response = await app.inject({ url: '/whoami', headers: { authorization: `Bearer ${await issuer.token()}` } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ tenant: 't-1' });
  });

  test("a token without the route's scope gets 403 insufficient_scope", async () => {
    const response = await app.inject({
      url: '/whoami',
      headers: { authorization: `Bearer ${await issuer.token({ scope: 'hub:subscribe' })}` },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toMatchObject({ code: 'insufficient_scope' });
  });

  test('authOf on a public route fails with 500 configuration_error', async () => {
    const response = await app.inject({ url: '/open' });
    expect(response.statusCode).toBe(500);
  });
});
