/**
 * Serves a fetch handler `(request, log) => Response` on node:http, with one log line per request:
 * time, method, path (no query string), status, tenant, error code and duration. The log never
 * holds a token: it is built from the `log` record the handler fills in, not from the request.
 */
import { createServer } from 'node:http';

/** Bodies above this are refused here, before the handler; the handler's own limit (64 KiB) is lower. */
const MAX_FORWARDED_BODY = 1_048_576;

function readBody(request) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let total = 0;
    request.on('data', (chunk) => {
      total += chunk.length;
      if (total > MAX_FORWARDED_BODY) {
        request.pause();
        resolve(null);
      } else chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function toHeaders(rawHeaders) {
  const headers = new Headers();
  for (let i = 0; i < rawHeaders.length; i += 2) headers.append(rawHeaders[i], rawHeaders[i + 1]);
  return headers;
}

async function toResponse(handler, request, origin, log) {
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
  const body = hasBody ? await readBody(request) : undefined;
  if (body === null) {
    log.code = 'payload_too_large';
    const detail = `The body is larger than ${MAX_FORWARDED_BODY} bytes.`;
    const problem = { type: 'urn:paygate-auth:problem:payload_too_large', title: 'Body too large', status: 413, detail, code: 'payload_too_large' };
    return new Response(JSON.stringify(problem), {
      status: 413,
      headers: { 'content-type': 'application/problem+json', connection: 'close' },
    });
  }
  const webRequest = new Request(new URL(request.url, origin), { method: request.method, headers: toHeaders(request.rawHeaders), body });
  return handler(webRequest, log);
}

/**
 * Listens on `host:port` (port 0: any free port) and resolves `{ url, close }` once listening.
 * @param {(request: Request, log: { tenant: string, code: string }) => Promise<Response>} handler
 */
export function serve(handler, { host = '127.0.0.1', port = 3000, logLine = (line) => console.log(line) } = {}) {
  const server = createServer(async (request, response) => {
    const started = performance.now();
    const log = { tenant: '-', code: '-' };
    let answer;
    try {
      answer = await toResponse(handler, request, `http://${host}`, log);
    } catch (error) {
      console.error(error);
      log.code = 'internal_error';
      const problem = { type: 'urn:paygate-auth:problem:internal_error', title: 'Internal server error', status: 500, detail: 'The gateway failed.', code: 'internal_error' };
      answer = new Response(JSON.stringify(problem), {
        status: 500,
        headers: { 'content-type': 'application/problem+json' },
      });
    }
    const payload = Buffer.from(await answer.arrayBuffer());
    const path = (request.url ?? '/').split('?')[0];
    const ms = (performance.now() - started).toFixed(1);
    logLine(`${new Date().toISOString()} ${request.method} ${path} ${answer.status} tenant=${log.tenant} code=${log.code} ${ms}ms`);
    response.writeHead(answer.status, { ...Object.fromEntries(answer.headers), 'content-length': payload.length });
    response.end(payload, () => {
      if (!request.complete) request.destroy();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: actual } = server.address();
      resolve({
        url: `http://${host}:${actual}`,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
