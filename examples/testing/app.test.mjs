import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { auth, authOf, requireScopes } from 'paygate-auth/express';
import { createTestIssuer, createTestVerifier } from 'paygate-auth/testing';

// Your app, built as your code builds it: auth() with a verifier, routes behind requireScopes().
function createApp(verifier) {
  const app = express();
  app.use(auth({ verifier }));
  app.post('/payments', requireScopes('pay:processPayments'), (req, res) => {
    res.status(201).json({ tenant: authOf(req).tenant.id });
  });
  return app;
}

const issuer = await createTestIssuer({ product: 'acme', audience: 'https://payments.test' });
const app = createApp(createTestVerifier(issuer)); // trusts the issuer, follows its key changes
beforeAll(async () => {
  await issuer.listen(); // its JWKS on 127.0.0.1; no request interception needed
});
afterAll(() => issuer.close());

test('a token with the scope reaches the route', async () => {
  const token = await issuer.token(); // tenant ern:acme/tenants/t-1, scope pay:processPayments
  await request(app).post('/payments').set('Authorization', `Bearer ${token}`).expect(201, { tenant: 't-1' });
});

test('a token without it gets 403 insufficient_scope', async () => {
  const token = await issuer.token({ scope: 'hub:subscribe' });
  const response = await request(app).post('/payments').set('Authorization', `Bearer ${token}`);
  expect(response.status).toBe(403);
  expect(response.body.code).toBe('insufficient_scope');
});
