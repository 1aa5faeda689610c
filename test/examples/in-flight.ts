/**
 * Driving an example server's shutdown from a test: whether its port still takes connections,
 * and a request held in flight until the test sends its body.
 */
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { connect } from 'node:net';

/** `true` once `port` on 127.0.0.1 refuses new connections. */
export function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** The answer to a request in flight: its status, its `Connection` header and its body. */
export interface InFlightAnswer {
  readonly status: number;
  readonly connection: string | undefined;
  readonly text: string;
}

/**
 * A POST of `body` as JSON to `path` on 127.0.0.1:`port`, sent with `Expect: 100-continue` on a
 * kept-alive connection: resolves once the server asked for the body (`100 Continue`: the request
 * is in its handler), with `send()`, which sends the body, and the answer to come.
 */
export function postInFlight(
  port: number,
  path: string,
  body: string,
  headers: Readonly<Record<string, string>>,
): Promise<{ send: () => void; answer: Promise<InFlightAnswer> }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        connection: 'keep-alive',
        expect: '100-continue',
      },
    });
    const answer = new Promise<InFlightAnswer>((done, failed) => {
      request.once('response', (response: IncomingMessage) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
        });
        response.once('end', () => done({ status: response.statusCode ?? 0, connection: response.headers.connection, text }));
        response.once('error', failed);
      });
      request.once('error', failed);
    });
    answer.catch(() => undefined);
    request.once('continue', () => resolve({ send: () => request.end(body), answer }));
    request.once('error', reject);
    request.flushHeaders();
  });
}
