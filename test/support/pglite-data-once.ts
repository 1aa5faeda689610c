/**
 * PGlite's data directory for the run (vitest `globalSetup`): an empty database cluster that
 * every PGlite of the tests starts from (`createTestPglite()` of test/postgres/pglite.ts) instead
 * of running its own `initdb`. A PGlite made from scratch took about 6 s of CPU in a fresh
 * process, one loaded from this directory about 2.4 s, in each of the six files that use one.
 *
 * Kept between runs in `.tmp/pglite-<version>-data.tar` (`.tmp/` is ignored by git), named for
 * the installed PGlite, whose clusters another version may not read. When it is missing it is
 * made by a child process that this set-up starts and does not wait for: the files that need it
 * wait for it (the child writes the archive whole, then renames it into place, or writes
 * `<archive>.failed` with its error), and the rest of the run goes on meanwhile. Each set-up
 * sweeps what no run will read: the archives of other PGlite versions, and partial archives a
 * killed maker left (any older than {@link PARTIAL_KEPT_MS}: a live maker writes its own in well
 * under a second).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MAKER = join(root, 'test/support/pglite-data-child.mjs');

declare module 'vitest' {
  export interface ProvidedContext {
    /** The archive of PGlite's data directory for this run (present, or being made); none without this set-up. */
    pgliteData: string | undefined;
  }
}

/** How old a partial archive is when it is swept (ms): no maker is still writing it. */
const PARTIAL_KEPT_MS = 10 * 60_000;

/** The archive for the installed PGlite. */
function archivePath(): string {
  const manifest = join(root, 'node_modules/@electric-sql/pglite/package.json');
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  return join(root, '.tmp', `pglite-${version}-data.tar`);
}

/** Removes the archives of other PGlite versions, with their logs, and stale partial archives. */
function sweep(archive: string): void {
  const directory = dirname(archive);
  for (const name of readdirSync(directory)) {
    if (!name.startsWith('pglite-')) continue;
    const path = join(directory, name);
    const stale = name.endsWith('.partial') ? Date.now() - statSync(path).mtimeMs > PARTIAL_KEPT_MS : !path.startsWith(archive);
    if (stale) rmSync(path, { force: true });
  }
}

export default function setup(project: TestProject): () => void {
  const archive = archivePath();
  mkdirSync(dirname(archive), { recursive: true });
  sweep(archive);
  let maker: ChildProcess | undefined;
  if (!existsSync(archive)) {
    rmSync(`${archive}.failed`, { force: true });
    const log = openSync(`${archive}.log`, 'w');
    maker = spawn(process.execPath, [MAKER, archive], { cwd: root, stdio: ['ignore', log, log] });
  }
  project.provide('pgliteData', archive);
  return () => {
    if (maker?.exitCode === null) maker.kill();
  };
}
