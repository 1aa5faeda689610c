/**
 * The load run (`npm run load`, examples/load/run.mjs) kept working: a two-second run against the
 * example gateway passes every check. The full run is its own npm script; this only keeps the script
 * honest.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PATIENCE_MS } from '../support/loaded-machine.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

function load(env: Record<string, string>, args: string[] = []) {
  return run(process.execPath, ['examples/load/run.mjs', ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    timeout: 2 * PATIENCE_MS,
  });
}

describe('the load run', () => {
  it(
    'drives the example gateway for two seconds and passes every check',
    async () => {
      if (!existsSync(join(root, 'dist', 'payment-links', 'index.js'))) {
        throw new Error('dist/ is missing: run `npm run build` (the global set-up of the tests does) before this test');
      }
      const { stdout } = await load({
        LOAD_SECONDS: '2',
        LOAD_WARMUP_SECONDS: '0',
        LOAD_CONNECTIONS: '8',
        LOAD_KEYS: '40',
      });
      expect(stdout).toMatch(/^load run: all checks passed$/m);
      expect(stdout).not.toMatch(/^FAIL /m);
      expect(stdout.match(/^PASS /gm)).toHaveLength(10);
      expect(stdout).toMatch(/^links: (\d+) created, \1 distinct ids, \1 distinct \(tenant, key\) pairs/m);
    },
    3 * PATIENCE_MS,
  );

  it('refuses a setting out of bounds, naming it, before starting anything', async () => {
    const failure = await load({}, ['--seconds', '0']).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toMatch(/--seconds \(LOAD_SECONDS\) must be a number from 1 to 600/);
  });
});
