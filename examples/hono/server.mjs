/**
 * The reference handlers on Hono (a Web fetch runtime), through paygate-auth/fetch, served on
 * Node by @hono/node-server (PORT, default 3003). The same `route` works in any fetch runtime:
 * Workers, Deno, Bun, Next.js route handlers.
 *
 *   npm run build && node examples/hono/server.mjs
 *   curl -s http://127.0.0.1:3003/info/ -H "Authorization: Bearer $(npm run -s example:token)"
 *
 * `request.body` (a ReadableStream) is handed to the payment-link handler, which checks
 * Content-Type, reads at most 64 KiB and parses the JSON.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { IssuerRegistry, createVerifier } from 'paygate-auth';
import { withAuth } from 'paygate-auth/fetch';
import { createGetPaymentLinkHandler, createInfoHandler, createPaymentLinkHandler } from 'paygate-auth/payment-links';
import { AUDIENCE, PAY_PAGE_URL, demoDirectory, loadDemoKey, publishJwks } from '../gateway/demo.mjs';

const { key } = await loadDemoKey();
const jwks = await publishJwks(key);
const verifier = createVerifier({ registry: new IssuerRegistry([jwks.entry]), audience: AUDIENCE });
const createLink = createPaymentLinkHandler({ payPageUrl: PAY_PAGE_URL, directory: demoDirectory() });

/** A fetch handler `(request, params) => Response` running a reference handler behind withAuth. */
const route = (handler) =>
  withAuth(async (request, auth, params) => {
    const result = await handler({ auth, headers: request.headers, body: request.body, params });
    return new Response(JSON.stringify(result.body), { status: result.status, headers: result.headers });
  }, { verifier });

const info = route(createInfoHandler());
const create = route(createLink);
const read = route(createGetPaymentLinkHandler({ store: createLink.store }));

const app = new Hono();
app.get('/info/', (c) => info(c.req.raw, {}));
app.post('/payment-links/', (c) => create(c.req.raw, {}));
app.get('/payment-links/:id', (c) => read(c.req.raw, { id: c.req.param('id') }));

const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: Number(process.env.PORT ?? 3003) }, (address) => {
  console.log(`Hono example listening on http://127.0.0.1:${address.port} (tokens: npm run -s example:token)`);
});
const stop = () => {
  server.close();
  void jwks.server.close();
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
