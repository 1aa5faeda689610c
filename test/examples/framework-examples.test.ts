/**
 * The Express, Koa and Hono examples, end to end. Each is copied alone into an empty project whose
 * node_modules holds only the packages it imports (paygate-auth is this repository, on dist/),
 * started there as a child process, and driven with the token it prints; every answer is checked
 * against the OpenAPI document of the reference endpoints. Each refuses a PORT that is no port,
 * and on SIGTERM or SIGINT lets a request in flight finish, then exits with code 0.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../postgres/eventually.js';
import { PATIENCE_MS } from '../support/loaded-machine.js';
import { documentedFetch } from '../support/openapi.js';
import { postInFlight, refuses } from './in-flight.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const projects: string[] = [];
const children: ChildProcess[] = [];

const EXAMPLES = ['express', 'koa', 'hono'] as const;

const body = {
  amount: '40',
  currency: 'DKK',
  department: '//departments/radiology',
  shopper: '//customers/c-2002',
  phone: '+4512345678',
};

/** The packages a module imports: `express`, `@koa/router`, `paygate-auth` (for `paygate-auth/express`)… */
function importedPackages(source: string): string[] {
  const specifiers = [...source.matchAll(/^import\s[^'"]*['"]([^'"]+)['"]/gm)].map((match) => match[1] ?? '');
  return [
    ...new Set(
      specifiers.map((specifier) =>
        specifier
          .split('/')
          .slice(0, specifier.startsWith('@') ? 2 : 1)
          .join('/'),
      ),
    ),
  ];
}

/** An empty project holding the example as `server.mjs` and links to the packages it imports. */
function copyIntoEmptyProject(example: string): string {
  const project = mkdtempSync(join(tmpdir(), `paygate-${example}-example-`));
  projects.push(project);
  const source = readFileSync(join(root, 'examples', example, 'server.mjs'), 'utf8');
  writeFileSync(join(project, 'server.mjs'), source);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: `${example}-example`, private: true, type: 'module' }));
  for (const name of importedPackages(source)) {
    const link = join(project, 'node_modules', name);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(name === 'paygate-auth' ? root : join(root, 'node_modules', name), link, 'dir');
  }
  return project;
}

/** The example running in `cwd` (a project of {@link copyIntoEmptyProject}) with `PORT` set. */
function run(cwd: string, port: string): { child: ChildProcess; exited: Promise<number | null>; output: () => string } {
  const child = spawn(process.execPath, ['server.mjs'], {
    cwd,
    env: { ...process.env, PORT: port },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  const read = (chunk: Buffer): void => {
    output += chunk.toString();
  };
  child.stdout?.on('data', read);
  child.stderr?.on('data', read);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

/** A started example: its process, address and the token it prints. */
interface Started {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  readonly url: string;
  readonly port: number;
  readonly token: string;
}

/** Starts the example in its project (a new one unless `cwd` is given); resolves once it printed its address and token. */
async function start(example: string, cwd = copyIntoEmptyProject(example)): Promise<Started> {
  const { child, exited, output } = run(cwd, '0');
  let url: string | undefined;
  let token: string | undefined;
  await eventually(`the ${example} example prints its address and a token`, () => {
    if (child.exitCode !== null) throw new Error(`${example} exited with ${child.exitCode}:\n${output()}`);
    url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output())?.[1];
    token = /Authorization: Bearer ([A-Za-z0-9_.-]+)"/.exec(output())?.[1];
    return url !== undefined && token !== undefined;
  });
  return { child, exited, url: url as string, port: Number(new URL(url as string).port), token: token as string };
}

beforeAll(() => {
  if (!existsSync(join(root, 'dist', 'express', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` first');
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
  for (const project of projects) rmSync(project, { recursive: true, force: true });
});

describe.each(EXAMPLES)('the %s example', (example) => {
  let url = '';
  let token = '';
  beforeAll(async () => {
    ({ url, token } = await start(example));
  });

  it('imports packages only, no file of this repository', () => {
    const source = readFileSync(join(root, 'examples', example, 'server.mjs'), 'utf8');
    const specifiers = [...source.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((match) => match[1] ?? '');
    expect(specifiers.length).toBeGreaterThan(3);
    expect(specifiers.filter((specifier) => specifier.startsWith('.') || specifier.startsWith('/'))).toEqual([]);
  });

  it('answers GET /info/ for the token it prints and 401 without one', async () => {
    const info = await documentedFetch(`${url}/info/`, { headers: { authorization: `Bearer ${token}` } });
    expect(info.status).toBe(200);
    expect(await info.json()).toMatchObject({ tenant_ern: 'ern:demo/tenants/clinic-1', tenant_name: 'Demo Clinic' });
    const missing = await documentedFetch(`${url}/info/`);
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ code: 'missing_token' });
  });

  it('creates a payment link, replays it, and reads it back at its Location', async () => {
    const send = () =>
      documentedFetch(`${url}/payment-links/`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'idempotency-key': `${example}-1`,
        },
        body: JSON.stringify(body),
      });
    const created = await send();
    expect(created.status).toBe(201);
    const link = (await created.json()) as { id: string; amount: string; currency: string };
    expect(link).toMatchObject({ amount: '40.0000', currency: 'DKK' });
    const replayed = await send();
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(await replayed.json()).toEqual(link);
    const read = await documentedFetch(`${url}${created.headers.get('location')}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(await read.json()).toEqual(link);
  });

  it('answers a body that is not JSON with 415', async () => {
    const response = await documentedFetch(`${url}/payment-links/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
      body: 'amount=40',
    });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ code: 'unsupported_media_type' });
  });
});

describe.each(EXAMPLES)('the %s example on PORT and on shutdown', (example) => {
  let project = '';
  beforeAll(() => {
    project = copyIntoEmptyProject(example);
  });

  it.each(['http', '65536', '-1', '80.5', ' 80'])(
    'refuses PORT=%j with exit code 2 and one line naming PORT, the value found and the range',
    async (value) => {
      const { exited, output } = run(project, value);
      expect(await exited).toBe(2);
      const lines = output().trim().split('\n');
      expect(lines).toEqual([expect.stringMatching(/^PORT must be a port number \(0 for any free port\) from 0 to 65535, got /)]);
      expect(lines[0]).toContain(`got ${JSON.stringify(value)}`);
    },
    PATIENCE_MS,
  );

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'on %s stops taking connections, lets a request in flight finish, then exits with code 0',
    async (signal) => {
      const started = await start(example, project);
      const { send, answer } = await postInFlight(started.port, '/payment-links/', JSON.stringify(body), {
        authorization: `Bearer ${started.token}`,
      });
      started.child.kill(signal);
      await eventually(`the ${example} example stops taking connections`, () => refuses(started.port));
      send();
      const { status, connection, text } = await answer;
      expect(status).toBe(201);
      // Not kept alive for another request: the drain ends with the answer.
      expect(connection).toBe('close');
      expect(JSON.parse(text)).toMatchObject({ status: 'active', currency: 'DKK' });
      expect(await started.exited).toBe(0);
    },
    PATIENCE_MS,
  );
});
