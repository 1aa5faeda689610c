/**
 * Express and supertest, the JWKS served by msw. With `onUnhandledRequest: 'error'`, msw would
 * also catch supertest's own requests to the app; `errorExceptLoopback` lets loopback through.
 */
import express, { type Express } from 'express';
import { setupServer } from 'msw/node';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { auth, authOf, requireScopes } from '../../src/adapters/express/index.js';
import { type TestIssuer, createTestIssuer, createTestVerifier } from '../../src/testing/index.js';
import { errorExceptLoopback, jwksHandlers } from '../../src/testing/msw.js';

const server = setupServer();
let issuer: TestIssuer;
let app: Express;

beforeAll(async () => {
  issuer = await createTestIssuer({ audience: 'https://payments.test' });
  server.use(...jwksHandlers(issuer));
  server.listen({ onUnhandledRequest: errorExceptLoopback });
  app = express();
  app.use(auth({ verifier: createTestVerifier(issuer) }));
  app.get('/whoami', requireScopes('pay:processPayments'), (req, res) => {
    res.json({ tenant: authOf(req).tenant.id });
  });
  app.get('/unguarded', (req, res) => {
    res.json({ tenant: authOf(req).tenant.id });
  });
});
afterAll(() => server.close());

describe('Express + supertest with the JWKS on msw', () => {
  test("a valid token reaches the route: supertest's loopback request passes msw", async () => {
    const token = await issuer.token();
    await request(app).get('/whoami').set('Authorization', `Bearer ${token}`).expect(200, { tenant: 't-1' });
    expect(issuer.jwksRequests).toBe(1);
  });

  test("a token without the route's scope gets 403 insufficient_scope", async () => {
    const token = await issuer.token({ scope: 'hub:subscribe' });
    const response = await request(app).get('/whoami').set('Authorization', `Bearer ${token}`);
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ code: 'insufficient_scope' });
  });

  test('a request without a token gets 401 missing_token', async () => {
    const response = await request(app).get('/whoami');
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ code: 'missing_token' });
  });

  test('an unhandled request to a host other than loopback still fails', async () => {
    // msw reports the request on the console before it fails it.
    const lines = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      await expect(fetch('https://elsewhere.test/')).rejects.toThrow();
      expect(lines.mock.calls.map(([line]) => String(line)).join('\n')).toContain('https://elsewhere.test/');
    } finally {
      lines.mockRestore();
    }
  });
});

describe('authOf', () => {
  test('gives the verified caller of a route behind auth()', async () => {
    const token = await issuer.token();
    await request(app).get('/unguarded').set('Authorization', `Bearer ${token}`).expect(200, { tenant: 't-1' });
  });

  test('fails with a ConfigurationError naming auth() where no verification ran', () => {
    expect(() => authOf({} as express.Request)).toThrow(
      expect.objectContaining({ code: 'configuration_error', message: expect.stringMatching(/mount auth\(\)/) }),
    );
  });
});
