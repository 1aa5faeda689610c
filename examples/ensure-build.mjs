/**
 * Builds dist/ when it is missing or older than src/, so that examples importing 'paygate-auth'
 * (package self-reference → dist/) always run the current code.
 *
 * Quiet: one line on stderr while it builds (none when dist/ is current), the build's own output
 * only if the build fails. Stdout stays what the example prints (a token, say).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const entries = ['index', 'payment-links/index', 'testing/index', 'fetch/index', 'express/index', 'fastify/index', 'koa/index', 'postgres/index'].map(
  (name) => `dist/${name}.js`,
);

function newestMtime(directory) {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function isStale() {
  if (!entries.every((entry) => existsSync(join(root, entry)))) return true;
  const built = Math.min(...entries.map((entry) => statSync(join(root, entry)).mtimeMs));
  return newestMtime(join(root, 'src')) > built;
}

if (isStale()) {
  const started = performance.now();
  process.stderr.write('Building paygate-auth (dist/ is missing or older than src/)… ');
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
  process.stderr.write(`done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}
