/**
 * `paygate-auth/fastify`'s route helpers on every server Fastify makes: `requireScopes(...)` as a
 * preHandler and `authOf(request)` in the handler, on HTTP/1 (the default, and HTTPS) and HTTP/2.
 */
import Fastify from 'fastify';
import { expectTypeOf, test } from 'vitest';
import type { AuthContext } from '../../src/index.js';
import { authOf, paygateAuth, requireScopes } from '../../src/adapters/fastify/index.js';
import type { Verifier } from '../../src/index.js';

declare const verifier: Verifier;

test('requireScopes and authOf type-check on an HTTP/1 server', async () => {
  const app = Fastify();
  await app.register(paygateAuth, { verifier });
  app.get('/', { preHandler: requireScopes('pay:processPayments') }, async (request) => {
    expectTypeOf(authOf(request)).toEqualTypeOf<AuthContext>();
    return authOf(request).tenant.id;
  });
});

test('requireScopes and authOf type-check on an HTTP/2 server', async () => {
  const app = Fastify({ http2: true });
  await app.register(paygateAuth, { verifier });
  app.get('/', { preHandler: requireScopes('pay:processPayments') }, async (request) => {
    expectTypeOf(authOf(request)).toEqualTypeOf<AuthContext>();
    return authOf(request).tenant.id;
  });
});

test('requireScopes and authOf type-check on an HTTP/2 server over TLS', async () => {
  const app = Fastify({ http2: true, https: { allowHTTP1: true } });
  await app.register(paygateAuth, { verifier });
  app.get('/', { preHandler: [requireScopes('pay:processPayments')] }, async (request) => authOf(request).tenant.id);
});

test('requireScopes type-checks on a route whose reply is typed', async () => {
  const app = Fastify();
  await app.register(paygateAuth, { verifier });
  app.get<{ Reply: { 200: { tenant: string } } }>('/', { preHandler: requireScopes('pay:processPayments') }, async (request) => ({
    tenant: authOf(request).tenant.id,
  }));
});
