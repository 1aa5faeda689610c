/**
 * The example gateway, end to end: started as a child process (as `npm run example` starts it,
 * on dist/ built beforehand), driven with fetch over 127.0.0.1 with the tokens it prints, every
 * answer checked against the OpenAPI document it serves; and by a client generated from that
 * document (openapi-typescript, openapi-fetch).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_BODY_BYTES, createOpenApiDocument } from '../../src/payment-links/index.js';
import { LOADED_MARGIN_MS, PATIENCE_MS } from '../support/loaded-machine.js';
import { documentedFetch, expectDocumented } from '../support/openapi.js';
import type { components, paths } from './openapi-types.js';
import { TYPES_FILE, renderOpenApiTypes } from './openapi-types.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const stateDir = mkdtempSync(join(tmpdir(), 'paygate-example-'));
const env = { ...process.env, PORT: '0', PAYGATE_EXAMPLE_STATE_DIR: stateDir };

let child: ChildProcess | undefined;
let output = '';
let gateway = '';
let infoToken = '';
let linkToken = '';
let printedBody: Record<string, unknown> = {};

/** Waits for `pattern` in the output; a server that exits first fails at once, naming its output. */
function waitFor(pattern: RegExp, timeoutMs = PATIENCE_MS): Promise<void> {
  return new Promise((resolve, reject) => {
    const stop = (error?: Error): void => {
      clearTimeout(timer);
      child?.stdout?.off('data', check);
      child?.off('exit', exited);
      if (error === undefined) resolve();
      else reject(error);
    };
    const timer = setTimeout(() => stop(new Error(`timed out waiting for ${pattern}; output so far:\n${output}`)), timeoutMs);
    const check = (): void => {
      if (pattern.test(output)) stop();
    };
    const exited = (code: number | null): void => stop(new Error(`the server exited (${code}) before ${pattern}; its output:\n${output}`));
    child?.stdout?.on('data', check);
    child?.on('exit', exited);
    check();
  });
}

function logLines(): string[] {
  return output.split('\n').filter((line) => /^\d{4}-\d\d-\d\dT\S+Z (GET|POST|PUT|DELETE) /.test(line));
}

async function post(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return documentedFetch(`${gateway}/payment-links/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${linkToken}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  if (!existsSync(join(root, 'dist', 'payment-links', 'index.js'))) {
    throw new Error('dist/ is missing: run `npm run build` (the global set-up of the tests does) before this test');
  }
  child = spawn(process.execPath, ['examples/gateway/server.mjs'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  await waitFor(/^Request log/m);
  gateway = /^ {2}gateway +(http:\/\/127\.0\.0\.1:\d+)$/m.exec(output)?.[1] ?? '';
  const tokens = [...output.matchAll(/Authorization: Bearer ([A-Za-z0-9_.-]+)"/g)].map((match) => match[1] ?? '');
  [infoToken = '', linkToken = ''] = tokens;
  printedBody = JSON.parse(/ -d '(\{.*\})'$/m.exec(output)?.[1] ?? '{}') as Record<string, unknown>;
});

afterAll(async () => {
  if (child !== undefined && child.exitCode === null) {
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(stateDir, { recursive: true, force: true });
});

describe('the example gateway', () => {
  it('prints its address, curl commands with two tokens, and a sample body', () => {
    expect(gateway).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(infoToken.split('.')).toHaveLength(3);
    expect(linkToken.split('.')).toHaveLength(3);
    expect(printedBody).toMatchObject({ amount: '125.5', currency: 'EUR' });
    expect(output).toContain(`curl -s ${gateway}/info/`);
  });

  it('answers GET /info/ with the printed token', async () => {
    const response = await documentedFetch(`${gateway}/info/`, { headers: { authorization: `Bearer ${infoToken}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      tenant_ern: 'ern:demo/tenants/clinic-1',
      tenant_name: 'Demo Clinic',
      product: 'demo',
    });
  });

  it('creates a link, replays it, refuses a reused key and reports invalid fields', async () => {
    const key = crypto.randomUUID();
    const created = await post(printedBody, { 'idempotency-key': key });
    expect(created.status).toBe(201);
    const link = (await created.json()) as { id: string; amount: string; status: string; payment_url: string };
    expect(link).toMatchObject({ amount: '125.5000', status: 'active' });
    expect(link.payment_url).toMatch(/^https:\/\/pay\.example\/l\/[A-Za-z0-9_-]{32}$/);
    expect(created.headers.get('location')).toBe(`/payment-links/${link.id}`);

    const replayed = await post(printedBody, { 'idempotency-key': key });
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.headers.get('location')).toBe(created.headers.get('location'));
    expect(await replayed.json()).toEqual(link);

    const conflict = await post({ ...printedBody, amount: '99.00', payment_details: undefined }, { 'idempotency-key': key });
    expect(conflict.status).toBe(409);
    expect(await conflict.json()).toMatchObject({ code: 'idempotency_key_reused' });

    const invalid = await post({ ...printedBody, amount: '12,50', currency: 'eur', unknown: 1 });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('content-type')).toBe('application/problem+json');
    const problem = (await invalid.json()) as { code: string; errors: { field: string; code: string }[] };
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors.map(({ field, code }) => ({ field, code }))).toEqual([
      { field: 'amount', code: 'invalid_format' },
      { field: 'currency', code: 'invalid_format' },
      { field: 'unknown', code: 'unknown_field' },
    ]);

    const read = await documentedFetch(`${gateway}${created.headers.get('location')}`, {
      headers: { authorization: `Bearer ${linkToken}` },
    });
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual(link);
  });

  it('accepts tokens minted by npm run example:token in another process, and keeps tenants apart', async () => {
    const created = (await (await post(printedBody)).json()) as { id: string };
    const { stdout } = await promisify(execFile)(process.execPath, ['examples/gateway/token.mjs', '--tenant', 'clinic-2'], {
      cwd: root,
      env,
    });
    const otherTenant = stdout.trim();
    const info = await documentedFetch(`${gateway}/info/`, { headers: { authorization: `Bearer ${otherTenant}` } });
    expect(await info.json()).toMatchObject({ tenant_ern: 'ern:demo/tenants/clinic-2' });
    const read = await documentedFetch(`${gateway}/payment-links/${created.id}`, {
      headers: { authorization: `Bearer ${otherTenant}` },
    });
    expect(read.status).toBe(404);
    const department = await documentedFetch(`${gateway}/payment-links/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${otherTenant}`, 'content-type': 'application/json' },
      body: JSON.stringify(printedBody),
    });
    expect(((await department.json()) as { errors: { field: string; code: string }[] }).errors).toContainEqual(
      expect.objectContaining({ field: 'department', code: 'not_found' }),
    );
  });

  it('answers 401 without a token and 403 for the public tenant', async () => {
    const missing = await documentedFetch(`${gateway}/info/`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="paygate"');
    const { stdout } = await promisify(execFile)(process.execPath, ['examples/gateway/token.mjs', '--tenant', 'public'], {
      cwd: root,
      env,
    });
    const response = await documentedFetch(`${gateway}/payment-links/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stdout.trim()}`, 'content-type': 'application/json' },
      body: JSON.stringify(printedBody),
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ code: 'public_tenant_not_allowed' });
  });

  it('logs one line per request with method, path, status, tenant and error code, never a token', async () => {
    // Each line is written before its response is sent; a pipe may still deliver it a little later.
    await waitFor(/ POST \/payment-links\/ 403 tenant=ern:demo\/tenants\/public code=public_tenant_not_allowed /);
    const before = logLines().length;
    await documentedFetch(`${gateway}/info/?access_token=secret`, { headers: { authorization: 'Bearer not.a.jwt' } });
    await waitFor(/ GET \/info\/ 401 tenant=- code=malformed_token /);
    const lines = logLines();
    expect(lines).toHaveLength(before + 1);
    expect(lines.at(-1)).toMatch(/ GET \/info\/ 401 tenant=- code=malformed_token \d+\.\dms$/);
    expect(lines.some((line) => / POST \/payment-links\/ 201 tenant=ern:demo\/tenants\/clinic-1 code=- /.test(line))).toBe(true);
    expect(
      lines.some((line) => / POST \/payment-links\/ 409 tenant=ern:demo\/tenants\/clinic-1 code=idempotency_key_reused /.test(line)),
    ).toBe(true);
    const log = lines.join('\n');
    for (const token of [infoToken, linkToken, 'not.a.jwt', 'secret']) expect(log).not.toContain(token);
  });

  it('logs a path of 10 000 characters cut to its first 200 (attack: a log line as long as the request head)', async () => {
    const path = `/${'a'.repeat(10_000)}`;
    // No operation of the document: a plain fetch.
    expect((await fetch(`${gateway}${path}`)).status).toBe(404);
    await waitFor(/ GET \/a+\S* 404 tenant=- code=not_found /);
    const line = logLines().find((entry) => entry.includes(' GET /aaaa'));
    expect(line).toContain(` GET ${path.slice(0, 200)}… 404 `);
    expect(line?.length).toBeLessThan(400);
  });

  describe('body limit', () => {
    const TWENTY_MB = 20 * 1024 * 1024;

    /** A POST /payment-links/ answer read with node:http, its body checked against the document. */
    async function readAnswer(response: IncomingMessage): Promise<{ status: number; body: { code: string; detail: string } }> {
      const chunks: Buffer[] = [];
      for await (const chunk of response) chunks.push(chunk as Buffer);
      const headers = Object.fromEntries(Object.entries(response.headers).map(([name, value]) => [name, String(value)]));
      const status = response.statusCode ?? 0;
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { code: string; detail: string };
      expectDocumented('createPaymentLink', { status, headers, body });
      return { status, body };
    }

    async function answered(response: IncomingMessage): Promise<number> {
      return (await readAnswer(response)).status;
    }

    /**
     * POSTs a JSON body of `size` bytes (`{}` and spaces) as a careful client does: declared whole
     * in `content-length`, sent in 64 KiB writes that wait for the connection to drain, and no more
     * once the answer has come. So the answer is read however slowly this machine uploads, rather
     * than lost when the gateway, having discarded the unread rest for its few seconds, closes the
     * connection under a client still sending.
     */
    async function postBytes(size: number, headers: Record<string, string>): Promise<{ status: number; code: string; detail: string }> {
      return new Promise((resolve, reject) => {
        let answer: Promise<unknown> | undefined;
        const request = httpRequest(`${gateway}/payment-links/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': String(size), ...headers },
        });
        request.on('response', (response) => {
          answer = readAnswer(response).then(({ status, body }) => {
            resolve({ status, code: body.code, detail: body.detail });
            request.destroy();
          }, reject);
        });
        request.on('error', (error) => {
          if (answer === undefined) reject(error);
        });
        const writable = () =>
          new Promise<void>((resume) => {
            const go = () => {
              request.off('drain', go).off('close', go);
              resume();
            };
            request.on('drain', go).on('close', go);
          });
        void (async () => {
          const spaces = Buffer.alloc(64 * 1024, 0x20);
          let sent = 0;
          while (sent < size && answer === undefined && !request.destroyed) {
            const piece = Buffer.from(spaces.subarray(0, Math.min(spaces.length, size - sent)));
            if (sent === 0) piece.write('{}', 0);
            sent += piece.length;
            if (!request.write(piece)) await writable();
          }
          if (sent >= size && !request.destroyed) request.end();
        })();
      });
    }

    it('answers a 20 MB body without a token with 401, not 413', async () => {
      expect(await postBytes(TWENTY_MB, {})).toMatchObject({ status: 401, code: 'missing_token' });
    });

    it('answers a 20 MB body with a forged token with 401', async () => {
      expect(await postBytes(TWENTY_MB, { authorization: 'Bearer not.a.jwt' })).toMatchObject({
        status: 401,
        code: 'malformed_token',
      });
    });

    it("answers a 20 MB body with a valid token with 413, naming the handler's limit", async () => {
      const answer = await postBytes(TWENTY_MB, { authorization: `Bearer ${linkToken}` });
      expect(answer).toMatchObject({ status: 413, code: 'payload_too_large' });
      expect(answer.detail).toContain(`${DEFAULT_MAX_BODY_BYTES} bytes`);
    });

    it("answers one byte over the handler's limit with 413", async () => {
      expect(await postBytes(DEFAULT_MAX_BODY_BYTES + 1, { authorization: `Bearer ${linkToken}` })).toMatchObject({
        status: 413,
        code: 'payload_too_large',
      });
    });

    it("reads a body of exactly the handler's limit (400 for its fields, not 413)", async () => {
      expect(await postBytes(DEFAULT_MAX_BODY_BYTES, { authorization: `Bearer ${linkToken}` })).toMatchObject({
        status: 400,
        code: 'validation_failed',
      });
    });

    it(
      'closes the connection of a client still sending an unread body 5 s after the answer (attack: a body that never ends)',
      async () => {
        const GRACE_MS = 5000;
        const { answeredAt, closedAt } = await new Promise<{ answeredAt: number; closedAt: number }>((resolve, reject) => {
          const { port } = new URL(gateway);
          const socket = connect(Number(port), '127.0.0.1');
          let answeredAt = 0;
          let trickle: NodeJS.Timeout | undefined;
          socket.once('connect', () => {
            socket.write(
              'POST /payment-links/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n',
            );
            // A kilobyte every 50 ms: never the whole body, always something more.
            trickle = setInterval(() => socket.write(Buffer.alloc(1024, 0x20)), 50);
          });
          socket.on('data', (chunk: Buffer) => {
            if (answeredAt === 0 && chunk.toString('latin1').startsWith('HTTP/1.1 401')) answeredAt = performance.now();
          });
          socket.on('error', () => undefined);
          socket.once('close', () => {
            clearInterval(trickle);
            if (answeredAt === 0) reject(new Error('closed before the answer'));
            else resolve({ answeredAt, closedAt: performance.now() });
          });
        });
        // Not at once (the rest is discarded for the grace), nor long after; a loaded client may read the answer late.
        expect(closedAt - answeredAt).toBeGreaterThan(GRACE_MS / 2);
        expect(closedAt - answeredAt).toBeLessThan(GRACE_MS + LOADED_MARGIN_MS);
      },
      PATIENCE_MS,
    );

    it('refuses a request without a token before asking for its body (no 100 Continue)', async () => {
      const outcome = await new Promise<{ status: number; continued: boolean }>((resolve, reject) => {
        let continued = false;
        const request = httpRequest(`${gateway}/payment-links/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': String(TWENTY_MB), expect: '100-continue' },
        });
        request.on('continue', () => {
          continued = true;
          request.end(Buffer.alloc(TWENTY_MB, 0x20));
        });
        request.on('response', (response) => {
          answered(response).then((status) => {
            resolve({ status, continued });
            request.destroy();
          }, reject);
        });
        request.on('error', reject);
        request.flushHeaders();
      });
      expect(outcome).toEqual({ status: 401, continued: false });
    });

    it('asks for the body of an authenticated request (100 Continue), then applies the limit', async () => {
      const outcome = await new Promise<{ status: number; continued: boolean }>((resolve, reject) => {
        let continued = false;
        const request = httpRequest(`${gateway}/payment-links/`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${linkToken}`,
            'content-type': 'application/json',
            'transfer-encoding': 'chunked',
            expect: '100-continue',
          },
        });
        request.on('continue', () => {
          continued = true;
          request.end(Buffer.alloc(DEFAULT_MAX_BODY_BYTES * 2, 0x20));
        });
        request.on('response', (response) => {
          answered(response).then((status) => resolve({ status, continued }), reject);
        });
        request.on('error', reject);
        request.flushHeaders();
      });
      expect(outcome).toEqual({ status: 413, continued: true });
    });
  });
});

describe('the OpenAPI document of the example gateway', () => {
  it('is served at /openapi.json without a token, as createOpenApiDocument() builds it', async () => {
    const response = await fetch(`${gateway}/openapi.json`);
    expect([response.status, response.headers.get('content-type')]).toEqual([200, 'application/json']);
    expect(await response.json()).toEqual(JSON.parse(JSON.stringify(createOpenApiDocument())));
  });

  it('answers HEAD as GET, with the length of the body it leaves out', async () => {
    const got = await fetch(`${gateway}/openapi.json`);
    const head = await fetch(`${gateway}/openapi.json`, { method: 'HEAD' });
    const length = Buffer.byteLength(await got.text());
    expect([head.status, head.headers.get('content-type'), Number(head.headers.get('content-length'))]).toEqual([
      200,
      'application/json',
      length,
    ]);
    expect(await head.text()).toBe('');
  });

  it('has the types of test/examples/openapi-types.ts, as openapi-typescript generates them now', async () => {
    const current = await renderOpenApiTypes(createOpenApiDocument());
    expect(readFileSync(TYPES_FILE, 'utf8'), 'stale: run `npm run openapi:types`').toBe(current);
  });

  describe('a client generated from it', () => {
    type LinkRequest = components['schemas']['LinkRequest'];
    const client = () => createClient<paths>({ baseUrl: gateway, fetch: (request: Request) => documentedFetch(request) });
    const body = (): LinkRequest => ({
      amount: '99.5',
      currency: 'DKK',
      department: '//departments/cardiology',
      shopper: '//customers/c-1001',
      email: 'jane@example.com',
      meta: { order_id: 'client-1' },
    });

    it('creates a link, and gets the same link back when it sends the same key and body again', async () => {
      const key = crypto.randomUUID();
      const headers = { authorization: `Bearer ${linkToken}` };
      const params = { header: { 'Idempotency-Key': key } };
      const created = await client().POST('/payment-links/', { params, headers, body: body() });
      expect(created.response.status).toBe(201);
      expect(created.data).toMatchObject({ amount: '99.5000', currency: 'DKK', status: 'active', meta: { order_id: 'client-1' } });
      const replayed = await client().POST('/payment-links/', { params, headers, body: body() });
      expect(replayed.response.headers.get('idempotent-replayed')).toBe('true');
      expect(replayed.data).toEqual(created.data);
      const read = await client().GET('/payment-links/{id}', { params: { path: { id: created.data?.id ?? '' } }, headers });
      expect(read.data).toEqual(created.data);
    });

    it('gets a 400 listing every invalid field', async () => {
      const { response, error } = await client().POST('/payment-links/', {
        headers: { authorization: `Bearer ${linkToken}` },
        body: { ...body(), amount: '12,50', email: 'not an address' },
      });
      expect(response.status).toBe(400);
      expect(error?.code).toBe('validation_failed');
      expect(error?.errors?.map(({ field, code }) => [field, code])).toEqual([
        ['amount', 'invalid_format'],
        ['email', 'invalid_format'],
      ]);
    });

    it('gets a 401 with a challenge, without a token', async () => {
      const { response, error } = await client().GET('/info/');
      expect([response.status, error?.code]).toEqual([401, 'missing_token']);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="paygate"');
    });
  });
});
