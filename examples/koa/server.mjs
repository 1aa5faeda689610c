/**
 * The reference handlers on Koa, through paygate-auth/koa (PORT, default 3002).
 *
 *   npm run build && node examples/koa/server.mjs
 *   curl -s http://127.0.0.1:3002/info/ -H "Authorization: Bearer $(npm run -s example:token)"
 *
 * `ctx.req` (the request stream) is handed to the payment-link handler, which checks
 * Content-Type, reads at most 64 KiB and parses the JSON: no body parser is mounted.
 */
import Router from '@koa/router';
import Koa from 'koa';
import { IssuerRegistry, createVerifier } from 'paygate-auth';
import { auth } from 'paygate-auth/koa';
import { createGetPaymentLinkHandler, createInfoHandler, createPaymentLinkHandler } from 'paygate-auth/payment-links';
import { AUDIENCE, PAY_PAGE_URL, demoDirectory, loadDemoKey, publishJwks } from '../gateway/demo.mjs';

/** Runs a reference handler for a Koa context. */
const route = (handler) => async (ctx) => {
  const result = await handler({ auth: ctx.state.auth, headers: ctx.request.headers, body: ctx.req, params: ctx.params });
  ctx.status = result.status;
  ctx.set(result.headers);
  ctx.body = JSON.stringify(result.body);
};

const { key } = await loadDemoKey();
const jwks = await publishJwks(key);
const verifier = createVerifier({ registry: new IssuerRegistry([jwks.entry]), audience: AUDIENCE });
const createLink = createPaymentLinkHandler({ payPageUrl: PAY_PAGE_URL, directory: demoDirectory() });

const router = new Router();
router.get('/info/', route(createInfoHandler()));
router.post('/payment-links/', route(createLink));
router.get('/payment-links/:id', route(createGetPaymentLinkHandler({ store: createLink.store })));

const app = new Koa();
app.use(auth({ verifier }));
app.use(router.routes()).use(router.allowedMethods());

const server = app.listen(Number(process.env.PORT ?? 3002), '127.0.0.1', () => {
  console.log(`Koa example listening on http://127.0.0.1:${server.address().port} (tokens: npm run -s example:token)`);
});
const stop = () => {
  server.closeAllConnections();
  server.close();
  void jwks.server.close();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
