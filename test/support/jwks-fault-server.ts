/**
 * A JWKS endpoint on 127.0.0.1 that misbehaves on demand: a closed port, slow answers, 500, 429
 * with `Retry-After`, invalid JSON, JSON without `keys`, an endless body, a redirect loop, a
 * connection reset mid-body, a server that flaps, an endless gzip bomb, an unknown
 * `Content-Encoding`, and headers or a body trickled a byte at a time (slowloris). It serves a test issuer's JWKS otherwise, and
 * counts requests and how many are open at once.
 */
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import { createGzip } from 'node:zlib';
import type { IssuerEntry } from '../../src/index.js';
import type { TestIssuer } from '../../src/testing/index.js';
import { PATIENCE_MS } from './loaded-machine.js';

/** How the endpoint answers. */
export type JwksFault =
  | 'none'
  | 'slow'
  | 'status_500'
  | 'status_429'
  | 'invalid_json'
  | 'no_keys'
  | 'oversized'
  | 'redirect_loop'
  | 'reset_mid_body'
  | 'flapping'
  | 'compression_bomb'
  | 'unknown_encoding'
  | 'trickle_headers'
  | 'trickle_body'
  | 'unreachable';

/** Options of {@link serveFaultyJwks}. */
export interface FaultyJwksOptions {
  /** Milliseconds a `slow` answer waits before it is sent. @default 1000 */
  readonly slowMs?: number;
  /** `Retry-After` of a `status_429` answer, in seconds. @default 30 */
  readonly retryAfter?: number;
  /** Bytes an `oversized` body (decoded, for `compression_bomb`) stops at if nobody stops reading it first. @default 64 MiB */
  readonly streamCap?: number;
}

/** The endpoint and what it has seen. */
export interface FaultyJwks {
  readonly url: string;
  /** The issuer's registry entry, pointing at this endpoint. */
  readonly entry: IssuerEntry;
  readonly fault: JwksFault;
  /** Answers the next requests with `fault`; `unreachable` closes the port until another is set. */
  setFault(fault: JwksFault): Promise<void>;
  /** Requests received since the last {@link reset}. */
  readonly requests: number;
  /** Requests whose connection is still open. */
  readonly active: number;
  /** The most requests ever open at once since the last {@link reset}. */
  readonly maxActive: number;
  /** Body bytes an `oversized` answer wrote (decoded bytes, for `compression_bomb`) before its connection closed. */
  readonly streamedBytes: number;
  /** `oversized` and `compression_bomb` answers whose connection the client closed before the body ended. */
  readonly abandonedStreams: number;
  /** Holds every answer until the returned function is called. */
  hold(): () => void;
  /** Zeroes the counters. */
  reset(): void;
  /** Resolves once no request is open; rejects when one is still open after PATIENCE_MS. */
  idle(): Promise<void>;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

const JSON_TYPE = { 'content-type': 'application/json' } as const;

/** Serves `issuer`'s JWKS (as it is at each request) with the faults of {@link JwksFault}. */
export async function serveFaultyJwks(issuer: TestIssuer, options: FaultyJwksOptions = {}): Promise<FaultyJwks> {
  const slowMs = options.slowMs ?? 1000;
  const retryAfter = options.retryAfter ?? 30;
  const streamCap = options.streamCap ?? 64 * 1024 * 1024;
  let fault: JwksFault = 'none';
  let requests = 0;
  let active = 0;
  let maxActive = 0;
  let flaps = 0;
  let streamedBytes = 0;
  let abandonedStreams = 0;
  let gate: Promise<void> = Promise.resolve();

  const document = (): string => JSON.stringify(issuer.jwks);

  const slow = (response: ServerResponse): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (!response.destroyed) response.writeHead(200, JSON_TYPE).end(document());
        resolve();
      }, slowMs);
      response.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });

  const stream = (response: ServerResponse): void => {
    const chunk = Buffer.alloc(16 * 1024, 0x20);
    let closed = false;
    response.once('close', () => {
      closed = true;
      if (!response.writableFinished) abandonedStreams += 1;
    });
    response.writeHead(200, JSON_TYPE);
    response.write('{"keys":[');
    const pump = (): void => {
      while (!closed && streamedBytes < streamCap) {
        streamedBytes += chunk.byteLength;
        if (!response.write(chunk)) {
          response.once('drain', pump);
          return;
        }
      }
      if (!closed) response.end(']}');
    };
    pump();
  };

  /** `oversized` in gzip: spaces compressed as they are written, about 1000 decoded bytes per byte sent. */
  const bomb = (response: ServerResponse): void => {
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const gzip = createGzip({ level: 9 });
    let closed = false;
    response.once('close', () => {
      closed = true;
      if (!response.writableFinished) abandonedStreams += 1;
      gzip.destroy();
    });
    response.writeHead(200, { ...JSON_TYPE, 'content-encoding': 'gzip' });
    gzip.pipe(response);
    gzip.write('{"keys":[],"padding":"');
    const pump = (): void => {
      while (!closed && streamedBytes < streamCap) {
        streamedBytes += chunk.byteLength;
        if (!gzip.write(chunk)) {
          gzip.once('drain', pump);
          return;
        }
      }
      if (!closed) gzip.end('"}');
    };
    pump();
  };

  /** Writes `text` to the raw connection a byte every 100 ms, until it is written or the client leaves. */
  const trickle = (request: IncomingMessage, response: ServerResponse, text: string): void => {
    const socket = request.socket;
    let sent = 0;
    const timer = setInterval(() => {
      if (sent >= text.length || socket.destroyed) {
        clearInterval(timer);
        socket.end();
        return;
      }
      socket.write(text.slice(sent, sent + 1));
      sent += 1;
    }, 100);
    response.once('close', () => clearInterval(timer));
  };
  const head = (body: string): string =>
    `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Padding: ${'.'.repeat(300)}\r\nConnection: close\r\n\r\n`;

  const resetMidBody = (request: IncomingMessage, response: ServerResponse): void => {
    const body = document();
    response.writeHead(200, { ...JSON_TYPE, 'content-length': Buffer.byteLength(body) });
    response.write(body.slice(0, Math.floor(body.length / 2)), () => {
      const socket = request.socket as typeof request.socket & { resetAndDestroy?: () => void };
      if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
      else socket.destroy();
    });
  };

  const answer = async (request: IncomingMessage, response: ServerResponse, current: JwksFault): Promise<boolean> => {
    switch (current) {
      case 'none':
      case 'unreachable':
        return false;
      case 'slow':
        await slow(response);
        return true;
      case 'status_500':
        response.writeHead(500, { 'content-type': 'text/plain' }).end('internal error');
        return true;
      case 'status_429':
        response.writeHead(429, { 'retry-after': String(retryAfter) }).end();
        return true;
      case 'invalid_json':
        response.writeHead(200, JSON_TYPE).end('{"keys": [');
        return true;
      case 'no_keys':
        response.writeHead(200, JSON_TYPE).end('{"kids": []}');
        return true;
      case 'oversized':
        stream(response);
        return true;
      case 'redirect_loop':
        response.writeHead(302, { location: request.url ?? '/' }).end();
        return true;
      case 'reset_mid_body':
        resetMidBody(request, response);
        return true;
      case 'compression_bomb':
        bomb(response);
        return true;
      case 'unknown_encoding':
        response.writeHead(200, { ...JSON_TYPE, 'content-encoding': 'x-squeeze' }).end(document());
        return true;
      case 'trickle_headers':
        trickle(request, response, head(document()) + document());
        return true;
      case 'trickle_body': {
        const body = document();
        request.socket.write(head(body));
        trickle(request, response, body);
        return true;
      }
      case 'flapping':
        flaps += 1;
        return flaps % 2 === 1 ? answer(request, response, 'status_500') : false;
    }
  };

  const server = createServer((request, response) => {
    requests += 1;
    active += 1;
    maxActive = Math.max(maxActive, active);
    response.once('close', () => {
      active -= 1;
    });
    void (async () => {
      await gate;
      if (await answer(request, response, fault)) return;
      response.writeHead(200, JSON_TYPE).end(document());
    })().catch(() => response.destroy());
  });
  let listening = false;
  const listen = (port: number): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        listening = true;
        resolve();
      });
    });
  const stop = (): Promise<void> =>
    new Promise<void>((resolve) => {
      if (!listening) return resolve();
      listening = false;
      server.closeAllConnections();
      server.close(() => resolve());
    });
  await listen(0);
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The JWKS server has no TCP address');
  const port = address.port;
  const url = `http://127.0.0.1:${port}/.well-known/jwks.json`;

  return {
    url,
    entry: { ...issuer.entry, jwksUri: url },
    get fault() {
      return fault;
    },
    async setFault(next: JwksFault) {
      if (next === 'unreachable' && listening) await stop();
      if (next !== 'unreachable' && !listening) await listen(port);
      fault = next;
    },
    get requests() {
      return requests;
    },
    get active() {
      return active;
    },
    get maxActive() {
      return maxActive;
    },
    get streamedBytes() {
      return streamedBytes;
    },
    get abandonedStreams() {
      return abandonedStreams;
    },
    hold() {
      let release: () => void = () => undefined;
      gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      return () => {
        gate = Promise.resolve();
        release();
      };
    },
    reset() {
      requests = 0;
      maxActive = active;
      flaps = 0;
      streamedBytes = 0;
      abandonedStreams = 0;
    },
    async idle() {
      const deadline = Date.now() + PATIENCE_MS;
      while (active > 0) {
        if (Date.now() > deadline) throw new Error(`${active} request(s) still open after ${PATIENCE_MS} ms`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    close: stop,
  };
}

/** A loopback URL nothing listens on (a port opened, then closed). */
export async function refusedUrl(): Promise<string> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return `http://127.0.0.1:${address.port}/.well-known/jwks.json`;
}
