/**
 * The example gateway's settings from the environment: every variable is checked before the
 * gateway opens anything, and one refused stops it with exit code 2 in one line naming the
 * variable (not the library option it sets), the value found, quoted, and the values accepted.
 * DATABASE_URL points at a listener that counts connections: a refused setting must reach none.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { type Server, type Socket, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quote } from '../../src/index.js';
import { PostgresIdempotencyStore, poolSettings } from '../../src/postgres/index.js';
import { PATIENCE_MS } from '../support/loaded-machine.js';
// @ts-expect-error: the example is plain JavaScript, without declarations.
import { TUNING } from '../../examples/gateway/settings.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

interface Rule {
  readonly variable: string;
  readonly fallback: number;
  readonly min: number;
  readonly max: number;
}

const RULES = TUNING as Record<string, Rule>;

let database: Server;
let databaseUrl: string;
let connections = 0;
let stateDir: string;
const sockets: Socket[] = [];

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'paygate-gateway-settings-'));
  database = createServer((socket) => {
    connections += 1;
    sockets.push(socket);
    socket.destroy();
  });
  await new Promise<void>((resolve) => database.listen(0, '127.0.0.1', resolve));
  const address = database.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  databaseUrl = `postgres://gateway:s3cret@127.0.0.1:${address.port}/payments`;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => database.close(resolve));
  rmSync(stateDir, { recursive: true, force: true });
});

/** Runs the gateway with `env` added, on the counting listener, until it exits. */
function runGateway(env: Readonly<Record<string, string>>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['examples/gateway/server.mjs'],
      {
        cwd: root,
        env: { ...process.env, PORT: '0', PAYGATE_EXAMPLE_STATE_DIR: stateDir, DATABASE_URL: databaseUrl, ...env },
        timeout: PATIENCE_MS,
      },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : ((error as { code?: unknown }).code as number | null), stdout, stderr }),
    );
  });
}

const TUNING_CASES = Object.values(RULES)
  .flatMap((rule) => [
    [rule.variable, String(rule.min - 1)],
    [rule.variable, String(rule.max + 1)],
    [rule.variable, '5s'],
  ])
  .filter(([, value]) => value !== '-1');

describe('the example gateway refusing a tuning variable', () => {
  it.each(TUNING_CASES)(
    'exits 2 for %s=%s in one line naming the variable, the value and the range, before connecting to the database',
    async (variable, value) => {
      const rule = Object.values(RULES).find((each) => each.variable === variable) as Rule;
      const before = connections;
      const run = await runGateway({ [variable]: value });
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      const lines = run.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]?.startsWith(`${variable} must be `)).toBe(true);
      expect(lines[0]).toContain(`from ${rule.min} to ${rule.max}`);
      expect(lines[0]).toContain(`got ${quote(value)}`);
      expect(connections).toBe(before);
    },
    PATIENCE_MS,
  );

  it('exits 2 for a PAYGATE_INSTANCE_NAME with a control character, quoting it escaped, before connecting', async () => {
    const before = connections;
    const run = await runGateway({ PAYGATE_INSTANCE_NAME: 'gw-1\u001b[2J' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^PAYGATE_INSTANCE_NAME must be 1 to 200 characters/);
    expect(run.stderr).toContain('got "gw-1\\u001b[2J"');
    expect(connections).toBe(before);
  });

  it('refuses a tuning variable even without DATABASE_URL, printing nothing else', async () => {
    const run = await runGateway({ DATABASE_URL: '', PAYGATE_HEARTBEAT_MS: '10' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^PAYGATE_HEARTBEAT_MS must be /);
    expect(run.stdout).toBe('');
  });
});

describe("the example gateway's tuning bounds", () => {
  const db = { query: async () => ({ rows: [], rowCount: 0 }) };
  const accepts = (option: string, build: (value: number) => unknown): void => {
    const rule = RULES[option] as Rule;
    for (const value of [rule.min, rule.max, rule.fallback]) expect(() => build(value)).not.toThrow();
    if (rule.min > 0) expect(() => build(rule.min - 1)).toThrow(TypeError);
    expect(() => build(rule.max + 1)).toThrow(TypeError);
  };

  it("are the idempotency store's leaseTime and pendingWait bounds", () => {
    accepts('leaseTime', (leaseTime) => new PostgresIdempotencyStore(db, { leaseTime }));
    accepts('pendingWait', (pendingWait) => new PostgresIdempotencyStore(db, { pendingWait }));
  });

  it("are poolSettings' statementTimeout and connectTimeout bounds", () => {
    accepts('statementTimeout', (statementTimeout) => poolSettings('postgres://127.0.0.1/db', { statementTimeout }));
    accepts('connectTimeout', (connectTimeout) => poolSettings('postgres://127.0.0.1/db', { connectTimeout }));
  });
});
