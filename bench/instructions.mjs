/**
 * `npm run bench:instructions`: the instructions each verifier executes per verification, counted
 * by valgrind's callgrind. A count does not move with the machine's load, as times do on a shared
 * host; it is not a time either (an instruction that waits on memory or on a mispredicted branch
 * costs more than one that does not), so it explains the timed ratios rather than replacing them.
 *
 * Each case runs twice under `valgrind --tool=callgrind`: `warm-up` tokens, then `counted` or
 * `2 × counted` more. The difference between the two runs, over `counted`, is what one
 * verification executes. So that a run repeats, and the difference holds only verifications:
 * - V8 runs with `--predictable` (compilation and garbage collection on the main thread, fixed
 *   seeds) and an old generation too large to fill (no full collection starts, so no marking or
 *   sweeping falls among the counted instructions);
 * - callgrind counts only inside Node's event loop and libuv's pool threads (not start-up, nor
 *   tear-down), and not inside V8's optimising compiler, which runs once per function (on another
 *   thread outside `--predictable`), nor inside a collection of the young generation, whose moment
 *   depends on everything else the process allocated. Counting those, one collection more in one
 *   of two runs moved a count by 7 %.
 * Runs go side by side, one per core: a count does not depend on what else runs.
 *
 * Environment: BENCH_INSTR_WARMUP (4000), BENCH_INSTR_COUNT (1000), BENCH_INSTR_CACHE_SIM=1 (also
 * simulate caches and branch prediction: misses per verification; about twice as long),
 * BENCH_INSTR_CASES (comma-separated case ids).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CASES } from './instructions/cases.mjs';
import { describeMachine } from './lib/machine.mjs';
import { versionOf } from './lib/peers.mjs';
import { markdownTable, ops, ratio, writeSection } from './lib/report.mjs';
import { ISSUER, claimsFor, createBenchKey, negativeTokens, signMany, signToken } from './lib/tokens.mjs';

/** Exits with a message naming `name` when `message` is set. */
function refuse(name, message) {
  console.error(`bench/instructions.mjs: ${name} ${message}`);
  process.exit(2);
}

/** The environment variable `name` as a whole number of at least `min`, or `fallback` when unset. */
function countSetting(name, fallback, min) {
  const text = process.env[name];
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) refuse(name, `must be a whole number of at least ${min} (got "${text}")`);
  return value;
}

const warmUp = countSetting('BENCH_INSTR_WARMUP', 4000, 0);
const counted = countSetting('BENCH_INSTR_COUNT', 1000, 1);
const cacheSim = process.env.BENCH_INSTR_CACHE_SIM === '1';
const only = process.env.BENCH_INSTR_CASES?.split(',');
const unknown = only?.filter((id) => !CASES.some((c) => c.id === id)) ?? [];
if (unknown.length > 0) refuse('BENCH_INSTR_CASES', `names no case ${unknown.join(', ')} (cases: ${CASES.map((c) => c.id).join(', ')})`);
const cases = only === undefined ? CASES : CASES.filter((c) => only.includes(c.id));
const COUNT_SCRIPT = fileURLToPath(new URL('./instructions/count.mjs', import.meta.url));
/**
 * Where callgrind's counting toggles, on entry and again on exit, each thread for itself: it starts
 * off; it is on inside the event loop and inside libuv's pool threads (`worker`: jose's WebCrypto
 * verifies there), and off again inside the optimising compiler and a collection. (Two toggles
 * nested in each other would cancel: none of these runs inside another of the same.)
 */
const TOGGLES = ['node::SpinEventLoopInternal*', 'worker', 'v8::internal::Runtime_Compile*', 'v8::internal::Heap::CollectGarbage(*'];
/** V8's flags for a run: see the module comment. */
const NODE_FLAGS = ['--predictable', '--hash-seed=1', '--random-seed=1', '--initial-old-space-size=4096'];
/**
 * Events shown per verification when caches are simulated, by callgrind's names. Its last level
 * is modelled on the whole L3, which a verification's data never leaves: those misses are left out.
 */
const SIMULATED = [
  ['I1mr', 'L1 instruction misses'],
  ['D1mr', 'L1 data read misses'],
  ['Bcm', 'mispredicted conditional branches'],
];

const valgrind = spawnSync('valgrind', ['--version'], { encoding: 'utf8' });
if (valgrind.status !== 0) {
  console.error('npm run bench:instructions needs valgrind on the PATH (Debian: apt-get install valgrind)');
  process.exit(2);
}

/** `warm-up` and `counted` of a case: a quarter of each for the slow ones. */
const countsOf = (c) => (c.slow ? { warmUp: Math.ceil(warmUp / 4), counted: Math.ceil(counted / 4) } : { warmUp, counted });

/** One run of `c` under callgrind: its collected events, by name. */
function countRun(c, file, runWarmUp, runCounted) {
  const args = [
    '--tool=callgrind',
    '--callgrind-out-file=/dev/null',
    ...TOGGLES.map((pattern) => `--toggle-collect=${pattern}`),
    '--collect-atstart=no',
    ...(cacheSim ? ['--cache-sim=yes', '--branch-sim=yes'] : []),
    process.execPath,
    ...NODE_FLAGS,
    COUNT_SCRIPT,
    c.id,
    file,
    String(runWarmUp),
    String(runCounted),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('valgrind', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const events = /Events\s*:\s*(.+)/.exec(stderr)?.[1].trim().split(/\s+/);
      const values = /Collected\s*:\s*(.+)/.exec(stderr)?.[1].trim().split(/\s+/).map(Number);
      if (code !== 0 || events === undefined || values === undefined) {
        reject(new Error(`${c.id} exited with ${code} under valgrind:\n${stderr.split('\n').filter((line) => !line.startsWith('==')).join('\n')}`));
        return;
      }
      const counts = Object.fromEntries(events.map((name, index) => [name, values[index]]));
      // Counting starts inside Node's event loop: a Node whose loop is named otherwise counts nothing.
      if (!(counts.Ir > runCounted * 1000)) {
        reject(new Error(`${c.id}: callgrind counted ${counts.Ir} instructions for ${runCounted} verifications; is ${TOGGLES[0]} still Node's event loop?`));
        return;
      }
      resolve(counts);
    });
  });
}

/** Per verification: the difference between a run of `2 × counted` and one of `counted`, over `counted`. */
async function countCase(c, file) {
  const n = countsOf(c);
  const [once, twice] = await Promise.all([countRun(c, file, n.warmUp, n.counted), countRun(c, file, n.warmUp, 2 * n.counted)]);
  return { ...n, perVerification: Object.fromEntries(Object.keys(once).map((name) => [name, (twice[name] - once[name]) / n.counted])) };
}

/** Runs `tasks` (functions returning promises), at most `limit` at a time; results in order. */
async function limited(tasks, limit) {
  const results = new Array(tasks.length);
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, lane));
  return results;
}

const machine = describeMachine();
const startedAt = new Date();
const valgrindVersion = valgrind.stdout.trim();
console.log(`paygate-auth ${versionOf('../')} instruction counts, ${startedAt.toISOString()}`);
console.log(`Node ${machine.node} (V8 ${machine.v8}, OpenSSL ${machine.openssl}); ${machine.cpu}; ${valgrindVersion}`);

const key = createBenchKey();
const dir = mkdtempSync(join(tmpdir(), 'paygate-instructions-'));
const file = join(dir, 'tokens.json');
try {
  const tokens = await signMany(key, ISSUER, warmUp + 2 * counted);
  writeFileSync(file, JSON.stringify({ jwk: key.jwk, pem: key.pem, tokens, valid: signToken(key, claimsFor(ISSUER, 'valid')), bad: negativeTokens(key, ISSUER) }));
  // A case's two runs go side by side, one per core: as many cases at a time as there are pairs of cores.
  const lanes = Math.max(1, Math.floor(availableParallelism() / 2));
  const started = performance.now();
  const results = await limited(
    cases.map((c) => async () => {
      const result = await countCase(c, file);
      console.log(`  ${c.id}: ${ops(result.perVerification.Ir)} instructions per verification`);
      return { c, ...result };
    }),
    lanes,
  );
  console.log(`counted ${cases.length} cases in ${Math.round((performance.now() - started) / 1000)} s`);

  const raw = results.find((r) => r.c.id === 'raw')?.perVerification.Ir;
  const table = markdownTable(
    ['verifier', 'mode', 'instructions per verification', '× `crypto.verify`', ...(cacheSim ? SIMULATED.map(([, label]) => label) : []), 'verifications: warm-up + counted'],
    results.map((r) => [
      r.c.label,
      r.c.mode,
      ops(r.perVerification.Ir),
      raw === undefined ? '–' : ratio(r.perVerification.Ir / raw),
      ...(cacheSim ? SIMULATED.map(([event]) => ops(r.perVerification[event])) : []),
      `${r.warmUp} + ${r.counted}`,
    ]),
    ['l', 'l', 'r', 'r', ...(cacheSim ? SIMULATED.map(() => 'r') : []), 'r'],
  );
  console.log('');
  console.log(table);
  writeSection(
    'instructions',
    [
      '## Instructions per verification',
      '',
      `Run ${startedAt.toISOString()} with \`npm run bench:instructions\`${cacheSim ? ' (`BENCH_INSTR_CACHE_SIM=1`: caches and branch prediction simulated by callgrind, not measured)' : ''}: Node ${machine.node} (V8 ${machine.v8}, OpenSSL ${machine.openssl}), ${valgrindVersion}. Counted by callgrind, so the machine's load does not move them; they are not times. V8's optimising compiler, its collections and Node's start-up left out (see \`bench/instructions.mjs\`). Cold: distinct tokens; warm: the same token again.`,
      '',
      table,
    ].join('\n'),
  );
  console.log('written to bench/RESULTS.md');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
