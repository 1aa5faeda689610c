/**
 * The Express, Koa and Hono examples, end to end: each started as a child process on dist/,
 * answering GET /info/ and POST /payment-links/ through its framework's adapter.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const stateDir = mkdtempSync(join(tmpdir(), 'paygate-examples-'));
const env = { ...process.env, PORT: '0', PAYGATE_EXAMPLE_STATE_DIR: stateDir };
const children: ChildProcess[] = [];
let token = '';

const body = {
  amount: '40',
  currency: 'DKK',
  department: '//departments/radiology',
  shopper: '//customers/c-2002',
  phone: '+4512345678',
};

async function start(example: string): Promise<string> {
  const child = spawn(process.execPath, [`examples/${example}/server.mjs`], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${example} did not start:\n${output}`)), 15_000);
    const read = (chunk: Buffer): void => {
      output += chunk.toString();
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
      if (url !== undefined) {
        clearTimeout(timer);
        resolve(url);
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => reject(new Error(`${example} exited with ${code}:\n${output}`)));
  });
}

beforeAll(async () => {
  if (!existsSync(join(root, 'dist', 'express', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  const { stdout } = await promisify(execFile)(process.execPath, ['examples/gateway/token.mjs'], { cwd: root, env });
  token = stdout.trim();
});

afterAll(async () => {
  await Promise.all(
    children.map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return undefined;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      return exited;
    }),
  );
  rmSync(stateDir, { recursive: true, force: true });
});

describe.each(['express', 'koa', 'hono'])('the %s example', (example) => {
  let url = '';
  beforeAll(async () => {
    url = await start(example);
  });

  it('answers GET /info/ for a minted token and 401 without one', async () => {
    const info = await fetch(`${url}/info/`, { headers: { authorization: `Bearer ${token}` } });
    expect(info.status).toBe(200);
    expect(await info.json()).toMatchObject({ tenant_ern: 'ern:demo/tenants/clinic-1' });
    const missing = await fetch(`${url}/info/`);
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ code: 'missing_token' });
  });

  it('creates a payment link, replays it, and reads it back at its Location', async () => {
    const send = () =>
      fetch(`${url}/payment-links/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': `${example}-1` },
        body: JSON.stringify(body),
      });
    const created = await send();
    expect(created.status).toBe(201);
    const link = (await created.json()) as { id: string; amount: string; currency: string };
    expect(link).toMatchObject({ amount: '40.0000', currency: 'DKK' });
    const replayed = await send();
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(await replayed.json()).toEqual(link);
    const read = await fetch(`${url}${created.headers.get('location')}`, { headers: { authorization: `Bearer ${token}` } });
    expect(await read.json()).toEqual(link);
  });

  it('answers a body that is not JSON with 415', async () => {
    const response = await fetch(`${url}/payment-links/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
      body: 'amount=40',
    });
    expect(response.status).toBe(415);
  });
});
