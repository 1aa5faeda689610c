/**
 * paygate-auth/testing/msw: the test issuers' JWKS as msw handlers, typed with msw's own types
 * (this subpath needs the optional peer `msw`; `paygate-auth/testing` does not), and an
 * `onUnhandledRequest` strategy that lets loopback requests through.
 *
 * @example
 * ```ts
 * const server = setupServer(...jwksHandlers(issuer));
 * server.listen({ onUnhandledRequest: errorExceptLoopback });
 * ```
 *
 * @module paygate-auth/testing/msw
 */
import { type HttpHandler, http } from 'msw';
import { describeValue, isLoopbackHost, quote } from '../internal/index.js';
import { type TestIssuer, issuerLink } from './test-issuer.js';

/** One msw handler per issuer, serving its JWKS at its msw URL and counting the requests (`jwksRequests`). */
export function jwksHandlers(...issuers: readonly TestIssuer[]): HttpHandler[] {
  const served = new Map<string, number>();
  return issuers.map((issuer, index) => {
    const link = issuerLink(issuer);
    if (link === undefined) {
      throw new TypeError(`jwksHandlers: issuers[${index}] must be a test issuer from createTestIssuer(), got ${describeValue(issuer)}`);
    }
    // msw answers a URL with its first handler: the second issuer's verifiers would get the first one's keys.
    const first = served.get(link.registeredJwksUri);
    if (first !== undefined) {
      throw new TypeError(
        `jwksHandlers: issuers[${index}] serves its JWKS at the URL of issuers[${first}], got ${quote(link.registeredJwksUri)} for both: ` +
          "msw would answer both with the first one's keys; give each createTestIssuer() its own issuer option (or jwksUri)",
      );
    }
    served.set(link.registeredJwksUri, index);
    return http.get(link.registeredJwksUri, () => link.respond());
  });
}

/**
 * msw's `onUnhandledRequest` strategy: like `'error'`, except that a request to a loopback host
 * (127.0.0.0/8, `localhost`, `[::1]`) passes through untouched: supertest's requests to the app
 * under test, the kit's `listen()` server, a dev database. With plain `'error'`, msw fails those
 * too ("Cannot bypass a request when using the "error" strategy").
 */
export function errorExceptLoopback(request: Request, print: { error(): void }): void {
  if (isLoopbackHost(new URL(request.url).hostname)) return;
  print.error();
}
