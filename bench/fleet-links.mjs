/**
 * Payment links on PostgreSQL with `PostgresDirectory` started (the documented set-up), against a
 * raw single-statement `INSERT … RETURNING` of a row of the same width (the same record), on the
 * same pool, in the same run, at concurrency 1 and 16, on a throw-away server with its default
 * settings (`fsync` on). Alternating rounds; the median of each.
 *
 * Per link it reports: round trips (statements the pool's connections ran, counted by wrapping
 * them), commits that write (transaction ids taken; a read-only statement takes none), WAL bytes, and the client's CPU (user + system) per link, each against the raw INSERT.
 * Targets (issue 39): 1 commit and at most 2 round trips per link; at least 0.5× the raw INSERT
 * at concurrency 16.
 *
 * `npm run bench:fleet:links` (BENCH_FLEET_LINK_SECONDS per round, default 2;
 * BENCH_FLEET_LINK_ROUNDS, default 5). Writes its section of bench/RESULTS.md.
 */
import pg from 'pg';
import { poolSettings } from 'paygate-auth/postgres';
import { linkBench } from './lib/link-bench.mjs';
import { figure, machineLine, markdownTable, ratio, writeSection } from './lib/report.mjs';
import { throwAwayServerOrSkip } from './lib/postgres-server.mjs';

const SECONDS = Number(process.env.BENCH_FLEET_LINK_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_FLEET_LINK_ROUNDS ?? 5);
const CONCURRENCIES = [1, 16];

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** A pool whose checked-out connections count the statements they run (one round trip each). */
function countingPool(url, max) {
  const pool = new pg.Pool(poolSettings(url, { max }));
  pool.on('error', () => {});
  const counter = { statements: 0 };
  const connect = pool.connect.bind(pool);
  const counted = new WeakSet();
  pool.connect = async () => {
    const client = await connect();
    if (!counted.has(client)) {
      counted.add(client);
      const query = client.query.bind(client);
      client.query = (...args) => {
        counter.statements += 1;
        return query(...args);
      };
    }
    return client;
  };
  return { pool, counter };
}

/**
 * The next transaction id and the WAL position now. Each transaction that writes takes one id
 * when it commits its first write; a read-only one takes none: the difference counts the commits
 * that write (and flush) WAL, the server's own included (none run here).
 */
async function serverFacts(admin) {
  const { rows } = await admin.query('SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS next, pg_current_wal_lsn() AS lsn');
  return rows[0];
}

/** Runs `one()` for `seconds` with `concurrency` in flight; resolves the measures of the round. */
async function round({ one, seconds, concurrency, admin, counter }) {
  const before = await serverFacts(admin);
  const statements = counter.statements;
  const cpu = process.cpuUsage();
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const started = performance.now();
  const lane = async () => {
    while (performance.now() < deadline) {
      await one();
      done += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const elapsed = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const roundTrips = counter.statements - statements;
  const after = await serverFacts(admin);
  const { rows } = await admin.query('SELECT pg_wal_lsn_diff($1, $2)::float8 AS bytes', [after.lsn, before.lsn]);
  return {
    rate: done / elapsed,
    roundTrips: roundTrips / done,
    commits: (Number(after.next) - Number(before.next)) / done,
    wal: rows[0].bytes / done,
    cpu: (used.user + used.system) / 1000 / done,
  };
}

const server = await throwAwayServerOrSkip();
const admin = new pg.Pool(poolSettings(server.url, { max: 1 }));
admin.on('error', () => {});
const { pool, counter } = countingPool(server.url, 16);
let bench;
try {
  bench = await linkBench(admin, pool);
  const { link, raw } = bench;
  const results = [];
  for (const concurrency of CONCURRENCIES) {
    const measured = { links: [], raw: [] };
    for (let index = 0; index < ROUNDS; index++) {
      measured.links.push(await round({ one: link, seconds: SECONDS, concurrency, admin, counter }));
      measured.raw.push(await round({ one: raw, seconds: SECONDS, concurrency, admin, counter }));
      console.log(
        `  concurrency ${concurrency}, round ${index + 1}: links ${measured.links.at(-1).rate.toFixed(0)}/s, raw INSERT ${measured.raw.at(-1).rate.toFixed(0)}/s`,
      );
    }
    const summary = (runs) => Object.fromEntries(Object.keys(runs[0]).map((name) => [name, median(runs.map((run) => run[name]))]));
    results.push({ concurrency, links: summary(measured.links), raw: summary(measured.raw) });
  }
  const rows = results.flatMap(({ concurrency, links, raw: rawRow }) => [
    [
      `${concurrency}`,
      'link (handler, PostgresDirectory)',
      figure(links.rate),
      ratio(links.rate / rawRow.rate),
      links.roundTrips.toFixed(2),
      links.commits.toFixed(2),
      figure(links.wal),
      links.cpu.toFixed(3),
      ratio(links.cpu / rawRow.cpu),
    ],
    [
      `${concurrency}`,
      'raw `INSERT … RETURNING`',
      figure(rawRow.rate),
      '1.00×',
      rawRow.roundTrips.toFixed(2),
      rawRow.commits.toFixed(2),
      figure(rawRow.wal),
      rawRow.cpu.toFixed(3),
      '1.00×',
    ],
  ]);
  const table = markdownTable(
    ['in flight', 'what', 'per second', '× raw', 'round trips', 'commits', 'WAL bytes', 'client CPU ms', 'CPU × raw'],
    rows,
    ['r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
  );
  const at16 = results.find((result) => result.concurrency === 16);
  const verdict = [
    `1 commit per link: ${results.every((result) => result.links.commits <= 1.05) ? 'met' : 'NOT met'}`,
    `at most 2 round trips per link: ${results.every((result) => result.links.roundTrips <= 2) ? 'met' : 'NOT met'}`,
    `at least 0.5× the raw INSERT at 16 in flight: ${at16.links.rate / at16.raw.rate >= 0.5 ? 'met' : 'NOT met'} (${ratio(at16.links.rate / at16.raw.rate)})`,
  ].join('; ');
  const text = [
    '## `npm run bench:fleet:links`',
    '',
    `Run ${new Date().toISOString()}: ${machineLine()}. ${server.where}. Medians of ${ROUNDS} alternating rounds of ${SECONDS} s per concurrency; each link with its own Idempotency-Key and a known shopper, PostgresDirectory started (its cache warm); the raw INSERT writes the same record into a copy of the links table (\`LIKE … INCLUDING ALL\`) on the same pool. Round trips: statements counted on the pool's connections; commits: transaction ids taken per link (each transaction that writes takes one; a read-only one none); client CPU: this process's user + system time per operation (timed: ±10 %).`,
    '',
    table,
    '',
    `Targets: ${verdict}.`,
  ].join('\n');
  console.log(text);
  writeSection('fleet-links', text);
  console.log('written to bench/RESULTS.md');
} finally {
  await bench?.close();
  await pool.end();
  await admin.end();
  server.stop();
}
