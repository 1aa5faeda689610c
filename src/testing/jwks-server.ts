/**
 * A real JWKS endpoint on 127.0.0.1, for tests that must not depend on request interception.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describeValue, functionOption, optionNames, rejectUnknownOptions } from '../internal/index.js';

/** The members of {@link ServeJwksOptions}: any other is refused, naming the nearest. */
const SERVE_JWKS_OPTION_NAMES = optionNames<ServeJwksOptions>({ path: true, respond: true, onRequest: true });

/** A JWKS endpoint listening on loopback. */
export interface JwksServer {
  /** The JWKS URL (`http://127.0.0.1:<port><path>`). */
  readonly url: string;
  /** How many requests it has answered. */
  readonly requests: number;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/** Options of {@link serveJwks}. */
export interface ServeJwksOptions {
  /**
   * The path the JWKS is served at, starting with `/`; every other path is 404.
   * @default '/.well-known/jwks.json'
   */
  readonly path?: string | undefined;
  /**
   * Answers a request in place of the JWKS (to simulate a failing endpoint); return `false` to
   * serve the JWKS as usual.
   * @default undefined
   */
  readonly respond?: ((request: IncomingMessage, response: ServerResponse) => boolean | Promise<boolean>) | undefined;
  /**
   * Called on every request, before it is answered.
   * @default undefined
   */
  readonly onRequest?: (() => void) | undefined;
}

/** What a caller may take for an option of the server: it always listens on 127.0.0.1, at a port of its own. */
const ADDRESS_OPTIONS = ['port', 'host', 'hostname'] as const;

/**
 * Checks the options of {@link serveJwks} (or of `issuer.listen()`, `owner`), before any server starts.
 * @throws {TypeError} naming `owner`, the option at fault and the value found.
 */
export function checkServeJwksOptions(owner: string, options: unknown): void {
  if (typeof options === 'object' && options !== null) {
    for (const name of ADDRESS_OPTIONS) {
      const value: unknown = (options as Record<string, unknown>)[name];
      if (value === undefined) continue;
      throw new TypeError(
        `${owner}: ${name} is not an option, got ${describeValue(value)}: the server listens on 127.0.0.1 at an ephemeral port, ` +
          'so servers never clash; read its URL from the server returned (server.url, or issuer.jwksUri)',
      );
    }
  }
  rejectUnknownOptions(owner, options as object, SERVE_JWKS_OPTION_NAMES);
}

/**
 * Serves `document()` as a JWKS on 127.0.0.1 at an ephemeral port.
 * @throws {TypeError} naming the argument or option at fault, before any server starts.
 */
export async function serveJwks(document: () => unknown, options: ServeJwksOptions = {}): Promise<JwksServer> {
  if (typeof document !== 'function') {
    throw new TypeError(`serveJwks: document must be a function returning the JWKS (() => jwks), got ${describeValue(document)}`);
  }
  checkServeJwksOptions('serveJwks', options);
  const path = options.path ?? '/.well-known/jwks.json';
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw new TypeError(`serveJwks: path must start with "/", got ${describeValue(path)}`);
  }
  functionOption('serveJwks', 'respond', options.respond);
  functionOption('serveJwks', 'onRequest', options.onRequest);
  const { createServer } = await import('node:http');
  let requests = 0;
  const server = createServer((request, response) => {
    requests += 1;
    options.onRequest?.();
    void (async () => {
      if (options.respond !== undefined && (await options.respond(request, response))) return;
      if (request.method !== 'GET' || request.url !== path) {
        response.writeHead(404).end();
        return;
      }
      const body = JSON.stringify(document());
      response.writeHead(200, {
        'content-type': 'application/jwk-set+json',
        'content-length': Buffer.byteLength(body),
      });
      response.end(body);
    })().catch(() => response.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The JWKS server has no TCP address');
  return {
    url: `http://127.0.0.1:${address.port}${path}`,
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
