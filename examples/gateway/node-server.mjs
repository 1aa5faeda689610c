/**
 * Serves a fetch handler `(request, log) => Response` on node:http, with one log line per request:
 * time, method, path (no query string, cut to 200 characters), status, tenant, error code and
 * duration. The log never holds a token: it is built from the `log` record the handler fills in,
 * not from the request.
 *
 * The body is not read here. It is handed on as a stream that reads from the connection only when
 * a handler reads it, so a request is authenticated before a byte of its body is read, and the
 * payment-link handler, which reads it after authentication, applies its own limit
 * (`DEFAULT_MAX_BODY_BYTES`, 64 KiB). A client that sends `Expect: 100-continue` is told to
 * send its body only when a handler asks for it. A body left unread (a refused request, or the
 * rest beyond the limit) is discarded after the answer, for a few seconds at most.
 */
import { createServer } from 'node:http';

function toHeaders(rawHeaders) {
  const headers = new Headers();
  for (let i = 0; i < rawHeaders.length; i += 2) headers.append(rawHeaders[i], rawHeaders[i + 1]);
  return headers;
}

/**
 * The request body as a Web stream that pulls one chunk from the connection per read, and none
 * before the first (no read-ahead). With `expectContinue`, the first read sends `100 Continue`.
 */
function lazyBody(request, response, expectContinue) {
  let chunks;
  return new ReadableStream(
    {
      async pull(controller) {
        if (chunks === undefined) {
          if (expectContinue) response.writeContinue();
          chunks = request[Symbol.asyncIterator]();
        }
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.byteLength));
      },
    },
    { highWaterMark: 0 },
  );
}

function toWebRequest(request, response, origin, expectContinue) {
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
  return new Request(new URL(request.url, origin), {
    method: request.method,
    headers: toHeaders(request.rawHeaders),
    ...(hasBody ? { body: lazyBody(request, response, expectContinue), duplex: 'half' } : {}),
  });
}

function internalError() {
  const problem = {
    type: 'urn:paygate-auth:problem:internal_error',
    title: 'Internal server error',
    status: 500,
    detail: 'The gateway failed.',
    code: 'internal_error',
  };
  return new Response(JSON.stringify(problem), {
    status: 500,
    headers: { 'content-type': 'application/problem+json' },
  });
}

/** Longest path written to the request log; a longer one is cut, marked with `…`. */
const MAX_LOGGED_PATH = 200;

/**
 * The request's path for the log: no query string, cut to {@link MAX_LOGGED_PATH} characters
 * (node:http has refused control and non-ASCII characters in it already).
 */
function loggedPath(url = '/') {
  const [path = '/'] = url.split('?');
  return path.length > MAX_LOGGED_PATH ? `${path.slice(0, MAX_LOGGED_PATH)}…` : path;
}

/** How long a body left unread is discarded after the answer, before the connection is closed. */
const UNREAD_BODY_GRACE_MS = 5_000;

/**
 * Sends `answer`. When the request's body was not read to its end, the rest is discarded (never
 * buffered) so that the client, still sending, can read the answer; after
 * {@link UNREAD_BODY_GRACE_MS} the connection is closed. While the server is `closing`, the
 * connection is closed after the answer.
 */
async function send(request, response, answer, closing) {
  const payload = Buffer.from(await answer.arrayBuffer());
  response.writeHead(answer.status, {
    ...Object.fromEntries(answer.headers),
    'content-length': payload.length,
    // Closing: the connection is not kept for another request, so the drain ends with the answer.
    ...(closing ? { connection: 'close' } : {}),
  });
  response.end(payload);
  if (request.complete) return;
  const timer = setTimeout(() => request.socket?.destroy(), UNREAD_BODY_GRACE_MS).unref();
  request.once('end', () => clearTimeout(timer)).once('close', () => clearTimeout(timer));
  request.resume();
}

/**
 * How long a request may take to arrive, head and body, by default: a client dripping its body a
 * byte at a time holds its connection (and the handler reading it) this long at most, not Node's
 * own 300 s. The handler's whole body (64 KiB) arrives well within it on any working link.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** How long `close()` lets the requests in flight finish, by default, before it cuts them. */
export const DEFAULT_DRAIN_MS = 10_000;

/**
 * Listens on `host:port` (port 0: any free port) and resolves `{ url, port, close }` once
 * listening; rejects with the listen error (`EADDRINUSE` when the port is taken). A request whose head
 * and body have not arrived within `requestTimeoutMs` (default {@link DEFAULT_REQUEST_TIMEOUT_MS}) is
 * answered 408 by Node and its connection closed. `close({ drainMs })`
 * stops taking connections, closes the idle ones, lets the requests in flight finish, and cuts
 * those still open after `drainMs` (default {@link DEFAULT_DRAIN_MS}); it resolves once every
 * connection is closed.
 * @param {(request: Request, log: { tenant: string, code: string }) => Promise<Response>} handler
 */
export function serve(
  handler,
  { host = '127.0.0.1', port = 3000, logLine = (line) => console.log(line), requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS } = {},
) {
  const answer = async (request, response, expectContinue) => {
    const started = performance.now();
    const log = { tenant: '-', code: '-' };
    let result;
    try {
      result = await handler(toWebRequest(request, response, `http://${host}`, expectContinue), log);
    } catch (error) {
      console.error(error);
      log.code = 'internal_error';
      result = internalError();
    }
    const path = loggedPath(request.url);
    const ms = (performance.now() - started).toFixed(1);
    logLine(`${new Date().toISOString()} ${request.method} ${path} ${result.status} tenant=${log.tenant} code=${log.code} ${ms}ms`);
    await send(request, response, result, !server.listening);
  };
  // Node cuts a request still arriving after requestTimeout (408), looking every connectionsCheckingInterval.
  const server = createServer(
    {
      requestTimeout: requestTimeoutMs,
      headersTimeout: Math.min(requestTimeoutMs, 60_000),
      connectionsCheckingInterval: Math.min(requestTimeoutMs, 1_000),
    },
    (request, response) => answer(request, response, false),
  );
  server.on('checkContinue', (request, response) => answer(request, response, true));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const { port: actual } = server.address();
      resolve({
        url: `http://${host}:${actual}`,
        port: actual,
        close: ({ drainMs = DEFAULT_DRAIN_MS } = {}) =>
          new Promise((done) => {
            const cut = setTimeout(() => server.closeAllConnections(), drainMs);
            server.close(() => {
              clearTimeout(cut);
              done();
            });
            server.closeIdleConnections();
          }),
      });
    });
  });
}
