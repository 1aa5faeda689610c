/**
 * `npm pack` from a clean checkout: no dist/, as after `git clone`. `prepack` must build it, so
 * that the tarball holds the code every entry of `exports` names (it shipped 18 files and no code
 * when nothing built first). The checkout is a copy of the files git tracks (and untracked ones it
 * does not ignore), with this repository's node_modules linked in.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PATIENCE_MS } from '../support/loaded-machine.js';

const run = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Every file `exports`, `main`, `module`, `types` and `bin` of package.json name. */
function namedFiles(manifest: Record<string, unknown>): string[] {
  const found = new Set<string>();
  const walk = (value: unknown): void => {
    if (typeof value === 'string' && value.startsWith('./dist/')) found.add(value.slice(2));
    else if (typeof value === 'object' && value !== null) for (const inner of Object.values(value)) walk(inner);
  };
  walk([manifest.exports, manifest.main, manifest.module, manifest.types, manifest.bin]);
  return [...found].sort();
}

describe('npm pack from a clean checkout', () => {
  let checkout: string;
  let files: string[];
  let hadDist = true;
  let buildOutput = '';
  let packOutput = '';

  beforeAll(async () => {
    checkout = await mkdtemp(join(tmpdir(), 'paygate-auth-clean-'));
    const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: root,
      maxBuffer: 16 * 1024 * 1024,
    });
    for (const file of stdout.split('\0').filter((name) => name !== '')) {
      await mkdir(dirname(join(checkout, file)), { recursive: true });
      await cp(join(root, file), join(checkout, file)).catch((error: { code?: string }) => {
        if (error.code !== 'ENOENT') throw error; // deleted but not yet committed
      });
    }
    await symlink(join(root, 'node_modules'), join(checkout, 'node_modules'), 'dir');
    hadDist = existsSync(join(checkout, 'dist'));
    const packed = await run('npm', ['pack', '--json', '--pack-destination', checkout], {
      cwd: checkout,
      maxBuffer: 16 * 1024 * 1024,
    });
    packOutput = packed.stdout;
    // Standard output is npm's JSON report alone: the build writes to standard error.
    const [{ files: listed }] = JSON.parse(packed.stdout) as [{ files: { path: string }[] }];
    files = listed.map((file) => file.path);
    buildOutput = packed.stderr;
  }, 6 * PATIENCE_MS);

  afterAll(async () => {
    if (checkout !== undefined) await rm(checkout, { recursive: true, force: true });
  });

  it('prints only valid JSON on standard output for npm pack --json (tools read it)', () => {
    expect(() => JSON.parse(packOutput)).not.toThrow();
    expect(packOutput.trimStart().startsWith('[')).toBe(true);
  });

  it('starts without dist/', () => {
    expect(hadDist).toBe(false);
  });

  it('builds without a warning (no empty chunk, no entry mixing named and default exports)', () => {
    expect(buildOutput).toMatch(/Build success/);
    expect(buildOutput.split('\n').filter((line) => /warn|empty chunk|named and default exports/i.test(line))).toEqual([]);
  });

  it('builds through prepack and packs every file package.json names', async () => {
    const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
    const named = namedFiles(manifest);
    expect(named.length).toBeGreaterThan(30);
    expect(named.filter((file) => !files.includes(file))).toEqual([]);
  });
});
