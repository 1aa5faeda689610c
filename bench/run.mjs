/**
 * `npm run bench`: every row in one run, printed as one table and written to bench/RESULTS.md.
 * Runs against the built package (`paygate-auth` from dist/).
 *
 * Each module of SECTIONS exports, as its default, `async ({ log, timeMs }) → rows` (a row's shape
 * is in bench/lib/report.mjs); a new row, or group of rows, is one more entry here.
 *
 * Environment: BENCH_TIME_MS (tinybench's time per case; 2000), BENCH_TOKENS (10000),
 * BENCH_ONLY (comma-separated section names, e.g. `verifiers`).
 */
import { machineLine, resultTable, writeSection } from './lib/report.mjs';
import { versionOf } from './lib/verifiers.mjs';

/** The sections, in the table's order: a row or group of rows more is one entry more. */
const SECTIONS = {
  verifiers: './verifiers.mjs',
  http: './http.mjs',
  'payment links': './payment-links.mjs',
};

const timeMs = Number(process.env.BENCH_TIME_MS ?? 2000);
const only = process.env.BENCH_ONLY?.split(',');
const log = (line) => console.log(line);
const startedAt = new Date();
const peers = [
  'tinybench',
  'fast-jwt',
  'aws-jwt-verify',
  'jose',
  'jsonwebtoken',
  'express',
  'express-oauth2-jwt-bearer',
  'fastify',
  '@fastify/jwt',
  'get-jwks',
  'hono',
  'autocannon',
];
const versions = peers.map((name) => `${name} ${versionOf(name)}`).join(', ');
log(`paygate-auth ${versionOf('../')} benchmark, ${startedAt.toISOString()}`);
log(machineLine());

const rows = [];
for (const [name, path] of Object.entries(SECTIONS)) {
  if (only !== undefined && !only.includes(name)) continue;
  const { default: section } = await import(path);
  rows.push(...(await section({ log, timeMs })));
}

const table = resultTable(rows);
log('');
log(table);
writeSection(
  'bench',
  [
    '## `npm run bench`',
    '',
    `Run ${startedAt.toISOString()}: ${machineLine()}. ${versions}.`,
    '',
    table,
    '',
    "Each rate is the mean over tinybench's samples (a sample is a batch of verifications), the spread its relative margin of error. " +
      '× baseline divides by the row at 1.00× in the group (warm rows: raw `crypto.verify` cold); × best peer by the fastest peer in the group. ' +
      'Cold: 10,000 distinct tokens, each pass over them on a fresh verifier. ' +
      "HTTP: requests answered per second of the server process's CPU, 100 tokens reused (the cached path); `npm run bench:http` gives them in µs per request, round by round. See docs/performance.md.",
  ].join('\n'),
);
log('');
log('written to bench/RESULTS.md');
