/**
 * `npm run bench:memory`: 1,000,000 distinct tokens (BENCH_MEMORY_TOKENS) through one verifier at
 * its default cache sizes, every token kept from its first use (`cacheAdmission: 'first-use'`, so
 * the cache fills to its bounds), and the heap's growth after a full collection: it must stay
 * under 64 MB, bounded by the caches, not by the number of tokens. Needs --expose-gc (the npm
 * script passes it).
 *
 * Every token is really signed (RS256, 2048-bit): 64 lanes each sign one in libuv's pool (on every
 * core) then verify it, so at most 64 tokens exist at once and signing bounds the run's length.
 */
import { machineLine, markdownTable, writeSection } from './lib/report.mjs';
import { ISSUER, claimsFor, createBenchKey, signTokenAsync } from './lib/tokens.mjs';
import { paygateVerifier } from './lib/verifiers.mjs';

const TOTAL = Number(process.env.BENCH_MEMORY_TOKENS ?? 1_000_000);
const LIMIT_MB = 64;
if (typeof globalThis.gc !== 'function') {
  console.error('bench/memory.mjs needs --expose-gc (npm run bench:memory passes it)');
  process.exit(2);
}

const heapMB = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

const startedAt = new Date();
console.log(`paygate-auth memory benchmark, ${startedAt.toISOString()}; ${machineLine()}`);
const key = createBenchKey();
const verifier = await paygateVerifier(key.jwk, { cacheAdmission: 'first-use' });
const before = heapMB();
const started = performance.now();
const checkpoints = [];
const every = Math.max(1, Math.floor(TOTAL / 10));
let next = 0;
let verified = 0;
let measuring = Promise.resolve();

const lane = async () => {
  while (next < TOTAL) {
    const token = await signTokenAsync(key, claimsFor(ISSUER, next++));
    await verifier.verify(token);
    verified += 1;
    if (verified % every === 0) {
      const count = verified;
      measuring = measuring.then(() => {
        const growth = heapMB() - before;
        checkpoints.push([count.toLocaleString('en-US'), growth.toFixed(1)]);
        console.log(`  ${count} verified in ${Math.round((performance.now() - started) / 1000)} s; heap growth ${growth.toFixed(1)} MB`);
      });
    }
  }
};
await Promise.all(Array.from({ length: 64 }, lane));
await measuring;
const seconds = Math.round((performance.now() - started) / 1000);
const growth = heapMB() - before;
const verdict = growth < LIMIT_MB ? 'under' : '**over**';
const lines = [
  `Run ${startedAt.toISOString()}: ${machineLine()}. ${verified.toLocaleString('en-US')} distinct tokens in ${seconds} s, one verifier at its default cache sizes, every token kept (\`cacheAdmission: 'first-use'\`).`,
  '',
  markdownTable(['tokens verified', 'heap growth after full GC (MB)'], checkpoints, ['r', 'r']),
  '',
  `Heap growth over ${verified.toLocaleString('en-US')} distinct tokens: **${growth.toFixed(1)} MB**, ${verdict} the ${LIMIT_MB} MB target.`,
];
console.log(`\n${lines.join('\n')}`);
writeSection('memory', ['## `npm run bench:memory`', '', ...lines].join('\n'));
console.log('written to bench/RESULTS.md');
if (growth >= LIMIT_MB) process.exitCode = 1;
