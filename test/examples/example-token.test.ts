/**
 * `npm run example:token` (examples/gateway/token.mjs), as a developer types it: a value the
 * gateway would refuse is refused here, exit code 2, naming the option, the value found and the
 * rule, rather than a token minted to be refused later.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { PATIENCE_MS } from '../support/loaded-machine.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const stateDir = mkdtempSync(join(tmpdir(), 'paygate-example-token-'));

afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

function mint(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['examples/gateway/token.mjs', ...args],
      { cwd: root, env: { ...process.env, PAYGATE_EXAMPLE_STATE_DIR: stateDir }, timeout: PATIENCE_MS },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number((error as { code?: unknown }).code), stdout, stderr }),
    );
  });
}

describe('npm run example:token', () => {
  it.each([
    ['a --lifetime beyond a day', ['--lifetime', '90000'], '--lifetime', '"90000"'],
    ['a --lifetime that is no number', ['--lifetime', '1h'], '--lifetime', '"1h"'],
    ['a --tenant of another shape', ['--tenant', 'clinic 1'], '--tenant', '"clinic 1"'],
    ['a --user the gateway takes for no user id (its user_ern is refused)', ['--user', 'jane doe'], '--user', '"jane doe"'],
  ])('refuses %s with exit code 2, naming the option and the value found, printing no token', async (_label, args, option, found) => {
    const { code, stdout, stderr } = await mint(...args);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(option);
    expect(stderr).toContain(found);
  });

  it('escapes a bidirectional control in the --user it refuses, as the package quotes values', async () => {
    const { code, stderr } = await mint('--user', 'jane\u202edoe');
    expect(code).toBe(2);
    expect(stderr).toContain('got "jane\\u202edoe"');
    expect(stderr).not.toContain('\u202e');
  });

  it('mints a token for a --user id', async () => {
    const { code, stdout } = await mint('--user', 'jane.doe-1');
    expect(code).toBe(0);
    const claims = JSON.parse(Buffer.from(stdout.trim().split('.')[1] ?? '', 'base64url').toString('utf8')) as { user_ern?: string };
    expect(claims.user_ern).toBe('//users/jane.doe-1');
  });
});
