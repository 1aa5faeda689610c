/**
 * The reference payment-link handlers on Hono (a Web fetch runtime), through paygate-auth/fetch,
 * served on Node by @hono/node-server. Stands alone: copy this file into a project with
 * `npm i paygate-auth hono @hono/node-server` and run `node server.mjs` (PORT, default 3003). It
 * prints a curl command with a token to try. The same `route` works in any fetch runtime:
 * Workers, Deno, Bun, Next.js route handlers.
 *
 * The issuer here is a demo one from paygate-auth/testing (its JWKS on 127.0.0.1), so the example
 * needs nothing else; in a service, the registry lists the real issuers and their JWKS URLs.
 *
 * `request.body` (a ReadableStream) is handed to the payment-link handler, which checks
 * Content-Type, reads at most 64 KiB, after authentication, and parses the JSON.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { IssuerRegistry, createVerifier } from 'paygate-auth';
import { withAuth } from 'paygate-auth/fetch';
import { InMemoryDirectory, createGetPaymentLinkHandler, createInfoHandler, createPaymentLinkHandler } from 'paygate-auth/payment-links';
import { createTestIssuer } from 'paygate-auth/testing';

const AUDIENCE = 'https://payments.example';
const TENANT = 'ern:demo/tenants/clinic-1';

// A demo issuer for product `demo`, acting for one tenant, with its JWKS served on 127.0.0.1.
const issuer = await createTestIssuer({
  issuer: 'https://auth.demo.example',
  product: 'demo',
  tenant: TENANT,
  tenantName: 'Demo Clinic',
  audience: AUDIENCE,
  lifetime: 3600,
});
const jwks = await issuer.listen();
const verifier = createVerifier({ registry: new IssuerRegistry([issuer.entry]), audience: AUDIENCE });

// The tenant's departments, store and payment methods.
const directory = new InMemoryDirectory([
  {
    tenant: TENANT,
    stores: [{ id: '3b0f6d2a-6c1e-4f5a-9d7b-2e8c4a1f0001', name: 'Reception' }],
    departments: [{ ref: 'cardiology' }, { ref: 'radiology' }],
    paymentMethods: { allowed: ['mc', 'visa', 'mobilepay'], blocked: [] },
  },
]);
const createLink = createPaymentLinkHandler({ payPageUrl: 'https://pay.example/l', directory });

/** A fetch handler `(request, params) => Response` running a reference handler behind withAuth. */
const route = (handler) =>
  withAuth(
    async (request, auth, params) => {
      const result = await handler({ auth, headers: request.headers, body: request.body, params });
      return new Response(JSON.stringify(result.body), { status: result.status, headers: result.headers });
    },
    { verifier },
  );

const info = route(createInfoHandler());
const create = route(createLink);
const read = route(createGetPaymentLinkHandler({ store: createLink.store }));

const app = new Hono();
app.get('/info/', (c) => info(c.req.raw, {}));
app.post('/payment-links/', (c) => create(c.req.raw, {}));
app.get('/payment-links/:id', (c) => read(c.req.raw, { id: c.req.param('id') }));

const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: Number(process.env.PORT ?? 3003) }, async (address) => {
  const url = `http://127.0.0.1:${address.port}`;
  console.log(`Hono example listening on ${url}`);
  console.log(`curl -s ${url}/info/ -H "Authorization: Bearer ${await issuer.token()}"`);
});
const stop = () => {
  server.close();
  void jwks.close();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
