/**
 * The example gateway's shutdown: SIGTERM (as an orchestrator sends it) stops taking connections,
 * lets the requests in flight finish, then closes the stores and exits with code 0; a request that
 * does not finish within the drain bound is cut then.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LOADED_MARGIN_MS, PATIENCE_MS } from '../support/loaded-machine.js';
import { eventually } from '../postgres/eventually.js';
import { postInFlight, refuses } from './in-flight.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const children: ChildProcess[] = [];
const scratch: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const directory of scratch.splice(0)) rmSync(directory, { recursive: true, force: true });
});

interface Started {
  readonly child: ChildProcess;
  readonly port: number;
  readonly linkToken: string;
  readonly body: string;
  readonly exited: Promise<number | null>;
  output(): string;
}

/** Starts the in-memory gateway with `env` added, and resolves once it printed its banner. */
async function startGateway(env: Record<string, string> = {}): Promise<Started> {
  if (!existsSync(join(root, 'dist', 'payment-links', 'index.js'))) {
    throw new Error('dist/ is missing: run `npm run build` (the global set-up of the tests does) before this test');
  }
  const stateDir = mkdtempSync(join(tmpdir(), 'paygate-shutdown-'));
  scratch.push(stateDir);
  const child = spawn(process.execPath, ['examples/gateway/server.mjs'], {
    cwd: root,
    env: { ...process.env, ...env, PORT: '0', PAYGATE_EXAMPLE_STATE_DIR: stateDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await eventually('the gateway prints its banner', () => {
    if (child.exitCode !== null) throw new Error(`the gateway exited with ${child.exitCode}:\n${output}`);
    return /^Request log/m.test(output);
  });
  const port = Number(/^ {2}gateway +http:\/\/127\.0\.0\.1:(\d+)$/m.exec(output)?.[1]);
  const linkToken = [...output.matchAll(/Authorization: Bearer ([A-Za-z0-9_.-]+)"/g)].map((match) => match[1] ?? '')[1] ?? '';
  const body = / -d '(\{.*\})'$/m.exec(output)?.[1] ?? '{}';
  return { child, port, linkToken, body, exited, output: () => output };
}

/**
 * A POST /payment-links/ held in flight: resolves once the gateway asked for its body (the
 * request is in its handler, authenticated), with `send()` and the answer to come.
 */
function linkRequestInFlight(gateway: Started): ReturnType<typeof postInFlight> {
  return postInFlight(gateway.port, '/payment-links/', gateway.body, {
    authorization: `Bearer ${gateway.linkToken}`,
    'idempotency-key': crypto.randomUUID(),
  });
}

describe('the example gateway on SIGTERM', () => {
  it('lets a request in flight finish, then exits with code 0', async () => {
    const gateway = await startGateway();
    const { send, answer } = await linkRequestInFlight(gateway);
    gateway.child.kill('SIGTERM');
    await eventually('the gateway stops taking connections', () => refuses(gateway.port));
    send();
    const { status, connection, text } = await answer;
    expect(status).toBe(201);
    // Not kept alive for another request: the drain ends with the answer.
    expect(connection).toBe('close');
    expect(JSON.parse(text)).toMatchObject({ status: 'active' });
    expect(await gateway.exited).toBe(0);
  });

  it(
    'cuts a request that does not finish within the drain bound, and exits with code 0',
    async () => {
      const DRAIN_MS = 1000;
      const gateway = await startGateway({ PAYGATE_SHUTDOWN_DRAIN_MS: String(DRAIN_MS) });
      const { answer } = await linkRequestInFlight(gateway);
      const signalled = performance.now();
      gateway.child.kill('SIGTERM');
      expect(await gateway.exited).toBe(0);
      expect(performance.now() - signalled).toBeLessThan(DRAIN_MS + LOADED_MARGIN_MS);
      await expect(answer).rejects.toThrow();
    },
    PATIENCE_MS,
  );

  it.each(['10s', '600001', '-1'])(
    'refuses PAYGATE_SHUTDOWN_DRAIN_MS=%s at start with exit code 2, naming it and its bound',
    async (value) => {
      const child = spawn(process.execPath, ['examples/gateway/server.mjs'], {
        cwd: root,
        env: { ...process.env, PORT: '0', PAYGATE_SHUTDOWN_DRAIN_MS: value },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      children.push(child);
      let stderr = '';
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(2);
      expect(stderr.trim().split('\n')).toEqual([expect.stringMatching(/^PAYGATE_SHUTDOWN_DRAIN_MS must be .* to 600000, got /)]);
      expect(stderr).toContain(JSON.stringify(value));
    },
  );
});
