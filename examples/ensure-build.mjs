/**
 * Builds dist/ when it is missing or its sources changed since the last build, so that examples
 * importing 'paygate-auth' (package self-reference → dist/) always run the current code, and so
 * that `npm test` (test/support/pack-once.ts, a global set-up) skips the build when dist/ is
 * current. `npm pack` always builds (`prepack`).
 *
 * "Changed" is by content: a SHA-256 of every file under src/ and of the build's configuration
 * (package.json, tsconfig.json, tsconfig.build.json, tsup.config.ts), kept in .tmp/build-hash
 * after a build. Touching a file without changing it rebuilds nothing; a checkout that changes a
 * file rebuilds, and so does a dist/ built by hand after the recorded build (its sources are
 * unknown).
 *
 * One build at a time (examples/build-lock.mjs, a lock in .tmp/build.lock): a second `npm test`
 * or `npm run example` started meanwhile waits for the build under way, then finds dist/ current
 * and builds nothing. A build killed halfway does not block the next one.
 *
 * On stderr while it builds (nothing when dist/ is current): a line when it starts, each stage of
 * the build as it starts and as it ends (ESM, CJS, the type declarations), a line every 15 s
 * during a long stage (a busy machine can take minutes), and the build's whole output only if the
 * build fails; a line when it waits for another process's build. Stdout stays what the example
 * prints (a token, say).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { withLock } from './build-lock.mjs';

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
const CONFIGURATION = ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'tsup.config.ts'];
const HASH_FILE = join(root, '.tmp', 'build-hash');
const LOCK = join(root, '.tmp', 'build.lock');

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

/** Seconds since `started`, for the progress lines. */
const since = (started) => `${((performance.now() - started) / 1000).toFixed(1)} s`;

/** Runs the build, telling stderr of each stage that starts or ends; resolves its exit code and whole output. */
function build(started) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', 'build', '--silent'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: process.platform === 'win32',
    });
    let output = '';
    let pending = '';
    const ticker = setInterval(() => process.stderr.write(`  still building… ${since(started)}\n`), 15_000);
    const read = (chunk) => {
      output += chunk;
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      // tsup's stage lines: "ESM ⚡️ Build success in 812ms", "DTS Build start"…, coloured where
      // tsup thinks the output is a terminal (as under CI=true).
      for (const line of lines) {
        const stage = /^(CJS|ESM|DTS)\b.*Build (start|success)/.exec(stripVTControlCharacters(line));
        if (stage) process.stderr.write(`  ${stage[1]} ${stage[2] === 'start' ? 'started' : 'done'} (${since(started)})\n`);
      }
    };
    child.stdout.setEncoding('utf8').on('data', read);
    child.stderr.setEncoding('utf8').on('data', read);
    child.on('error', (error) => {
      output += `${error.message}\n`;
    });
    child.on('close', (code) => {
      clearInterval(ticker);
      resolve({ code: code ?? 1, output });
    });
  });
}

/** Builds dist/, unless the build another process finished meanwhile made it current; the exit code. */
async function buildIfStale() {
  if (!isStale()) return 0;
  const started = performance.now();
  process.stderr.write(
    'Building paygate-auth (dist/ is missing or out of date); this takes about 7 s, a minute or more on a busy machine…\n',
  );
  const { code, output } = await build(started);
  if (code !== 0) {
    process.stderr.write(`Building paygate-auth failed:\n${output}`);
    return code;
  }
  writeFileSync(HASH_FILE, current);
  process.stderr.write(`Built paygate-auth in ${since(started)}\n`);
  return 0;
}

if (isStale()) {
  mkdirSync(join(root, '.tmp'), { recursive: true });
  const onWait = (holder) => process.stderr.write(`Waiting for the build of paygate-auth under way (${holder})…\n`);
  const code = await withLock(LOCK, buildIfStale, { onWait }).catch((error) => {
    process.stderr.write(`Building paygate-auth failed: ${error.message}\n`);
    return 1;
  });
  if (code !== 0) process.exit(code);
}
