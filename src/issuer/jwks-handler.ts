/**
 * Serves an issuer's JWKS from a web framework: a fetch handler (`Request` → `Response`: Hono,
 * Workers, Next route handlers), a Node handler (`http.createServer`, Express, Connect) and a
 * Fastify handler. Thin: each only writes {@link Issuer.jwks}'s document and headers. No framework
 * is imported.
 */
import type { Issuer } from './issuer.js';

/** The part of an issuer a JWKS handler reads. */
export type JwksSource = Pick<Issuer, 'jwks'>;

const ALLOW = 'GET, HEAD';

/** A handler for Web `Request`/`Response` runtimes. Answers GET and HEAD; anything else is 405. */
export function jwksFetchHandler(issuer: JwksSource): (request: Request) => Response {
  return (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return new Response(null, { status: 405, headers: { allow: ALLOW } });
    }
    const { document, headers } = issuer.jwks();
    return new Response(request.method === 'HEAD' ? null : JSON.stringify(document), { status: 200, headers });
  };
}

/** The members of Node's `IncomingMessage` the Node handler reads. */
export interface NodeRequestLike {
  readonly method?: string;
}

/** The members of Node's `ServerResponse` the Node handler calls. */
export interface NodeResponseLike {
  writeHead(status: number, headers: Record<string, string | number>): unknown;
  end(body?: string): unknown;
}

/**
 * A handler for `node:http` and the frameworks built on it: `app.get('/.well-known/jwks.json',
 * jwksNodeHandler(issuer))` in Express, or `http.createServer(jwksNodeHandler(issuer))`.
 */
export function jwksNodeHandler(issuer: JwksSource): (request: NodeRequestLike, response: NodeResponseLike) => void {
  return (request, response) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: ALLOW });
      response.end();
      return;
    }
    const { document, headers } = issuer.jwks();
    const body = JSON.stringify(document);
    response.writeHead(200, { ...headers, 'content-length': new TextEncoder().encode(body).byteLength });
    response.end(request.method === 'HEAD' ? undefined : body);
  };
}

/** The members of Fastify's reply the Fastify handler calls. */
export interface FastifyReplyLike {
  code(status: number): FastifyReplyLike;
  headers(values: Record<string, string>): FastifyReplyLike;
  send(payload?: string): unknown;
}

/**
 * A Fastify route handler: `fastify.get('/.well-known/jwks.json', jwksFastifyHandler(issuer))`
 * (Fastify answers HEAD for a GET route itself).
 */
export function jwksFastifyHandler(issuer: JwksSource): (request: unknown, reply: FastifyReplyLike) => FastifyReplyLike {
  return (_request, reply) => {
    const { document, headers } = issuer.jwks();
    reply.code(200).headers(headers).send(JSON.stringify(document));
    return reply;
  };
}
