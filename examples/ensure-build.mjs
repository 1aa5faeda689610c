/**
 * Builds dist/ when it is missing or its sources changed since the last build, so that examples
 * importing 'paygate-auth' (package self-reference → dist/) always run the current code, and so
 * that `npm test` and `npm pack` skip the build when dist/ is current.
 *
 * "Changed" is by content: a SHA-256 of every file under src/ and of the build's configuration
 * (package.json, tsconfig.json, tsup.config.ts), kept in .tmp/build-hash after a build. Touching a
 * file without changing it rebuilds nothing; a checkout that changes a file rebuilds, and so does
 * a dist/ built by hand after the recorded build (its sources are unknown).
 *
 * Quiet: one line on stderr while it builds (none when dist/ is current), the build's own output
 * only if the build fails. Stdout stays what the example prints (a token, say).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const entries = [
  'index',
  'payment-links/index',
  'testing/index',
  'fetch/index',
  'express/index',
  'fastify/index',
  'koa/index',
  'postgres/index',
].map((name) => `dist/${name}.js`);
const CONFIGURATION = ['package.json', 'tsconfig.json', 'tsup.config.ts'];
const HASH_FILE = join(root, '.tmp', 'build-hash');

function filesUnder(directory) {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

/** The SHA-256 of the sources and configuration the build reads: names and contents. */
function sourceHash() {
  const hash = createHash('sha256');
  const files = [...filesUnder(join(root, 'src')), ...CONFIGURATION.map((name) => join(root, name)).filter((file) => existsSync(file))];
  for (const file of files.sort())
    hash
      .update(`${relative(root, file)}\0`)
      .update(readFileSync(file))
      .update('\0');
  return hash.digest('hex');
}

const current = sourceHash();

function isStale() {
  if (!entries.every((entry) => existsSync(join(root, entry)))) return true;
  if (!existsSync(HASH_FILE) || readFileSync(HASH_FILE, 'utf8') !== current) return true;
  // A build run by hand (`npx tsup`) after the recorded one may come from other sources.
  const recorded = statSync(HASH_FILE).mtimeMs;
  return entries.some((entry) => statSync(join(root, entry)).mtimeMs > recorded);
}

if (isStale()) {
  const started = performance.now();
  process.stderr.write('Building paygate-auth (dist/ is missing or out of date)… ');
  const result = spawnSync('npm', ['run', 'build', '--silent'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    shell: process.platform === 'win32',
  });
  if (result.status !== 0) {
    process.stderr.write(`failed:\n${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? `${result.error.message}\n` : ''}`);
    process.exit(result.status ?? 1);
  }
  mkdirSync(join(root, '.tmp'), { recursive: true });
  writeFileSync(HASH_FILE, current);
  process.stderr.write(`done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}
