/**
 * Example gateway processes on one real PostgreSQL, and the built command line, as an operator
 * runs them: for the tests of several instances behind a load balancer.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PATIENCE_MS } from '../support/loaded-machine.js';
import { eventually } from './eventually.js';
import { freePort } from './pg-server.js';

/** The repository. */
export const root = fileURLToPath(new URL('../..', import.meta.url));

/** One example gateway process, and all it has printed so far. */
export interface Gateway {
  readonly url: string;
  readonly child: ChildProcess;
  output: string;
}

/** An HTTP answer, its body parsed. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
}

/** What a command-line run ended with. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Throws unless dist/ holds the command line and `paygate-auth/postgres` (the example imports dist/). */
export function requireBuild(): void {
  if (!existsSync(join(root, 'dist', 'cli.js')) || !existsSync(join(root, 'dist', 'postgres', 'index.js'))) {
    throw new Error('dist/ is missing: run `npm run build` (the global set-up of the tests does) before this test');
  }
}

/** The last line of the banner the example gateway prints once started. */
const BANNER_END = 'Request log (method, path, status, tenant, error code):';

/**
 * Starts `examples/gateway/server.mjs` on a free port with `env` added to this process's
 * environment, and resolves once it answers `GET /info/` (401 without a token) and has printed its
 * banner. The process is pushed onto `children` as soon as it is spawned, for the caller to stop.
 */
export async function startGateway(env: Readonly<Record<string, string>>, children: ChildProcess[]): Promise<Gateway> {
  const port = await freePort();
  const child = spawn(process.execPath, ['examples/gateway/server.mjs'], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const gateway: Gateway = { url: `http://127.0.0.1:${port}`, child, output: '' };
  const keep = (chunk: string): void => {
    gateway.output += chunk;
  };
  child.stdout?.setEncoding('utf8').on('data', keep);
  child.stderr?.setEncoding('utf8').on('data', keep);
  await eventually(`the gateway on port ${port} answers`, async () => {
    if (child.exitCode !== null) throw new Error(`the gateway exited with ${child.exitCode}:\n${gateway.output}`);
    return fetch(`${gateway.url}/info/`).then(
      (response) => response.status === 401,
      () => false,
    );
  });
  // It answers before it prints its banner (which waits for the demo tokens): wait for the banner's end too.
  await eventually(`the gateway on port ${port} prints its banner`, () => gateway.output.includes(BANNER_END));
  return gateway;
}

/** Sends `signal` to the process, unless it has ended; resolves when it has. */
export function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  return exited;
}

/** Reads `response` whole: its status, headers and JSON body (`{}` when empty). */
export async function answer(response: Response): Promise<Answer> {
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
  };
}

/** `GET /info/` with `bearer`. */
export async function info(gateway: Gateway, bearer: string): Promise<Answer> {
  return answer(await fetch(`${gateway.url}/info/`, { headers: { authorization: `Bearer ${bearer}` } }));
}

/**
 * Runs the built command line on `databaseUrl` in `cwd` (default this process's), as
 * `npx paygate-auth …` does; resolves however it exits.
 */
export function paygateAuth(databaseUrl: string, args: readonly string[], cwd?: string): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(root, 'dist', 'cli.js'), ...args],
      { cwd, env: { ...process.env, DATABASE_URL: databaseUrl }, timeout: PATIENCE_MS },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
