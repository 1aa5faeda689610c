/**
 * `npm run bench:unknown-issuer`: what a token naming no registered issuer costs when its hint is
 * read (an `exposeHints` response, or an event listener reading `hint`), with 10 registered
 * issuers: a hostile 8 KB `iss` (a run of slashes, which a backtracking `/\/+$/` took quadratic
 * time over) against a benign 8 KB `iss` of one letter, timed by tinybench in one process and one
 * run. The hostile one must cost at most 2× the benign one.
 *
 * Environment: BENCH_TIME_MS (tinybench's time per case; 2000).
 */
import { Bench } from 'tinybench';
import { IssuerRegistry, createVerifier } from '../dist/index.js';
import { machineLine, resultTable, writeSection } from './lib/report.mjs';
import { AUDIENCE, PRODUCT, claimsFor, createBenchKey, flat, signToken } from './lib/tokens.mjs';

const timeMs = Number(process.env.BENCH_TIME_MS ?? 2000);
const BATCH = 20;
const ISSUERS = Array.from({ length: 10 }, (_unused, index) => `https://issuer-${index}.bench.example`);
/** Characters of `iss`: the token stays within the default 8192 bytes. */
const LENGTH = 5500;

const registry = new IssuerRegistry(ISSUERS.map((issuer) => ({ issuer, jwksUri: `${issuer}/jwks.json`, products: [PRODUCT] })));
const verifier = createVerifier({ registry, audience: AUDIENCE, cache: false });
const key = createBenchKey();
const tokenWith = (iss) => flat(signToken(key, claimsFor(iss, 0, { iss, sub: 'x' })));
const CASES = [
  { id: 'benign', label: `\`iss\` of ${LENGTH} × "a"`, role: 'baseline', token: tokenWith('a'.repeat(LENGTH)) },
  { id: 'hostile', label: `\`iss\` of "https://issuer-0.bench.example" + ${LENGTH - 40} × "/" + "x"`, role: 'ours', token: tokenWith(`${ISSUERS[0]}${'/'.repeat(LENGTH - 40)}x`) },
];

/** Verifies `token`, which must fail as unknown_issuer, and reads its hint. */
async function rejectAndExplain(token) {
  try {
    await verifier.verify(token);
  } catch (error) {
    if (error.code !== 'unknown_issuer' || typeof error.hint !== 'string') throw new Error(`expected unknown_issuer with a hint, got ${error.code}`);
    return error.hint.length;
  }
  throw new Error('expected unknown_issuer');
}

for (const c of CASES) {
  if (new TextEncoder().encode(c.token).byteLength > 8192) throw new Error(`${c.id}: token over 8192 bytes`);
  await rejectAndExplain(c.token);
}
const bench = new Bench({ time: timeMs, warmupTime: Math.min(500, timeMs / 2), iterations: 16, throws: true });
for (const c of CASES) {
  bench.add(c.id, async () => {
    for (let index = 0; index < BATCH; index += 1) await rejectAndExplain(c.token);
  });
}
const startedAt = new Date();
await bench.run();
const GROUP = 'unknown_issuer, 10 issuers, hint read';
const rows = CASES.map(({ id, label, role }) => {
  const { latency } = bench.getTask(id).result;
  return { id, group: GROUP, label, role, rate: (BATCH * 1000) / latency.mean, spread: latency.rme };
});
const [benign, hostile] = rows;
const cost = benign.rate / hostile.rate;
const table = resultTable(rows, { unit: 'rejections per second' });
console.log(`${table}\n\nhostile / benign cost: ${cost.toFixed(2)}× (at most 2× required)`);
writeSection(
  'unknown-issuer',
  [
    '## `npm run bench:unknown-issuer`',
    '',
    `Run ${startedAt.toISOString()}: ${machineLine()}. Tokens of about 8 KB whose \`iss\` no registered issuer matches; each rejection's hint is read (the near-miss search over 10 issuers). The hostile \`iss\` costs ${cost.toFixed(2)}× the benign one (at most 2× required).`,
    '',
    table,
  ].join('\n'),
);
if (cost > 2) process.exitCode = 1;
