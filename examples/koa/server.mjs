/**
 * The reference payment-link handlers on Koa, through paygate-auth/koa. Stands alone: copy this
 * file into a project with `npm i paygate-auth koa @koa/router` and run `node server.mjs` (PORT,
 * default 3002; 0 to 65535, another value stops it with exit code 2). It prints a curl command
 * with a token to try. On SIGTERM or SIGINT it stops taking connections, lets the requests in
 * flight finish, and exits with code 0.
 *
 * The issuer here is a demo one from paygate-auth/testing (its JWKS on 127.0.0.1), so the example
 * needs nothing else; in a service, the registry lists the real issuers and their JWKS URLs.
 *
 * No body parser is mounted: `ctx.req` (the request stream) is handed to the payment-link handler,
 * which checks Content-Type, reads at most 64 KiB, after authentication, and parses the JSON.
 */
import Router from '@koa/router';
import Koa from 'koa';
import { IssuerRegistry, createVerifier, quote } from 'paygate-auth';
import { auth } from 'paygate-auth/koa';
import { InMemoryDirectory, createGetPaymentLinkHandler, createInfoHandler, createPaymentLinkHandler } from 'paygate-auth/payment-links';
import { createTestIssuer } from 'paygate-auth/testing';

/**
 * PORT: a port number from 0 to 65535 (0 for any free port), or `fallback` when unset or empty.
 * Any other value is one line naming PORT, the value found and the range, and exit code 2, before
 * anything is opened.
 */
function portFromEnv(fallback) {
  const text = process.env.PORT;
  if (text === undefined || text === '') return fallback;
  if (/^\d+$/.test(text) && Number(text) <= 65_535) return Number(text);
  console.error(
    `PORT must be a port number (0 for any free port) from 0 to 65535, got ${quote(text)}: correct it, or unset it for the default`,
  );
  process.exit(2);
}

const port = portFromEnv(3002);

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

const server = app.listen(port, '127.0.0.1', async () => {
  const url = `http://127.0.0.1:${server.address().port}`;
  console.log(`Koa example listening on ${url}`);
  console.log(`curl -s ${url}/info/ -H "Authorization: Bearer ${await issuer.token()}"`);
});

/** How long shutdown lets the requests in flight finish before it cuts them (as the example gateway's default). */
const DRAIN_MS = 10_000;

// The answers not yet sent, so that on shutdown each closes its connection rather than keep it alive.
const unanswered = new Set();
server.on('request', (_request, response) => {
  unanswered.add(response);
  response.once('close', () => unanswered.delete(response));
});

/**
 * On SIGINT and SIGTERM: stops taking connections, closes the idle ones and lets the requests in
 * flight finish (those still open after DRAIN_MS are cut), then closes the JWKS server and exits
 * with code 0 (1 when closing failed).
 */
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  for (const response of unanswered) if (!response.headersSent) response.shouldKeepAlive = false;
  const cut = setTimeout(() => server.closeAllConnections(), DRAIN_MS).unref();
  server.close(() => {
    clearTimeout(cut);
    jwks.close().then(
      () => process.exit(0),
      (error) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
  server.closeIdleConnections();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
