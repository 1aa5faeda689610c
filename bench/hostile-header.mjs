/**
 * `npm run bench:hostile-header`: what `extractBearerToken` costs on a hostile 1 MB
 * `Authorization` value (runs of spaces, b64token characters or "=" padding ending in a character
 * that fails the grammar: inputs a backtracking pattern takes quadratic time or worse over), each
 * against a benign value of the same length (`Bearer` and a b64token of "a", read whole), with and
 * without a `holds` that knows no token, timed in one process: rounds alternate the two values of
 * a case (a batch each), so a slow spell of a shared machine weighs on both, and each rate is its
 * median over the rounds. A refusal reads the value about ten times where a token read whole reads
 * it once or twice (the anchored pattern giving its run back one character at a time, the trim,
 * the scheme, the spaces and commas, then the character at fault, for the message): 3× to 11× in
 * the first runs. A hostile value must cost at most 20× the benign one; a pattern that backtracked
 * from each place would cost about 10^5× (a million characters tried from each of a million).
 *
 * Environment: BENCH_ROUNDS (30), BENCH_BATCH (5 parses per value and round).
 */
import { AuthError, extractBearerToken } from '../dist/index.js';
import { machineLine, median, resultTable, writeSection } from './lib/report.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const BATCH = Number(process.env.BENCH_BATCH ?? 5);
const MB = 1_000_000;
/** The most a hostile value may cost, as a multiple of the benign one's. */
const LIMIT = 20;
const knowsNone = () => false;

/** The cases of test/http/authorization.test.ts's hostile 1 MB values. */
const CASES = [
  { id: 'quote', label: `"Bearer " + ${MB} × "a" + '"'`, value: `Bearer ${'a'.repeat(MB)}"`, code: 'invalid_request' },
  { id: 'spaces', label: `"Bearer" + ${MB} × " " + 'x"'`, value: `Bearer${' '.repeat(MB)}x"`, code: 'invalid_request' },
  { id: 'padding', label: `"Bearer a" + ${MB} × "=" + "a"`, value: `Bearer a${'='.repeat(MB)}a`, code: 'invalid_request' },
  { id: 'leading', label: `${MB} × " " + "Basic"`, value: `${' '.repeat(MB)}Basic`, code: 'missing_token' },
  {
    id: 'leading-holds',
    label: `${MB} × " " + 'Bearer x"', with holds()`,
    value: `${' '.repeat(MB)}Bearer x"`,
    holds: knowsNone,
    code: 'invalid_request',
  },
  {
    id: 'spaces-holds',
    label: `"Bearer" + ${MB} × " " + 'x"', with holds()`,
    value: `Bearer${' '.repeat(MB)}x"`,
    holds: knowsNone,
    code: 'invalid_request',
  },
];

/** Parses `value`, which must be refused with `code`. */
function refuse(value, holds, code) {
  try {
    extractBearerToken(value, holds);
  } catch (error) {
    if (!(error instanceof AuthError) || error.code !== code) throw new Error(`expected ${code}, got ${error?.code ?? error}`);
    return;
  }
  throw new Error(`expected ${code}, got a token`);
}

/** Parses `value`, which must be read whole. */
function read(value, holds) {
  if (extractBearerToken(value, holds).length !== value.length - 'Bearer '.length) throw new Error('benign value not read whole');
}

const runs = CASES.map((c) => {
  const benign = `Bearer ${'a'.repeat(c.value.length - 'Bearer '.length)}`;
  return [
    { label: `benign: "Bearer " + ${benign.length - 7} × "a"${c.holds ? ', with holds()' : ''}`, run: () => read(benign, c.holds) },
    { label: `hostile: ${c.label}`, run: () => refuse(c.value, c.holds, c.code) },
  ];
});
for (const pair of runs) for (const { run } of pair) run();

const times = runs.map((pair) => pair.map(() => []));
const startedAt = new Date();
for (let round = 0; round < ROUNDS; round += 1) {
  for (const [index, pair] of runs.entries()) {
    for (const [side, { run }] of pair.entries()) {
      const started = performance.now();
      for (let count = 0; count < BATCH; count += 1) run();
      times[index][side].push(performance.now() - started);
    }
  }
}
const rows = runs.flatMap((pair, index) =>
  pair.map(({ label }, side) => ({
    id: `${CASES[index].id}-${side === 0 ? 'benign' : 'hostile'}`,
    group: `1 MB, ${CASES[index].id}`,
    label,
    role: side === 0 ? 'baseline' : 'ours',
    rate: (BATCH * 1000) / median(times[index][side]),
  })),
);
const costs = CASES.map((_c, index) => rows[2 * index].rate / rows[2 * index + 1].rate);
const worst = Math.max(...costs);
const table = resultTable(rows, { unit: 'parses per second' });
const summary = CASES.map((c, index) => `${c.id} ${costs[index].toFixed(2)}×`).join(', ');
console.log(`${table}\n\nhostile / benign cost: ${summary}; worst ${worst.toFixed(2)}× (at most ${LIMIT}× required)`);
writeSection(
  'hostile-header',
  [
    '## `npm run bench:hostile-header`',
    '',
    `Run ${startedAt.toISOString()}: ${machineLine()}. \`extractBearerToken\` on hostile \`Authorization\` values of about 1 MB, each against a benign value of the same length read whole; ${ROUNDS} alternating rounds of ${BATCH}, medians. Hostile / benign cost: ${summary}; the worst ${worst.toFixed(2)}× (at most ${LIMIT}× required).`,
    '',
    table,
  ].join('\n'),
);
if (worst > LIMIT) process.exitCode = 1;
