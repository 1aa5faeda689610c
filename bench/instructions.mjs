/**
 * `npm run bench:instructions`: the instructions each verifier executes per verification, counted
 * by valgrind's callgrind. A count does not move with the machine's load, as times do on a shared
 * host; it is not a time either (an instruction waiting on memory costs more than one that does
 * not).
 *
 * Each case runs twice under `valgrind --tool=callgrind`: `warm-up` verifications then `counted`
 * more, and `warm-up` then `2 × counted`. The difference over `counted` is one verification. So
 * that a run repeats, and the difference holds only verifications:
 * - V8 runs with `--predictable` (compiler and collector on the main thread, fixed seeds) and an
 *   old generation too large to fill, so no full collection starts;
 * - callgrind counts only inside Node's event loop and libuv's pool threads (not start-up nor
 *   tear-down), and not inside V8's optimising compiler nor a young-generation collection, whose
 *   moment depends on all the process allocated.
 *
 * The cold cases of WHOLE_PROCESS are counted a second way beside it, over the whole process: every
 * thread from start to exit, the collector and the optimising compiler included, with Node's own
 * heap sizes (start-up and tear-down cancel out in the difference; `--predictable` and the seeds
 * stay, so that the count repeats). That is what a verification costs a server; the count
 * above is what the verifier's own code costs, and repeats more closely.
 *
 * The in-flight cases (64 verifications awaited at once) are counted per thread as well: Node's
 * event loop, where the token's own work runs, apart from libuv's pool threads, where
 * `crypto.verify`'s callback form runs the RSA step. On two cores, the event loop's share is
 * what the pool's work competes with.
 *
 * Environment: BENCH_INSTR_WARMUP (4000), BENCH_INSTR_COUNT (1000), BENCH_INSTR_CASES (ids,
 * comma-separated; see bench/instructions/cases.mjs; a whole-process count is `<id>:whole`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CASES, IN_FLIGHT } from './instructions/cases.mjs';
import { figure, machineLine, markdownTable, ratio, resultTable, writeSection } from './lib/report.mjs';
import { ISSUER, badTokens, claimsFor, createBenchKey, signMany, signToken } from './lib/tokens.mjs';

/** The cases also counted over the whole process, and the group their rows go in. */
const WHOLE_PROCESS = new Map([
  ['raw', 'cold, whole process (collector and compiler included)'],
  ['paygate', 'cold, whole process (collector and compiler included)'],
  ['fast-jwt', 'cold, whole process (collector and compiler included)'],
  ['raw-inflight', `${IN_FLIGHT}, whole process (collector and compiler included)`],
  ['paygate-inflight', `${IN_FLIGHT}, whole process (collector and compiler included)`],
]);

const warmUp = Number(process.env.BENCH_INSTR_WARMUP ?? 4000);
const counted = Number(process.env.BENCH_INSTR_COUNT ?? 1000);
const only = process.env.BENCH_INSTR_CASES?.split(',');
const cases = withWholeProcess(CASES).filter((c) => only === undefined || only.includes(c.id));
if (!(Number.isInteger(warmUp) && warmUp >= 0 && Number.isInteger(counted) && counted >= 1) || cases.length === 0) {
  console.error(
    `bench/instructions.mjs: BENCH_INSTR_WARMUP ≥ 0, BENCH_INSTR_COUNT ≥ 1, BENCH_INSTR_CASES among ${CASES.map((c) => c.id).join(', ')}`,
  );
  process.exit(2);
}
const COUNT_SCRIPT = fileURLToPath(new URL('./instructions/count.mjs', import.meta.url));
/**
 * Where counting toggles, on entry and on exit, each thread for itself: on inside the event loop
 * and libuv's pool threads (`worker`: jose's WebCrypto verifies there), off again inside the
 * optimising compiler and a collection.
 */
const TOGGLES = ['node::SpinEventLoopInternal*', 'worker', 'v8::internal::Runtime_Compile*', 'v8::internal::Heap::CollectGarbage(*'];
const NODE_FLAGS = ['--predictable', '--hash-seed=1', '--random-seed=1', '--initial-old-space-size=4096'];
/**
 * Over the whole process: Node's own heap sizes, so that every collection a token's allocations
 * bring about is counted, major ones included; `--predictable` runs the collector and the
 * compiler on the main thread, where the count repeats from run to run.
 */
const WHOLE_NODE_FLAGS = ['--predictable', '--hash-seed=1', '--random-seed=1'];

const valgrind = spawnSync('valgrind', ['--version'], { encoding: 'utf8' });
if (valgrind.status !== 0) {
  console.error('npm run bench:instructions needs valgrind on the PATH (Debian: apt-get install valgrind)');
  process.exit(2);
}

/**
 * The instructions callgrind counted in one run of case `c` (over the whole process when `whole`):
 * `{ total }`, and for a case with `lanes` also `{ main, pool }`, the event loop's thread and
 * libuv's pool threads (a thread that ran libuv's `worker`), from one profile per thread in `dir`.
 */
function countRun(c, file, runWarmUp, runCounted, whole) {
  const out = c.lanes === undefined ? undefined : join(dir, `${c.id}-${runCounted}.out`);
  const args = ['--tool=callgrind', `--callgrind-out-file=${out ?? '/dev/null'}`];
  if (out !== undefined) args.push('--separate-threads=yes');
  if (!whole) args.push(...TOGGLES.map((t) => `--toggle-collect=${t}`), '--collect-atstart=no');
  args.push(
    process.execPath,
    ...(whole ? WHOLE_NODE_FLAGS : NODE_FLAGS),
    COUNT_SCRIPT,
    c.script ?? c.id,
    file,
    String(runWarmUp),
    String(runCounted),
  );
  return new Promise((resolve, reject) => {
    const child = spawn('valgrind', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const instructions = Number(/Collected\s*:\s*(\d+)/.exec(stderr)?.[1]);
      // Counting starts inside Node's event loop: a Node whose loop is named otherwise counts nothing.
      if (code !== 0 || !(instructions > runCounted * 1000)) {
        const output = stderr
          .split('\n')
          .filter((line) => !line.startsWith('=='))
          .join('\n');
        reject(
          new Error(`${c.id}: exit ${code}, ${instructions} instructions counted (is ${TOGGLES[0]} still Node's event loop?)\n${output}`),
        );
      } else resolve(out === undefined ? { total: instructions } : { total: instructions, ...byThread(out) });
    });
  });
}

/** The instructions of the event loop's thread (valgrind's thread 1) and of libuv's pool threads in the profiles `<out>-NN`. */
function byThread(out) {
  const split = { main: 0, pool: 0 };
  const prefix = `${basename(out)}-`;
  for (const name of readdirSync(dir).filter((entry) => entry.startsWith(prefix))) {
    const profile = readFileSync(join(dir, name), 'utf8');
    rmSync(join(dir, name));
    const instructions = Number(/^(?:totals|summary):\s*(\d+)/m.exec(profile)?.[1] ?? 0);
    if (name.endsWith('-01')) split.main += instructions;
    else if (/^c?fn=(?:\(\d+\) )?worker$/m.test(profile)) split.pool += instructions;
  }
  return split;
}

/**
 * One verification's instructions: the two runs' difference over `counted` (a quarter for slow
 * cases), `{ total }` and, for a case with `lanes`, `{ main, pool }`.
 */
async function countCase(c, file) {
  const [w, n] = c.slow ? [Math.ceil(warmUp / 4), Math.ceil(counted / 4)] : [warmUp, counted];
  const [once, twice] = await Promise.all([countRun(c, file, w, n, c.whole), countRun(c, file, w, 2 * n, c.whole)]);
  return Object.fromEntries(Object.keys(once).map((part) => [part, (twice[part] - once[part]) / n]));
}

/** Each case, and after them the whole-process count of those of WHOLE_PROCESS. */
function withWholeProcess(list) {
  const whole = list
    .filter((c) => WHOLE_PROCESS.has(c.id))
    .map((c) => ({ ...c, id: `${c.id}:whole`, script: c.id, group: WHOLE_PROCESS.get(c.id), whole: true, baseline: undefined }));
  return [...list, ...whole];
}

/** The in-flight rows by thread: each case's event loop and pool per verification, and the event loop's ratio to the baseline's. */
function threadTable(rows, splits) {
  const lines = [];
  for (const [index, row] of rows.entries()) {
    const split = splits[index];
    if (split === undefined) continue;
    const baseline = rows.findIndex((other) => other.group === row.group && other.role === 'baseline');
    const base = splits[baseline];
    lines.push([
      row.group,
      row.label,
      figure(split.main),
      base === undefined ? '–' : ratio(split.main / base.main),
      figure(split.pool),
      base === undefined ? '–' : ratio(split.pool / base.pool),
    ]);
  }
  const head = ['mode', 'case', "event loop's thread", '× baseline', "libuv's pool threads", '× baseline'];
  return lines.length === 0 ? '' : markdownTable(head, lines, ['l', 'l', 'r', 'r', 'r', 'r']);
}

const startedAt = new Date();
const valgrindVersion = valgrind.stdout.trim();
console.log(`paygate-auth instruction counts, ${startedAt.toISOString()}; ${machineLine()}; ${valgrindVersion}`);
const key = createBenchKey();
const dir = mkdtempSync(join(tmpdir(), 'paygate-instructions-'));
/** Each case's counts by thread (in-flight cases only), by row. */
const splits = new Array(cases.length);
const file = join(dir, 'tokens.json');
try {
  const tokens = await signMany(key, ISSUER, warmUp + 2 * counted);
  writeFileSync(
    file,
    JSON.stringify({
      jwk: key.jwk,
      pem: key.pem,
      tokens,
      valid: signToken(key, claimsFor(ISSUER, 'valid')),
      bad: badTokens(key, ISSUER),
    }),
  );
  // A case's two runs go side by side: as many cases at a time as there are pairs of cores.
  const lanes = Math.max(1, Math.floor(availableParallelism() / 2));
  const rows = new Array(cases.length);
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next < cases.length) {
      const index = next++;
      const { id, group, label, role, baseline } = cases[index];
      const { total, ...split } = await countCase(cases[index], file);
      rows[index] = { id, group, label, role, baseline, rate: total };
      // Split by thread only where counting toggles: over the whole process, thread 1 also runs
      // start-up and its share of the collector, and the difference of two runs' shares is noise of
      // either sign (a negative "per verification"); only the process's total means something there.
      const byThread = 'main' in split && cases[index].whole !== true;
      if (byThread) splits[index] = split;
      const threads = byThread ? ` (event loop ${Math.round(split.main)}, pool ${Math.round(split.pool)})` : '';
      console.log(`  ${id}: ${Math.round(total)} instructions per verification${threads}`);
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  console.log(`counted ${cases.length} cases in ${Math.round((performance.now() - started) / 1000)} s`);
  const table = resultTable(rows, { unit: 'instructions per verification', lowerIsBetter: true });
  const threads = threadTable(rows, splits);
  console.log(`\n${table}${threads === '' ? '' : `\n\nBy thread, per verification:\n\n${threads}`}`);
  const legend =
    `${warmUp} verifications, then ${counted} counted (a quarter of each for jose); ratios below 1.00× are fewer instructions. ` +
    "The first groups count the verifier's own code (Node's event loop and libuv's pool, not the collector nor the optimising compiler); " +
    'the whole-process group counts every instruction of the process, both of those included.';
  writeSection(
    'instructions',
    [
      '## `npm run bench:instructions`',
      '',
      `Run ${startedAt.toISOString()}: ${machineLine()}; ${valgrindVersion}. ${legend}`,
      '',
      table,
      ...(threads === '' ? [] : ['', 'The in-flight cases by thread, instructions per verification:', '', threads]),
    ].join('\n'),
  );
  console.log('written to bench/RESULTS.md');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
