#!/usr/bin/env node
/**
 * Runs the conformance suite (`conformance.mjs`) against the built package on each runtime named:
 * `node test/runtimes/run.mjs deno bun workerd` (no name: all three). Each runtime is the exact
 * version pinned in devDependencies, started from node_modules/.bin; workerd runs a bundle of
 * `worker.mjs` made with esbuild. A runtime that cannot start, ends with an error, or reports
 * other than every case passed fails the run: none is ever skipped. Needs the build (`npm run
 * build`); prints each runtime's version and count of cases, then the total.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const bin = (name) => join(root, 'node_modules/.bin', name);
/** Longest a runtime may take for the whole suite, in milliseconds. */
const RUNTIME_TIMEOUT = 180_000;
/** The compatibility date the Worker runs at: that of the pinned workerd (`workerd --version`). */
const WORKERD_COMPATIBILITY_DATE = '2026-11-17';

/** Runs `command`, echoing its output unless `quiet`; resolves its exit code (or a failure) and what it printed. */
function run(command, args, { quiet = false } = {}) {
  return new Promise((resolvePromise) => {
    let output = '';
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), RUNTIME_TIMEOUT);
    const take = (stream, sink) =>
      stream.on('data', (chunk) => {
        output += chunk;
        if (!quiet) sink.write(chunk);
      });
    take(child.stdout, process.stdout);
    take(child.stderr, process.stderr);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolvePromise({ code: null, output, error });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({
        code,
        output,
        error: signal === null ? undefined : new Error(`killed by ${signal} (timeout ${RUNTIME_TIMEOUT} ms?)`),
      });
    });
  });
}

/** The Worker bundle and its workerd config, in a fresh temporary directory. */
async function workerdProject() {
  const directory = await mkdtemp(join(tmpdir(), 'paygate-workerd-'));
  await build({
    entryPoints: [join(here, 'worker.mjs')],
    outfile: join(directory, 'worker.js'),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    // The conditions and fields a Workers bundler resolves with.
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    // Node built-ins load only on paths a Worker never takes (FileKeyStore, the loopback server);
    // msw is the test kit's optional peer, loaded when present.
    external: ['node:*', 'msw'],
    logLevel: 'error',
  });
  const config = [
    'using Workerd = import "/workerd/workerd.capnp";',
    '',
    'const config :Workerd.Config = (',
    '  services = [(name = "conformance", worker = .worker)],',
    ');',
    '',
    'const worker :Workerd.Worker = (',
    '  modules = [(name = "worker", esModule = embed "worker.js")],',
    `  compatibilityDate = "${WORKERD_COMPATIBILITY_DATE}",`,
    ');',
    '',
  ].join('\n');
  await writeFile(join(directory, 'config.capnp'), config);
  return directory;
}

/** How to start each runtime on the suite, and to ask its version. */
const RUNTIMES = {
  deno: {
    version: [bin('deno'), ['--version']],
    // No permission is granted: the suite reads no file, variable or network. Modules come from
    // node_modules only (`--cached-only`: nothing is downloaded).
    start: async () => ({
      command: bin('deno'),
      args: ['run', '--no-prompt', '--cached-only', join(here, 'main.mjs')],
    }),
  },
  bun: {
    version: [bin('bun'), ['--version']],
    // Modules come from node_modules only (`--no-install`: Bun's auto-install is off).
    start: async () => ({ command: bin('bun'), args: ['run', '--no-install', join(here, 'main.mjs')] }),
  },
  workerd: {
    version: [bin('workerd'), ['--version']],
    start: async () => {
      const directory = await workerdProject();
      return {
        command: bin('workerd'),
        args: ['test', join(directory, 'config.capnp')],
        cleanup: () => rm(directory, { recursive: true, force: true }),
      };
    },
  },
};

/** The closing line `<runtime>: N passed, M failed` of one runtime's output. */
function counts(output, name) {
  const match = new RegExp(`^${name}: (\\d+) passed, (\\d+) failed$`, 'm').exec(output);
  return match === null ? null : { passed: Number(match[1]), failed: Number(match[2]) };
}

/** Runs the suite on `name`; resolves the cases that passed there and, if it failed, why. */
async function runRuntime(name, expected) {
  const runtime = RUNTIMES[name];
  const version = await run(...runtime.version, { quiet: true });
  if (version.code !== 0) return { passed: 0, failure: `${name} cannot start (${version.error?.message ?? `exit ${version.code}`})` };
  const { version: pinned } = JSON.parse(await readFile(join(root, 'node_modules', name, 'package.json'), 'utf8'));
  console.log(`== ${name} (npm ${name}@${pinned}, ${version.output.split('\n')[0].trim()}): ${expected} cases`);
  const { command, args, cleanup } = await runtime.start();
  try {
    const result = await run(command, args);
    const seen = counts(result.output, name);
    const passed = seen?.passed ?? 0;
    if (result.error !== undefined) return { passed, failure: `${name}: ${result.error.message}` };
    if (result.code !== 0) return { passed, failure: `${name} exited ${result.code}` };
    if (seen === null) return { passed, failure: `${name} printed no "${name}: N passed, M failed" line` };
    if (seen.failed !== 0 || seen.passed !== expected) return { passed, failure: `${name}: ${seen.passed} of ${expected} cases passed` };
    return { passed, failure: null };
  } finally {
    await cleanup?.();
  }
}

const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(RUNTIMES);
const unknown = names.filter((name) => !Object.hasOwn(RUNTIMES, name));
if (unknown.length > 0) {
  console.error(`unknown runtime ${unknown.join(', ')}; known: ${Object.keys(RUNTIMES).join(', ')}`);
  process.exit(2);
}
const { cases } = await import('./conformance.mjs');
const failures = [];
let passed = 0;
for (const name of names) {
  const result = await runRuntime(name, cases.length);
  passed += result.passed;
  if (result.failure !== null) failures.push(result.failure);
}
for (const failure of failures) console.error(`FAILED ${failure}`);
console.log(`runtimes: ${passed} passed, ${names.length * cases.length - passed} failed`);
process.exit(failures.length === 0 ? 0 : 1);
