/**
 * The reference payment-link handlers on Koa, through paygate-auth/koa. Stands alone: copy this
 * file into a project with `npm i paygate-auth koa @koa/router` and run `node server.mjs` (PORT,
 * default 3002). It prints a curl command with a token to try.
 *
 * The issuer here is a demo one from paygate-auth/testing (its JWKS on 127.0.0.1), so the example
 * needs nothing else; in a service, the registry lists the real issuers and their JWKS URLs.
 *
 * No body parser is mounted: `ctx.req` (the request stream) is handed to the payment-link handler,
 * which checks Content-Type, reads at most 64 KiB, after authentication, and parses the JSON.
 */
import Router from '@koa/router';
import Koa from 'koa';
import { IssuerRegistry, createVerifier } from 'paygate-auth';
import { auth } from 'paygate-auth/koa';
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

/** Runs a reference handler for a Koa context. */
const route = (handler) => async (ctx) => {
  const result = await handler({
    auth: ctx.state.auth,
    headers: ctx.request.headers,
    body: ctx.req,
    params: ctx.params,
  });
  ctx.status = result.status;
  ctx.set(result.headers);
  ctx.body = JSON.stringify(result.body);
};

const router = new Router();
router.get('/info/', route(createInfoHandler()));
router.post('/payment-links/', route(createLink));
router.get('/payment-links/:id', route(createGetPaymentLinkHandler({ store: createLink.store })));

const app = new Koa();
app.use(auth({ verifier }));
app.use(router.routes()).use(router.allowedMethods());

const server = app.listen(Number(process.env.PORT ?? 3002), '127.0.0.1', async () => {
  const url = `http://127.0.0.1:${server.address().port}`;
  console.log(`Koa example listening on ${url}`);
  console.log(`curl -s ${url}/info/ -H "Authorization: Bearer ${await issuer.token()}"`);
});
const stop = () => {
  server.closeAllConnections();
  server.close();
  void jwks.close();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
