/**
 * `npm run bench:memory`: verifies 1,000,000 distinct tokens (BENCH_MEMORY_TOKENS) with one
 * verifier at its default cache sizes and prints the heap's growth, which must stay bounded by
 * those sizes (< 64 MB), not grow with the number of tokens. Every token is kept in the result
 * cache (`cacheAdmission: 'first-use'`), so the cache fills to its bounds; by default a token used
 * once is not kept. Run with --expose-gc (the npm script does); the heap is measured after a full
 * collection.
 *
 * Every token is distinct and really signed: the thread pool signs them (node:crypto, RS256,
 * 2048-bit) 64 at a time while the same lanes verify them, so at most 64 tokens exist at once.
 */
import { authenticate } from 'paygate-auth';
import { busyFraction, cpuTimes, describeMachine, loadAverage } from './lib/machine.mjs';
import { offlineVerifier } from './lib/offline-verifier.mjs';
import { markdownTable, writeSection } from './lib/report.mjs';
import { ISSUER, claimsFor, createBenchKey, flat, signTokenAsync } from './lib/tokens.mjs';

const TOTAL = Number(process.env.BENCH_MEMORY_TOKENS ?? 1_000_000);
const LANES = 64;
const LIMIT_MB = 64;
const REQUIRED_SCOPES = Object.freeze(['pay:processPayments']);

if (typeof globalThis.gc !== 'function') {
  console.error('bench/memory.mjs needs --expose-gc (npm run bench:memory passes it)');
  process.exit(2);
}

const mb = (bytes) => bytes / 2 ** 20;
function heap() {
  globalThis.gc();
  globalThis.gc();
  const { heapUsed, rss, external, arrayBuffers } = process.memoryUsage();
  return { heapUsed, rss, external, arrayBuffers };
}

const machine = describeMachine();
const loadBefore = loadAverage();
const cpuBefore = cpuTimes();
const startedAt = new Date();
console.log(`paygate-auth memory benchmark, ${startedAt.toISOString()}`);
console.log(`Node ${machine.node}; ${machine.cpu}, ${machine.cores} cores; load average before: ${loadBefore.join(' / ')}`);

const key = createBenchKey();
// Every token kept from its first use: the cache as full as it can be (by default, a token is kept
// from its second use and these, each used once, would not be kept at all).
const verifier = await offlineVerifier(key.jwk, { cacheAdmission: 'first-use' });

let next = 0;
let verified = 0;
const checkpoints = [];
const before = heap();
const started = performance.now();
let lastReport = started;

async function lane() {
  while (next < TOTAL) {
    const n = next++;
    const token = await signTokenAsync(key, claimsFor(ISSUER, n));
    const result = await authenticate(verifier, { authorization: flat(`Bearer ${token}`), requiredScopes: REQUIRED_SCOPES });
    if (!result.ok) throw result.error;
    verified += 1;
  }
}

const progress = setInterval(() => {
  const now = performance.now();
  if (now - lastReport < 10_000) return;
  lastReport = now;
  const used = process.memoryUsage().heapUsed;
  console.log(`  ${verified} verified, ${Math.round((verified * 1000) / (now - started))}/s, heap ${mb(used - before.heapUsed).toFixed(1)} MB over the start (before collection)`);
}, 1000);

const CHECKPOINT = Math.max(1, Math.floor(TOTAL / 10));
const watcher = (async () => {
  for (let mark = CHECKPOINT; mark <= TOTAL; mark += CHECKPOINT) {
    while (verified < mark) await new Promise((resolve) => setTimeout(resolve, 50));
    checkpoints.push({ verified, growth: mb(heap().heapUsed - before.heapUsed) });
  }
})();
await Promise.all(Array.from({ length: LANES }, lane));
await watcher;
clearInterval(progress);
const seconds = (performance.now() - started) / 1000;
const after = heap();
const growth = mb(after.heapUsed - before.heapUsed);
const loadAfter = loadAverage();
const busy = busyFraction(cpuBefore, cpuTimes());

const lines = [
  `Run ${startedAt.toISOString()} with \`npm run bench:memory\`: ${verified.toLocaleString('en-US')} distinct tokens (each signed, RS256 2048-bit, and verified through \`authenticate()\`, ${LANES} at a time) in ${Math.round(seconds)} s, one verifier at its default cache sizes (10,000 results, 32 MiB of tokens), every token kept in its result cache (\`cacheAdmission: 'first-use'\`).`,
  `Node ${machine.node}, ${machine.cpu} (${machine.cores} cores); load average before ${loadBefore.join(' / ')}, after ${loadAfter.join(' / ')}; cores ${(busy * 100).toFixed(0)} % busy.`,
  '',
  markdownTable(
    ['tokens verified', 'heap growth after full GC (MB)'],
    checkpoints.map((c) => [c.verified.toLocaleString('en-US'), c.growth.toFixed(1)]),
    ['r', 'r'],
  ),
  '',
  `Heap growth over ${verified.toLocaleString('en-US')} distinct tokens: **${growth.toFixed(1)} MB** (limit ${LIMIT_MB} MB: ${growth < LIMIT_MB ? 'holds' : '**exceeded**'}); RSS ${mb(after.rss).toFixed(0)} MB (${mb(before.rss).toFixed(0)} MB at the start).`,
];
console.log('');
console.log(lines.join('\n'));
writeSection('memory', ['## Memory', '', ...lines].join('\n'));
console.log('written to bench/RESULTS.md');
if (growth >= LIMIT_MB) process.exitCode = 1;
