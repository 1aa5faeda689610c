/**
 * The build and one `npm pack` for the whole test run (vitest `globalSetup`).
 *
 * First dist/ is built if its sources changed (examples/ensure-build.mjs, its progress on
 * stderr; one build at a time: a second run waits for it, then reuses it), here rather than
 * before vitest starts, so that the build overlaps the run's other
 * set-ups (test/support/side-by-side-setups.ts) and the type check vitest starts; a failed build
 * fails the run. Then the tarball of that build and its unpacked tree, which the packed-package,
 * consumer and shipped-documents tests share instead of packing and unpacking each on its own
 * (they read it through `packedPackage()` of packed-package.ts). Packs with `--ignore-scripts`, as
 * dist/ is current, and `prepack` (the build) is tested from a clean checkout in
 * test/package/prepack.test.ts.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import type {} from './packed-package.js';

const run = promisify(execFile);
const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

/** Builds dist/ when it is missing or its sources changed; rejects, naming the exit, if the build fails. */
async function ensureBuild(): Promise<void> {
  const child = spawn(process.execPath, [join(root, 'examples/ensure-build.mjs')], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  if (code !== 0)
    throw new Error(`building dist/ failed (examples/ensure-build.mjs ended with ${signal ?? `exit code ${code}`}): its output is above`);
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await ensureBuild();
  const workdir = await mkdtemp(join(tmpdir(), 'paygate-auth-packed-'));
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', workdir], {
    cwd: root,
  });
  const [{ filename, files }] = JSON.parse(stdout.slice(stdout.indexOf('['))) as [{ filename: string; files: { path: string }[] }];
  const tarball = join(workdir, filename);
  await run('tar', ['-xzf', tarball, '-C', workdir]);
  project.provide('packedPackage', {
    tarball,
    unpacked: join(workdir, 'package'),
    files: files.map((file) => file.path),
  });
  return () => rm(workdir, { recursive: true, force: true });
}
