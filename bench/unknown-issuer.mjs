/**
 * `npm run bench:unknown-issuer`: what a token naming no registered issuer costs when its hint is
 * read (an `exposeHints` response, or an event listener reading `hint`), with 10 registered
 * issuers: a hostile 8 KB `iss` (a run of slashes, which a backtracking `/\/+$/` took quadratic
 * time over) against a benign 8 KB `iss` of one letter, timed in one process: rounds alternate the
 * two cases (a batch each), so a slow spell of a shared machine weighs on both, and each case's
 * rate is its median over the rounds. The hostile one must cost at most 2× the benign one.
 *
 * Environment: BENCH_ROUNDS (40), BENCH_BATCH (200 rejections per case and round).
 */
import { IssuerRegistry, createVerifier } from '../dist/index.js';
import { machineLine, median, resultTable, writeSection } from './lib/report.mjs';
import { AUDIENCE, PRODUCT, claimsFor, createBenchKey, flat, signToken } from './lib/tokens.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const BATCH = Number(process.env.BENCH_BATCH ?? 200);
const ISSUERS = Array.from({ length: 10 }, (_unused, index) => `https://issuer-${index}.bench.example`);
/** Characters of `iss`: the token stays within the default 8192 bytes. */
const LENGTH = 5500;

const registry = new IssuerRegistry(ISSUERS.map((issuer) => ({ issuer, jwksUri: `${issuer}/jwks.json`, products: [PRODUCT] })));
const verifier = createVerifier({ registry, audience: AUDIENCE, cache: false });
const key = createBenchKey();
const tokenWith = (iss) => flat(signToken(key, claimsFor(iss, 0, { iss, sub: 'x' })));
const CASES = [
  { id: 'benign', label: `\`iss\` of ${LENGTH} × "a"`, role: 'baseline', token: tokenWith('a'.repeat(LENGTH)) },
  {
    id: 'hostile',
    label: `\`iss\` of "https://issuer-0.bench.example" + ${LENGTH - 40} × "/" + "x"`,
    role: 'ours',
    token: tokenWith(`${ISSUERS[0]}${'/'.repeat(LENGTH - 40)}x`),
  },
];

/** Verifies `token`, which must fail as unknown_issuer, and reads its hint. */
async function rejectAndExplain(token) {
  try {
    await verifier.verify(token);
  } catch (error) {
    if (error.code !== 'unknown_issuer' || typeof error.hint !== 'string')
      throw new Error(`expected unknown_issuer with a hint, got ${error.code}`);
    return error.hint.length;
  }
  throw new Error('expected unknown_issuer');
}

for (const c of CASES) {
  if (new TextEncoder().encode(c.token).byteLength > 8192) throw new Error(`${c.id}: token over 8192 bytes`);
  await rejectAndExplain(c.token);
}
const times = CASES.map(() => []);
const startedAt = new Date();
for (let round = 0; round < ROUNDS; round += 1) {
  for (const [index, c] of CASES.entries()) {
    const started = performance.now();
    for (let count = 0; count < BATCH; count += 1) await rejectAndExplain(c.token);
    times[index].push(performance.now() - started);
  }
}
const GROUP = 'unknown_issuer, 10 issuers, hint read';
const rows = CASES.map(({ id, label, role }, index) => ({
  id,
  group: GROUP,
  label,
  role,
  rate: (BATCH * 1000) / median(times[index]),
}));
const [benign, hostile] = rows;
const cost = benign.rate / hostile.rate;
const table = resultTable(rows, { unit: 'rejections per second' });
console.log(`${table}\n\nhostile / benign cost: ${cost.toFixed(2)}× (at most 2× required)`);
writeSection(
  'unknown-issuer',
  [
    '## `npm run bench:unknown-issuer`',
    '',
    `Run ${startedAt.toISOString()}: ${machineLine()}. Tokens of about 8 KB whose \`iss\` no registered issuer matches; each rejection's hint is read (the near-miss search over 10 issuers); ${ROUNDS} alternating rounds of ${BATCH}, medians. The hostile \`iss\` costs ${cost.toFixed(2)}× the benign one (at most 2× required).`,
    '',
    table,
  ].join('\n'),
);
if (cost > 2) process.exitCode = 1;
