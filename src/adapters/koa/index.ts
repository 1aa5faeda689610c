/**
 * paygate-auth/koa: `auth(options)` verifies each request and sets `ctx.state.auth`;
 * `requireScopes(...)` guards a route. Works with Koa 2 and 3; loads no framework code.
 *
 * @example
 * ```ts
 * app.use(auth({ verifier }));
 * router.post('/payments', requireScopes('pay:processPayments'), (ctx) => { ctx.body = ctx.state.auth?.tenant; });
 * ```
 *
 * @module paygate-auth/koa
 */
import type { Context, Middleware, Next } from 'koa';
import type { AuthContext } from '../../core/auth-context.js';
import { type AdapterOptions, refuseMountedFactory, resolveAdapterOptions } from '../../http/adapter-options.js';
import { type GateFailure, type GateResult, gateRequest, gateScopes } from '../../http/request-gate.js';
import { type RequireScopesArguments, requirementFromArguments } from '../../http/scope-arguments.js';

/** The state `auth()` adds: for apps that type their own state, `new Koa<MyState & AuthState>()`. */
export interface AuthState {
  /**
   * The verified caller, set by `auth()`; `null` where `auth()` let a request through unverified
   * (an allowed preflight); `undefined` where `auth()` has not run (middleware mounted before it,
   * or an app without it): through `DefaultState`, this type reaches every Koa app of the program.
   */
  auth?: AuthContext | null;
}

/**
 * The state after `requireScopes(...)`: the caller is verified (`@koa/router` routes and `app.use`
 * chains see it), except on a CORS preflight that `allowPreflight` let through, where it is `null`.
 */
export interface VerifiedState {
  auth: AuthContext;
}

declare module 'koa' {
  interface DefaultState extends AuthState {}
}

/** Options of {@link auth}: a verifier (or its options), `requiredScopes`, `realm`, `allowPreflight`, `forwardErrors`, `exposeHints`. */
export type AuthOptions = AdapterOptions;
export type { AuthContext, RequireScopesArguments };

function fail(failure: GateFailure, ctx: Context): void {
  if (failure.response === undefined) throw failure.error;
  ctx.status = failure.response.status;
  ctx.set(failure.response.headers);
  ctx.body = JSON.stringify(failure.response.body);
}

/** Middleware that verifies every request and sets `ctx.state.auth`; failures are answered (or thrown). */
export function auth(options: AuthOptions): Middleware<AuthState>;
export function auth(options: AuthOptions, ...mounted: unknown[]): Middleware<AuthState> {
  refuseMountedFactory('auth', 1 + mounted.length, 'app.use(auth({ verifier }))');
  const settings = resolveAdapterOptions('auth', options);
  const pass = (result: GateResult, ctx: Context, next: Next): Promise<unknown> | undefined => {
    if (!result.ok) {
      fail(result, ctx);
      return undefined;
    }
    ctx.state.auth = result.auth;
    return next();
  };
  return (ctx, next: Next) => {
    // A cached token is answered at once: the next middleware runs in this same call.
    const result = gateRequest(settings, ctx.req);
    return result instanceof Promise ? result.then((settled) => pass(settled, ctx, next)) : pass(result, ctx, next);
  };
}

/** Route middleware: several scopes are all needed; or one scope, array, `{ allOf }` or `{ anyOf }`. */
export function requireScopes(...scopes: RequireScopesArguments): Middleware<VerifiedState> {
  const requirement = requirementFromArguments(scopes);
  return (ctx, next: Next) => {
    const result = gateScopes(ctx.req, ctx.state.auth as AuthContext | null | undefined, requirement);
    if (!result.ok) return fail(result, ctx);
    return next();
  };
}
