/**
 * The framework-neutral request and response of the reference handlers. Adapters, or a few lines
 * of glue, copy their framework's request into a {@link HandlerRequest} and the
 * {@link HandlerResponse} back out.
 */
import type { AuthContext } from '../index.js';

/**
 * Request headers: a Web `Headers`, or a record as Node (`req.headers`, `req.headersDistinct`),
 * Express, Fastify and Koa give it. Names are matched case-insensitively.
 */
export type HeadersLike = { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * A request as the handlers read it.
 *
 * `body` is best given raw, so that the handler itself decides content type, size and syntax:
 * - a `string`, `Uint8Array` or `ArrayBuffer`: the whole body;
 * - an async iterable of chunks (a Node `IncomingMessage`, a Web `ReadableStream`): read only up
 *   to the size limit, so an oversized body is refused without being buffered;
 * - `undefined` or `null`: no body.
 *
 * Where a framework has parsed the JSON already (Express `express.json()`, Fastify, Koa's body
 * parser), pass that value: the `Content-Type` is still checked, and the size through
 * `Content-Length` when the request has one. A parsed value that is a string is read as raw text.
 */
export interface HandlerRequest {
  /** The verified caller (`req.auth`, `request.auth`, `ctx.state.auth`); `null` where no verification ran. */
  readonly auth: AuthContext | null | undefined;
  readonly headers: HeadersLike;
  readonly body?: unknown;
  /** Path parameters (`id` for `GET /payment-links/:id`). */
  readonly params?: Readonly<Record<string, string | undefined>>;
}

/** A response, framework-neutral: `body` is a JSON value to serialise; header names are lower case. */
export interface HandlerResponse<Body = unknown> {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Body;
}

/** A reference handler. It resolves a response for every client fault, and rejects only on a server fault. */
export type Handler<Body = unknown> = (request: HandlerRequest) => Promise<HandlerResponse<Body>>;
