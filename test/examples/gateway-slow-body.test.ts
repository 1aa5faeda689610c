/**
 * The example gateway's server (examples/gateway/node-server.mjs) bounds how long a request may
 * take to arrive: an authenticated client dripping its body a byte at a time is answered 408 and
 * cut once `requestTimeoutMs` has passed, not held for Node's own 300 s.
 */
import { connect } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createTestIssuer, createTestVerifier } from '../../src/testing/index.js';
import { LOADED_MARGIN_MS } from '../support/loaded-machine.js';
// @ts-expect-error: the example is plain JavaScript, without declarations.
import { createGateway } from '../../examples/gateway/app.mjs';
// @ts-expect-error: the example is plain JavaScript, without declarations.
import { DEFAULT_REQUEST_TIMEOUT_MS, serve } from '../../examples/gateway/node-server.mjs';

/** The bound the test serves with, and how often Node looks for requests past it (ms). */
const REQUEST_TIMEOUT_MS = 1000;
const CHECK_EVERY_MS = 1000;

interface Served {
  readonly port: number;
  close(options?: { drainMs?: number }): Promise<void>;
}

/** Sends `head`, then one byte of body every `everyMs`; resolves what the server sent once it closes the connection. */
function drip(port: number, head: string, everyMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('error', reject);
    socket.write(head);
    const timer = setInterval(() => socket.writable && socket.write('{'), everyMs);
    socket.on('close', () => {
      clearInterval(timer);
      resolve(received);
    });
  });
}

describe('the example gateway and a body dripped slowly', () => {
  it('answers an authenticated request whose body is still arriving after requestTimeoutMs 408 and closes it', async () => {
    const issuer = await createTestIssuer({ product: 'demo', tenant: 'ern:demo/tenants/clinic-1' });
    await issuer.listen();
    onTestFinished(() => issuer.close());
    const gateway = createGateway({ verifier: createTestVerifier(issuer), payPageUrl: 'https://pay.example/l' });
    const served = (await serve(gateway, { port: 0, logLine: () => {}, requestTimeoutMs: REQUEST_TIMEOUT_MS })) as Served;
    onTestFinished(() => served.close({ drainMs: 0 }));
    const token = await issuer.token({ scope: 'pay:processPayments' });
    const head =
      'POST /payment-links/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      `Authorization: Bearer ${token}\r\nContent-Length: 60000\r\n\r\n`;
    const started = Date.now();
    const answer = await drip(served.port, head, 100);
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    // The bound, then Node's check for late requests (every second here), then the stated margin of a busy machine.
    expect(Date.now() - started).toBeLessThan(REQUEST_TIMEOUT_MS + CHECK_EVERY_MS + LOADED_MARGIN_MS);
  }, 20_000);

  it('gives a request 30 s to arrive by default', () => {
    expect(DEFAULT_REQUEST_TIMEOUT_MS).toBe(30_000);
  });
});
