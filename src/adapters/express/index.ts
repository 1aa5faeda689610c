/**
 * paygate-auth/express: `auth(options)` verifies each request and sets `req.auth`;
 * `requireScopes(...)` guards a route. Works with Express 4 and 5; loads no framework code.
 *
 * @example
 * ```ts
 * app.use(auth({ verifier }));
 * app.post('/payments', requireScopes('pay:processPayments'), (req, res) => res.json(req.auth?.tenant));
 * ```
 *
 * @module paygate-auth/express
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AuthContext } from '../../core/auth-context.js';
import { ConfigurationError } from '../../core/errors.js';
import { type AdapterOptions, refuseMountedFactory, resolveAdapterOptions } from '../../http/adapter-options.js';
import { type ErrorResponse, serializeErrorResponse } from '../../http/error-response.js';
import { type GateFailure, type GateResult, gateRequest, gateScopes } from '../../http/request-gate.js';
import { type RequireScopesArguments, requirementFromArguments } from '../../http/scope-arguments.js';

declare global {
  namespace Express {
    interface Request {
      /**
       * The verified caller, set by `auth()`; `null` where `auth()` let a request through unverified
       * (an allowed preflight); `undefined` where `auth()` has not run (a route mounted before it, or
       * an app without it): this type reaches every Express request of the program.
       */
      auth?: AuthContext | null;
    }
  }
}

/** Options of {@link auth}: a verifier (or its options), `requiredScopes`, `realm`, `allowPreflight`, `forwardErrors`, `exposeHints`. */
export type AuthOptions = AdapterOptions;
export type { AuthContext, RequireScopesArguments };

function send(res: Response, response: ErrorResponse): void {
  // Already answered (a timeout middleware, while the keys were loading): setting headers would
  // throw, and Express 4 leaves the rejection of the middleware's promise unhandled.
  if (res.headersSent) return;
  // Content-Length set here, as Koa and Fastify do: `end()` leaves a HEAD answer without it.
  const { status, headers, text } = serializeErrorResponse(response);
  res.status(status).set(headers).end(text);
}

function fail(failure: GateFailure, res: Response, next: NextFunction): void {
  if (failure.response === undefined) next(failure.error);
  else send(res, failure.response);
}

/** Middleware that verifies every request and sets `req.auth`; failures are answered (or forwarded). */
export function auth(options: AuthOptions): RequestHandler;
export function auth(options: AuthOptions, ...mounted: unknown[]): RequestHandler {
  refuseMountedFactory('auth', 1 + mounted.length, 'app.use(auth({ verifier }))');
  const settings = resolveAdapterOptions('auth', options);
  const pass = (result: GateResult, req: Request, res: Response, next: NextFunction): void => {
    if (!result.ok) {
      fail(result, res, next);
      return;
    }
    req.auth = result.auth;
    next();
  };
  return (req: Request, res: Response, next: NextFunction) => {
    // A cached token is answered at once: the next handler runs in this same call.
    const result = gateRequest(settings, req);
    if (result instanceof Promise) return result.then((settled) => pass(settled, req, res, next));
    pass(result, req, res, next);
  };
}

/** Route middleware: several scopes are all needed; or one scope, array, `{ allOf }` or `{ anyOf }`. */
export function requireScopes(...scopes: RequireScopesArguments): RequestHandler {
  const requirement = requirementFromArguments(scopes);
  return (req: Request, res: Response, next: NextFunction) => {
    const result = gateScopes(req, req.auth, requirement);
    if (!result.ok) return fail(result, res, next);
    next();
  };
}

/**
 * `req.auth` as the verified caller, for a route behind `auth()` and `requireScopes(...)`. Express's
 * types cannot carry what one middleware checked to the next handler, so `req.auth` stays
 * `AuthContext | null | undefined` there; this narrows it. Throws a `ConfigurationError` (500) when no
 * verification ran on `req`: `auth()` not mounted before it, or a CORS preflight that
 * `allowPreflight` let through, which `requireScopes` passes on with `req.auth` `null`.
 *
 * @example
 * ```ts
 * app.post('/payments', requireScopes('pay:processPayments'), (req, res) => res.json(authOf(req).tenant));
 * ```
 */
export function authOf(req: Request): AuthContext {
  const verified = req.auth;
  if (verified == null)
    throw new ConfigurationError('authOf: req.auth is not set: mount auth() before this route, and requireScopes(...) on it');
  return verified;
}
