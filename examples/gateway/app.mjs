/**
 * The example gateway as a Web fetch handler, `(request, log) => Promise<Response>`, through the
 * paygate-auth/fetch adapter and the reference handlers of paygate-auth/payment-links.
 *
 *   GET  /info/               any valid token (default scope policy)
 *   POST /payment-links/      pay:processPayments, a private tenant
 *   GET  /payment-links/:id   pay:processPayments, a private tenant
 *   GET  /openapi.json        no token: the OpenAPI document of the three routes above
 *
 * Authentication comes first: the body is read only by a handler, after `withAuth` let the request
 * through, and only up to the handler's limit (`DEFAULT_MAX_BODY_BYTES`, 64 KiB; larger is 413).
 *
 * `log` is filled in for the request log: `tenant` once the token is verified, `code` when the
 * answer is a problem. Authentication failures are forwarded (`forwardErrors`) so that their code
 * can be logged; they are answered with `toErrorResponse`, as the adapter would.
 */
import { toErrorResponse } from 'paygate-auth';
import { withAuth } from 'paygate-auth/fetch';
import {
  DEFAULT_MAX_BODY_BYTES,
  createGetPaymentLinkHandler,
  createInfoHandler,
  createOpenApiDocument,
  createPaymentLinkHandler,
} from 'paygate-auth/payment-links';

const LINK_PATH = /^\/payment-links\/([^/]+)\/?$/;

function json(status, headers, body) {
  return new Response(JSON.stringify(body), { status, headers });
}

function problem(status, code, title, detail, extraHeaders = {}) {
  const headers = { 'content-type': 'application/problem+json', ...extraHeaders };
  return json(status, headers, { type: `urn:paygate-auth:problem:${code}`, title, status, detail, code });
}

/** A path segment decoded; as sent when its percent-escapes are malformed (no link has such an id). */
function decodeSegment(segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The methods of a path that reads: HEAD is GET without the body (node:http leaves the body out). */
const READ = 'GET, HEAD';

/** Finds the route of a request: `{ handler, params }`, `{ document }`, or a 404/405 response. */
function route(routes, method, pathname) {
  const reads = method === 'GET' || method === 'HEAD';
  if (pathname === '/openapi.json') return reads ? { document: routes.document } : { allow: READ };
  if (pathname === '/info' || pathname === '/info/') return reads ? { handler: routes.info } : { allow: READ };
  if (pathname === '/payment-links' || pathname === '/payment-links/')
    return method === 'POST' ? { handler: routes.create } : { allow: 'POST' };
  const match = LINK_PATH.exec(pathname);
  if (match !== null) return reads ? { handler: routes.read, params: { id: decodeSegment(match[1]) } } : { allow: READ };
  return {};
}

/**
 * Creates the gateway. Every option but `verifier` goes to `createPaymentLinkHandler` (`payPageUrl`,
 * `directory`, and optionally `store`, `idempotency` (shared stores: see `stores.mjs`), `onLinkCreated`, …); the body limit is always
 * the handler's documented one.
 * @param {{ verifier: import('paygate-auth').Verifier } & import('paygate-auth/payment-links').PaymentLinkHandlerDeps} options
 */
export function createGateway({ verifier, ...links }) {
  // A handler's own 403 insufficient_scope reaches the verifier's onEvent, as the adapter's does.
  const { reportRefusal } = verifier;
  const create = createPaymentLinkHandler({ ...links, maxBodyBytes: DEFAULT_MAX_BODY_BYTES, reportRefusal });
  const routes = {
    info: createInfoHandler({ reportRefusal }),
    create,
    read: createGetPaymentLinkHandler({ store: create.store, reportRefusal }),
    // Served as it is: the paths are relative to this address.
    document: JSON.stringify(createOpenApiDocument({ maxBodyBytes: DEFAULT_MAX_BODY_BYTES })),
  };

  const authenticated = withAuth(
    async (request, auth, log, handler, params) => {
      log.tenant = auth.tenant.ern;
      const result = await handler({ auth, headers: request.headers, body: request.body, params });
      if (typeof result.body?.code === 'string') log.code = result.body.code;
      return json(result.status, result.headers, result.body);
    },
    { verifier, forwardErrors: true },
  );

  const gateway = async (request, log) => {
    const { pathname } = new URL(request.url);
    const found = route(routes, request.method, pathname);
    if (found.document !== undefined) return new Response(found.document, { headers: { 'content-type': 'application/json' } });
    if (found.handler === undefined) {
      log.code = found.allow === undefined ? 'not_found' : 'method_not_allowed';
      return found.allow === undefined
        ? problem(404, 'not_found', 'Not found', 'No such route. Try GET /info/, POST /payment-links/ or GET /openapi.json.')
        : problem(405, 'method_not_allowed', 'Method not allowed', `Use ${found.allow}.`, { allow: found.allow });
    }
    try {
      return await authenticated(request, log, found.handler, found.params);
    } catch (error) {
      const { status, headers, body } = toErrorResponse(error);
      log.code = body.code;
      if (status >= 500 && body.code === 'internal_error') console.error(error);
      return json(status, headers, body);
    }
  };
  return Object.assign(gateway, { store: create.store });
}
