/**
 * Serves an issuer's JWKS from a real HTTP server on 127.0.0.1 (through `jwksNodeHandler`), and
 * counts the downloads a verifier starts, so a test can wait for background reloads to finish.
 */
import { type Server, createServer } from 'node:http';
import type { FetchLike, VerifierEvent } from '../../src/index.js';
import { type JwksSource, jwksNodeHandler } from '../../src/issuer/index.js';

/** A JWKS endpoint on loopback. */
export interface LoopbackJwks {
  readonly url: string;
  close(): Promise<void>;
}

/** Serves `issuer.jwks()` at `http://127.0.0.1:<port>/.well-known/jwks.json`. */
export async function serveIssuerJwks(issuer: JwksSource): Promise<LoopbackJwks> {
  const handler = jwksNodeHandler(issuer);
  const server: Server = createServer((request, response) => {
    if (request.url !== '/.well-known/jwks.json') response.writeHead(404).end();
    else handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return {
    url: `http://127.0.0.1:${address.port}/.well-known/jwks.json`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Counts downloads started (through `fetch`) and finished (`jwks_fetch` events). */
export interface DownloadTracker {
  readonly fetch: FetchLike;
  readonly onEvent: (event: VerifierEvent) => void;
  readonly events: VerifierEvent[];
  /** Resolves once every download started has been reported. */
  settled(): Promise<void>;
}

export function trackDownloads(): DownloadTracker {
  let started = 0;
  let finished = 0;
  const events: VerifierEvent[] = [];
  const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
  return {
    fetch: (input, init) => {
      started += 1;
      return globalThis.fetch(input, init);
    },
    onEvent: (event) => {
      events.push(event);
      if (event.type === 'jwks_fetch') finished += 1;
    },
    events,
    async settled() {
      while (started > finished) await tick();
      await tick();
    },
  };
}
