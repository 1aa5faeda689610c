/**
 * How long a `revoke-key` takes to reach two attached instances, with an empty operator-controls
 * table and with 100,000 old rows (a year of suspensions, resumptions and key refreshes, never
 * compacted), alternating between two databases of one throw-away server. Each instance reads only the rows after the
 * last one it applied, so the history should not show.
 *
 * `npm run bench:controls` (BENCH_CONTROLS_ROUNDS revocations per table, default 100;
 * BENCH_CONTROLS_OLD_ROWS, default 100000). Writes its section of bench/RESULTS.md.
 */
import pg from 'pg';
import { migrate, poolSettings, postgresControls } from 'paygate-auth/postgres';
import { machineLine, markdownTable, writeSection } from './lib/report.mjs';
import { throwAwayServerOrSkip } from './lib/postgres-server.mjs';

const ROUNDS = Number(process.env.BENCH_CONTROLS_ROUNDS ?? 100);
const OLD_ROWS = Number(process.env.BENCH_CONTROLS_OLD_ROWS ?? 100_000);
const ISSUER = 'https://auth.bench.example';

function percentile(values, share) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))];
}

/** One instance: a pool, its controls, and a verifier stand-in that reports each revocation. */
async function instance(url, revoked) {
  const pool = new pg.Pool(poolSettings(url, { max: 4 }));
  pool.on('error', () => {});
  const controls = await postgresControls(pool, { compactInterval: 0 });
  controls.attach({
    registry: { has: () => true },
    revokeKey: (_issuer, kid) => revoked(kid),
    suspendIssuer: () => {},
    resumeIssuer: () => {},
    refresh: async () => ({}),
  });
  return { pool, controls };
}

/** A database on `server` with the controls migrated, its instances, and the time of one revocation. */
async function cluster(admin, name, oldRows) {
  await admin.query(`CREATE DATABASE ${name}`);
  const url = `${server.url.replace(/\/postgres$/, '')}/${name}`;
  const operator = new pg.Pool(poolSettings(url, { max: 2, statementTimeout: 600_000 }));
  operator.on('error', () => {});
  await migrate(operator, { only: 'controls' });
  await operator.query(
    `INSERT INTO paygate_operator_controls (action, issuer)
     SELECT (ARRAY['suspend_issuer', 'resume_issuer', 'refresh_keys', 'refresh_keys'])[1 + i % 4], 'https://old-' || (i % 50) || '.example'
       FROM generate_series(1, $1) AS i`,
    [oldRows],
  );
  const waiting = new Map();
  const revoked = (kid) => waiting.get(kid)?.();
  const instances = [await instance(url, revoked), await instance(url, revoked)];
  // The operator's side: it only writes (the command line's `revoke-key` writes the same row).
  const writer = await postgresControls(operator, { listen: false, pollInterval: 600_000, compactInterval: 0 });
  let next = 0;
  return {
    /** Milliseconds from the write of a revocation until both instances applied it. */
    async revoke() {
      const kid = `${name}-${next++}`;
      let left = instances.length;
      const both = new Promise((resolve) => waiting.set(kid, () => --left === 0 && resolve()));
      const started = performance.now();
      const writing = writer.revokeKey(ISSUER, kid);
      await both;
      const ms = performance.now() - started;
      await writing;
      return ms;
    },
    async close() {
      for (const { controls, pool } of instances) {
        await controls.close();
        await pool.end();
      }
      await writer.close();
      await operator.end();
    },
  };
}

const server = await throwAwayServerOrSkip();
const admin = new pg.Pool(poolSettings(server.url, { max: 1 }));
admin.on('error', () => {});
const clusters = [];
try {
  clusters.push(await cluster(admin, 'empty_table', 0), await cluster(admin, 'old_rows', OLD_ROWS));
  const [empty, full] = [[], []];
  for (let round = 0; round < ROUNDS; round++) {
    empty.push(await clusters[0].revoke());
    full.push(await clusters[1].revoke());
  }
  const median = (values) => percentile(values, 0.5);
  const ratio = median(full) / median(empty);
  const table = markdownTable(
    ['operator-controls table', 'old rows', 'median (ms)', '95th percentile (ms)', '× empty'],
    [
      ['empty', '0', median(empty).toFixed(1), percentile(empty, 0.95).toFixed(1), '1.00×'],
      [
        `${OLD_ROWS.toLocaleString('en')} old rows, never compacted`,
        OLD_ROWS.toLocaleString('en'),
        median(full).toFixed(1),
        percentile(full, 0.95).toFixed(1),
        `${ratio.toFixed(2)}×`,
      ],
    ],
    ['l', 'r', 'r', 'r', 'r'],
  );
  const text = [
    '## `npm run bench:controls`',
    '',
    `Run ${new Date().toISOString()}: ${machineLine()}. ${ROUNDS} revocations per table, alternating between two databases of one throw-away local server; each timed from the write (\`recordControl\`) until both instances (each its own pool, listening) applied it.`,
    '',
    table,
  ].join('\n');
  console.log(text);
  writeSection('controls', text);
  console.log('written to bench/RESULTS.md');
} finally {
  for (const each of clusters) await each.close();
  await admin.end();
  server.stop();
}
