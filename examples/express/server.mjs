/**
 * The reference payment-link handlers on Express, through paygate-auth/express. Stands alone:
 * copy this file into a project with `npm i paygate-auth express` and run `node server.mjs`
 * (PORT, default 3001). It prints a curl command with a token to try.
 *
 * The issuer here is a demo one from paygate-auth/testing (its JWKS on 127.0.0.1), so the example
 * needs nothing else; in a service, the registry lists the real issuers and their JWKS URLs.
 *
 * No body parser is mounted: the request stream itself is handed to the payment-link handler,
 * which checks Content-Type, reads at most 64 KiB, after authentication, and parses the JSON.
 */
import express from 'express';
import { IssuerRegistry, createVerifier } from 'paygate-auth';
import { auth } from 'paygate-auth/express';
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

/** Runs a reference handler for an Express request. */
const route = (handler) => async (req, res, next) => {
  try {
    const result = await handler({ auth: req.auth, headers: req.headers, body: req, params: req.params });
    res.status(result.status).set(result.headers).send(JSON.stringify(result.body));
  } catch (error) {
    next(error);
  }
};

const app = express();
app.use(auth({ verifier }));
app.get('/info/', route(createInfoHandler()));
app.post('/payment-links/', route(createLink));
app.get('/payment-links/:id', route(createGetPaymentLinkHandler({ store: createLink.store })));

const server = app.listen(Number(process.env.PORT ?? 3001), '127.0.0.1', async () => {
  const url = `http://127.0.0.1:${server.address().port}`;
  console.log(`Express example listening on ${url}`);
  console.log(`curl -s ${url}/info/ -H "Authorization: Bearer ${await issuer.token()}"`);
});
const stop = () => {
  server.closeAllConnections();
  server.close();
  void jwks.close();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
