/**
 * The reference app every adapter test builds with its own framework, so that one table of cases
 * runs against all four adapters. Routes:
 *
 * - `GET /me`, `OPTIONS /me`: answer {@link describeAuth} of the request's auth.
 * - `GET /manage`, `OPTIONS /manage`: `requireScopes('pay:manageIntegration')`.
 * - `GET /both`: `requireScopes('pay:processPayments', 'hub:subscribe')` (all of).
 * - `GET /either`: `requireScopes({ anyOf: ['pay:chargeToken', 'hub:subscribe'] })`.
 * - `GET /boom`: the handler throws an {@link AppError}.
 * - `GET /unguarded`, `OPTIONS /unguarded`: `requireScopes('pay:processPayments')` where no
 *   verification ran.
 *
 * The app's own error handler answers with {@link appErrorResponse}.
 */
import { type RequestListener, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AuthContext } from '../../src/core/auth-context.js';
import { ConfigurationError, isAuthError } from '../../src/core/errors.js';
import type { AdapterOptions } from '../../src/http/adapter-options.js';
import type { ScopeRequirement } from '../../src/core/scopes.js';

export const ROUTE_SCOPES = {
  manage: ['pay:manageIntegration'],
  both: ['pay:processPayments', 'hub:subscribe'],
  either: [{ anyOf: ['pay:chargeToken', 'hub:subscribe'] }],
  unguarded: ['pay:processPayments'],
} as const satisfies Record<string, readonly [ScopeRequirement] | readonly string[]>;

/** The error the app's own handler throws: it must reach the app's error handler as it is. */
export class AppError extends Error {
  override readonly name = 'AppError';
  readonly status = 418;
}

/** What the reference routes answer: enough of the auth to tell who got through. */
export function describeAuth(auth: AuthContext | null | undefined): Record<string, unknown> {
  if (auth === null || auth === undefined) return { auth: auth === null ? null : 'undefined' };
  return { tenant: auth.tenant.ern, scopes: [...auth.scopes], frozen: Object.isFrozen(auth) };
}

/** The app's own error handler: forwarded auth failures and its own errors, told apart. */
export function appErrorResponse(error: unknown): { status: number; body: Record<string, unknown> } {
  if (isAuthError(error) || error instanceof ConfigurationError) {
    return { status: error.status, body: { forwarded: error.code, isAuthError: isAuthError(error) } };
  }
  const status = error instanceof AppError ? error.status : 500;
  return { status, body: { app: error instanceof Error ? error.message : String(error) } };
}

/** A reference app listening on 127.0.0.1. */
export interface RunningApp {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves a Node request listener (an Express app, a Koa callback) on 127.0.0.1 at an ephemeral port. */
export async function serveOnLoopback(listener: RequestListener): Promise<RunningApp> {
  const server = createServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One framework's adapter, as the shared table drives it. */
export interface AdapterHarness {
  readonly name: string;
  /** Starts the reference app with the adapter configured by `options`. */
  start(options: AdapterOptions): Promise<RunningApp>;
  /** Makes the adapter's middleware (or registers its plugin) with `options`, and nothing else. */
  create(options: unknown): unknown;
  /** The adapter's `requireScopes`. */
  requireScopes(...scopes: unknown[]): unknown;
}
