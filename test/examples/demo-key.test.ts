/**
 * The example gateway's demo key (examples/gateway/demo.mjs): written crash-safely, and a damaged
 * key file (a crash of an older version, a hand edit) is named with its remedy, not a bare SyntaxError.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: the example is plain JavaScript, without declarations.
import { loadDemoKey } from '../../examples/gateway/demo.mjs';

const saved = process.env.PAYGATE_EXAMPLE_STATE_DIR;
const scratch: string[] = [];

function stateDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'paygate-demo-key-'));
  scratch.push(directory);
  process.env.PAYGATE_EXAMPLE_STATE_DIR = directory;
  return directory;
}

afterEach(() => {
  if (saved === undefined) delete process.env.PAYGATE_EXAMPLE_STATE_DIR;
  else process.env.PAYGATE_EXAMPLE_STATE_DIR = saved;
  for (const directory of scratch.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe('the demo key', () => {
  it('is written once, readable by its owner only, leaving no scratch file', async () => {
    const directory = stateDirectory();
    const first = await loadDemoKey();
    const again = await loadDemoKey();
    expect([first.created, again.created, again.key.kid]).toEqual([true, false, first.key.kid]);
    expect(statSync(first.file).mode & 0o777).toBe(0o600);
    expect(readdirSync(directory)).toEqual(['demo-key.json']);
  });

  it.each([
    ['empty', ''],
    ['cut short', '{"kid":"demo-2026-01-01","publicJwk":{'],
  ])('names a damaged (%s) key file and what to do, rather than a bare SyntaxError', async (_case, text) => {
    const directory = stateDirectory();
    const file = join(directory, 'demo-key.json');
    writeFileSync(file, text, { mode: 0o600 });
    const error = await loadDemoKey().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toContain('delete it');
  });
});
