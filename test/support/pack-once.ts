/**
 * One `npm pack` for the whole test run (vitest `globalSetup`): the tarball of the current build
 * and its unpacked tree, which the packed-package, consumer and shipped-documents tests share
 * instead of packing and unpacking each on its own (they read it through `packedPackage()` of
 * packed-package.ts). Packs with `--ignore-scripts`: `npm test`'s `pretest` has made dist/
 * current, and `prepack` (the build) is tested from a clean checkout in
 * test/package/prepack.test.ts. Without dist/ nothing is packed and those tests are skipped.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import type {} from './packed-package.js';

const run = promisify(execFile);
const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (!existsSync(join(root, 'dist/index.js'))) {
    project.provide('packedPackage', null);
    return undefined;
  }
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
