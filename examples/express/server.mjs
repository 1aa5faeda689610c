/**
 * The reference handlers on Express, through paygate-auth/express (PORT, default 3001).
 *
 *   npm run build && node examples/express/server.mjs
 *   curl -s http://127.0.0.1:3001/info/ -H "Authorization: Bearer $(npm run -s example:token)"
 *
 * The request stream itself is handed to the payment-link handler, which checks Content-Type,
 * reads at most 64 KiB and parses the JSON: no body parser is mounted.
 */
import express from 'express';
import { IssuerRegistry, createVerifier } from 'paygate-auth';
import { auth } from 'paygate-auth/express';
import { createGetPaymentLinkHandler, createInfoHandler, createPaymentLinkHandler } from 'paygate-auth/payment-links';
import { AUDIENCE, PAY_PAGE_URL, demoDirectory, loadDemoKey, publishJwks } from '../gateway/demo.mjs';

/** Runs a reference handler for an Express request. */
const route = (handler) => async (req, res, next) => {
  try {
    const result = await handler({ auth: req.auth, headers: req.headers, body: req, params: req.params });
    res.status(result.status).set(result.headers).send(JSON.stringify(result.body));
  } catch (error) {
    next(error);
  }
};

const { key } = await loadDemoKey();
const jwks = await publishJwks(key);
const verifier = createVerifier({ registry: new IssuerRegistry([jwks.entry]), audience: AUDIENCE });
const createLink = createPaymentLinkHandler({ payPageUrl: PAY_PAGE_URL, directory: demoDirectory() });

const app = express();
app.use(auth({ verifier }));
app.get('/info/', route(createInfoHandler()));
app.post('/payment-links/', route(createLink));
app.get('/payment-links/:id', route(createGetPaymentLinkHandler({ store: createLink.store })));

const server = app.listen(Number(process.env.PORT ?? 3001), '127.0.0.1', () => {
  console.log(`Express example listening on http://127.0.0.1:${server.address().port} (tokens: npm run -s example:token)`);
});
const stop = () => {
  server.closeAllConnections();
  server.close();
  void jwks.server.close();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
