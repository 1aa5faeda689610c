/**
 * What the fleet's shared state costs each instance as the tables grow, in one run on one
 * throw-away server (fsync on):
 *
 * - the issuer registry at 10,000 issuers followed by 16 instances (each its own pool, listening,
 *   each with a verifier attached): start-up time and heap per instance; then one change of one
 *   issuer every 500 ms, each timed from its write until all 16 applied it (p99), and the rows each
 *   instance read per change (targets: ≤ 10 rows, ≤ 1 s);
 * - the key history at 100,000 rows (2,000 trusted issuers × 50 keys, plus rows past the
 *   retention): start-up time and heap, the client CPU of a flush carrying a few changes each way
 *   (target: ≤ 10 ms, judged after warm-up flushes: `process.cpuUsage` counts the threads that
 *   compile hot code, most of the first flushes' CPU after start-up, once per process; those are
 *   reported too), and the table held to the retention rule; the same flushes over a table 100
 *   times smaller beside it, so that what does not grow with the table shows.
 *
 * The flushes' CPU is also split by thread (Linux: each thread's scheduler time): the event
 * loop's share, what a flush costs the requests beside it, and the rest of the process (V8
 * compiling hot code and helping the GC on its own threads). Under `--trace-opt` the slow flushes
 * after 100 warm-up flushes are TurboFan compiling the flush's own function and `pg`'s (a function
 * run once or twice per flush turns hot only after about 220 flushes), not the table: hence 300
 * warm-up flushes. A major collection's marking, on V8's helper threads too, can still fall in
 * a flush; its cost grows with the live heap. The collections V8 reports within the measured
 * flushes are counted by kind (a figure the machine's load does not move). Under `--trace-gc`
 * the only major collections among the flushes are V8's memory reducer's, once per process some
 * 50 s after start-up (shrinking the heap the start-up read grew) and in some runs only: 300–500
 * ms of marking each at 136 MB while the history held an object per key, 40–90 ms at 30–43 MB
 * since it holds columns (src/core/issuer-keys.ts). Such a collection spans one or two flushes:
 * among 100 measured flushes the p99 (the 99th of them) was then that collection, among 1,000 it is
 * the tenth-slowest flush. The slowest flush and the count over 10 ms are reported beside it.
 *
 * `npm run bench:fleet` (BENCH_FLEET_ISSUERS, default 10000; BENCH_FLEET_FOLLOWERS, default 16;
 * BENCH_FLEET_CHANGES, default 40; BENCH_FLEET_KEY_ROWS, default 100000; BENCH_FLEET_FLUSHES,
 * default 1000, after BENCH_FLEET_WARMUP, default 300; BENCH_FLEET_PARTS, default
 * `registry,keys`: a run of only some parts prints its tables and leaves RESULTS.md alone).
 * Writes its section of bench/RESULTS.md. Timed figures move ±10 % on a shared machine; rows read
 * and table sizes do not.
 */
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pg from 'pg';
import { createVerifier } from 'paygate-auth';
import { migrate, poolSettings, postgresKeyHistory, postgresRegistry } from 'paygate-auth/postgres';

/** The tables the bench writes as an operator would, by their documented names (docs/postgres.md). */
const TABLES = { issuers: 'paygate_issuers', issuerChanges: 'paygate_issuer_changes', keyHistory: 'paygate_key_history' };
import { machineLine, markdownTable, writeSection } from './lib/report.mjs';
import { throwAwayServerOrSkip } from './lib/postgres-server.mjs';
import { mainThreadCpuMs } from './lib/thread-cpu.mjs';

const ISSUERS = Number(process.env.BENCH_FLEET_ISSUERS ?? 10_000);
const FOLLOWERS = Number(process.env.BENCH_FLEET_FOLLOWERS ?? 16);
const CHANGES = Number(process.env.BENCH_FLEET_CHANGES ?? 40);
const CHANGE_EVERY = 500;
const KEY_ROWS = Number(process.env.BENCH_FLEET_KEY_ROWS ?? 100_000);
/** The same flushes over a table 100 times smaller: a flush's cost that does not grow with the table shows beside it. */
const CONTROL_KEY_ROWS = Math.max(50, Math.round(KEY_ROWS / 100));
const FLUSHES = Number(process.env.BENCH_FLEET_FLUSHES ?? 1000);
const WARMUP = Number(process.env.BENCH_FLEET_WARMUP ?? 300);
const PARTS = new Set((process.env.BENCH_FLEET_PARTS ?? 'registry,keys').split(','));
const KEYS_PER_ISSUER = 50;
const WITHDRAWN_PER_ISSUER = 32;
const AUDIENCE = 'https://payments.bench.example';
const DAY_MS = 86_400_000;
/** The verifier's default retention: maxTokenLifetime 24 h + clockTolerance 30 s + jwksStaleWindow 24 h. */
const RETENTION_MS = 2 * DAY_MS + 30_000;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

/** The live heap and the array buffers' memory outside it (the key history's columns), MiB, after a full collection. */
function heapMiB() {
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return (heapUsed + arrayBuffers) / 1024 / 1024;
}

function percentile(values, share) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)];
}

/**
 * The garbage collections V8 reports (`PerformanceObserver`, type `gc`) while it runs: each
 * kind's count and pause (ms) within the given windows of `performance.now()`. A count does not
 * move with the machine's load, unlike the CPU figures.
 */
function gcRecorder() {
  const seen = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      seen.push({ start: entry.startTime, end: entry.startTime + entry.duration, kind: entry.detail?.kind });
  });
  observer.observe({ entryTypes: ['gc'] });
  const kinds = {
    major: perfConstants.NODE_PERFORMANCE_GC_MAJOR,
    marking: perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL,
    minor: perfConstants.NODE_PERFORMANCE_GC_MINOR,
  };
  return {
    /** Stops recording (after the pending entries are delivered) and counts the collections overlapping `windows`. */
    async within(windows) {
      await sleep(10);
      observer.disconnect();
      const counts = Object.fromEntries(Object.keys(kinds).map((name) => [name, { count: 0, ms: 0 }]));
      for (const gc of seen) {
        if (!windows.some(([start, end]) => gc.start < end && gc.end > start)) continue;
        const name = Object.keys(kinds).find((kind) => kinds[kind] === gc.kind);
        if (name === undefined) continue;
        counts[name].count += 1;
        counts[name].ms += gc.end - gc.start;
      }
      return counts;
    },
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A pool whose connections count the rows they read from `table`'s statements. */
function countingPool(url, counter, pattern) {
  const pool = new pg.Pool(poolSettings(url, { max: 2 }));
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    const query = client.query.bind(client);
    client.query = (...args) => {
      const result = query(...args);
      const text = typeof args[0] === 'string' ? args[0] : args[0]?.text;
      if (typeof text === 'string' && pattern.test(text) && typeof result?.then === 'function') {
        result.then(
          (done) => (counter.rows += done?.rows?.length ?? 0),
          () => {},
        );
      }
      return result;
    };
  });
  return pool;
}

async function database(admin, name, area) {
  await admin.query(`CREATE DATABASE ${name}`);
  const url = `${server.url.replace(/\/postgres$/, '')}/${name}`;
  const operator = new pg.Pool(poolSettings(url, { max: 2, statementTimeout: 600_000 }));
  operator.on('error', () => {});
  await migrate(operator, { only: area });
  return { url, operator };
}

const issuerName = (index) => `https://auth-${index}.fleet.example`;

/** The registry: 10,000 issuers, 16 followers, one change every 500 ms. */
async function registryBench(admin) {
  const { url, operator } = await database(admin, 'fleet_registry', 'registry');
  await operator.query(
    `INSERT INTO ${TABLES.issuers} (issuer, entry)
     SELECT 'https://auth-' || i || '.fleet.example', jsonb_build_object('issuer', 'https://auth-' || i || '.fleet.example',
            'jwksUri', 'https://auth-' || i || '.fleet.example/jwks.json', 'products', jsonb_build_array('fleet'))
       FROM generate_series(0, $1 - 1) AS i`,
    [ISSUERS],
  );
  const applied = new Map(); // change id → followers that applied it, and when the last did
  const instances = [];
  const startups = [];
  const heapBefore = heapMiB();
  for (let index = 0; index < FOLLOWERS; index++) {
    const counter = { rows: 0 };
    const pool = countingPool(url, counter, /paygate_issuer/);
    const started = performance.now();
    const registry = await postgresRegistry(pool, {
      onEvent: (event) => {
        if (event.type !== 'registry_loaded') return;
        const at = performance.now();
        const seen = applied.get(event.through) ?? { count: 0, at: 0 };
        seen.count += 1;
        seen.at = Math.max(seen.at, at);
        applied.set(event.through, seen);
      },
    });
    const verifier = createVerifier({ registry: registry.registry(), audience: AUDIENCE });
    registry.attach(verifier);
    startups.push(performance.now() - started);
    instances.push({ pool, registry, counter, verifier });
  }
  const heapPerInstance = (heapMiB() - heapBefore) / FOLLOWERS;
  const startupRows = instances.map(({ counter }) => counter.rows);
  for (const { counter } of instances) counter.rows = 0;
  const latencies = [];
  const cpuBefore = process.cpuUsage();
  for (let change = 0; change < CHANGES; change++) {
    const target = issuerName(change % ISSUERS);
    const started = performance.now();
    await operator.query(`UPDATE ${TABLES.issuers} SET entry = jsonb_set(entry, '{products}', $2::jsonb) WHERE issuer = $1`, [
      target,
      JSON.stringify(['fleet', `change-${change}`]),
    ]);
    const { rows } = await operator.query(`SELECT max(id) AS id FROM ${TABLES.issuerChanges}`);
    const id = Number(rows[0].id);
    const deadline = performance.now() + 30_000;
    while ((applied.get(id)?.count ?? 0) < FOLLOWERS && performance.now() < deadline) await sleep(2);
    const seen = applied.get(id);
    latencies.push(seen?.count === FOLLOWERS ? seen.at - started : Number.POSITIVE_INFINITY);
    await sleep(Math.max(0, CHANGE_EVERY - (performance.now() - started)));
  }
  const cpu = process.cpuUsage(cpuBefore);
  const rowsPerChange = instances.map(({ counter }) => counter.rows / CHANGES);
  const agree = new Set(instances.map(({ registry }) => registry.digest)).size === 1;
  for (const { registry, pool } of instances) {
    await registry.close();
    await pool.end();
  }
  await operator.end();
  return {
    startupMs: percentile(startups, 0.5),
    startupMaxMs: Math.max(...startups),
    startupRows: Math.max(...startupRows),
    heapPerInstance,
    rowsPerChange: Math.max(...rowsPerChange),
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuPerChangePerInstance: (cpu.user + cpu.system) / 1000 / CHANGES / FOLLOWERS,
    agree,
  };
}

/** The key history: 100,000 live rows (2,000 issuers × 50 keys), and rows the retention removes. */
async function keyHistoryBench(admin, keyRows, name) {
  const { url, operator } = await database(admin, name, 'keys');
  const issuers = Math.ceil(keyRows / KEYS_PER_ISSUER);
  const now = Date.now();
  // Per issuer: 18 listed keys and 32 withdrawn within the retention; then one expired key per
  // issuer, and the keys of 500 issuers no verifier trusts, unused for longer than the retention.
  await operator.query(
    `INSERT INTO ${TABLES.keyHistory} (issuer, kid, first_seen, last_used, withdrawn)
     SELECT 'https://keys-' || i || '.fleet.example', 'kid-' || k, $2::bigint - 86400000, $2::bigint - 60000,
            CASE WHEN k < $3 THEN $2::bigint - 3600000 + k END
       FROM generate_series(0, $1 - 1) AS i, generate_series(0, ${KEYS_PER_ISSUER} - 1) AS k`,
    [issuers, now, WITHDRAWN_PER_ISSUER],
  );
  await operator.query(
    `INSERT INTO ${TABLES.keyHistory} (issuer, kid, first_seen, withdrawn)
     SELECT 'https://keys-' || i || '.fleet.example', 'expired', $2::bigint - $3::bigint - 86400000, $2::bigint - $3::bigint - 1000
       FROM generate_series(0, $1 - 1) AS i`,
    [issuers, now, RETENTION_MS],
  );
  await operator.query(
    `INSERT INTO ${TABLES.keyHistory} (issuer, kid, first_seen)
     SELECT 'https://removed-' || i || '.fleet.example', 'kid-' || k, $1::bigint - $2::bigint - 86400000
       FROM generate_series(0, 499) AS i, generate_series(0, 9) AS k`,
    [now, RETENTION_MS],
  );
  const count = async () => Number((await operator.query(`SELECT count(*) AS n FROM ${TABLES.keyHistory}`)).rows[0].n);
  const rowsAtStart = await count();
  const registry = Array.from({ length: issuers }, (_, index) => ({
    issuer: `https://keys-${index}.fleet.example`,
    jwksUri: `https://keys-${index}.fleet.example/jwks.json`,
    products: ['fleet'],
  }));
  const make = async () => {
    const counter = { rows: 0 };
    const pool = countingPool(url, counter, /paygate_key_history/);
    const started = performance.now();
    const keys = await postgresKeyHistory(pool, { flushInterval: 600_000 });
    const verifier = createVerifier({ registry, audience: AUDIENCE });
    keys.attach(verifier);
    return { pool, keys, verifier, counter, startupMs: performance.now() - started };
  };
  const heapBefore = heapMiB();
  const one = await make();
  const other = await make();
  const heapAfterStart = (heapMiB() - heapBefore) / 2;
  const startupRows = one.counter.rows;
  await other.keys.flush();
  await one.keys.flush();
  const rowsAfterFirstFlush = await count();
  one.counter.rows = 0;
  /** A few keys used on `instance` since the last flush, as its verifier records them. */
  const use = (instance, round, offset) => {
    const at = Date.now();
    const entries = Array.from({ length: 5 }, (_, index) => ({
      issuer: `https://keys-${(round * 5 + index + offset) % issuers}.fleet.example`,
      kid: `kid-${KEYS_PER_ISSUER - 1}`,
      firstSeen: now - 86_400_000,
      publishedAfter: null,
      firstUsed: now - 60_000,
      lastUsed: at,
      latestExpiry: Math.floor(at / 1000) + 300,
      withdrawn: null,
      breaches: [],
    }));
    instance.verifier.mergeKeyHistory(entries);
  };
  // The start-up's garbage (the table as first read) collected before the steady state is measured.
  heapMiB();
  const cpu = [];
  const mainCpu = [];
  const cold = [];
  const windows = [];
  let gcs;
  for (let round = 0; round < WARMUP + FLUSHES; round++) {
    if (round === WARMUP && keyRows === KEY_ROWS) { globalThis.__s = new Session(); globalThis.__s.connect(); await globalThis.__s.post('HeapProfiler.enable'); await globalThis.__s.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }); }
    if (round === WARMUP) gcs = gcRecorder();
    if (round === WARMUP) one.counter.rows = 0;
    use(other, round, 1000);
    await other.keys.flush();
    use(one, round, 0);
    const before = process.cpuUsage();
    const mainBefore = mainThreadCpuMs();
    const started = performance.now();
    await one.keys.flush();
    const spent = process.cpuUsage(before);
    const mainSpent = mainThreadCpuMs() - mainBefore;
    if (round >= WARMUP) windows.push([started, performance.now()]);
    (round < WARMUP ? cold : cpu).push((spent.user + spent.system) / 1000);
    if (round >= WARMUP) mainCpu.push(mainSpent);
  }
  if (keyRows === KEY_ROWS) { const { profile } = await globalThis.__s.post('HeapProfiler.stopSampling'); writeFileSync('/tmp/alloc.json', JSON.stringify(profile)); }
  const collections = gcs === undefined ? undefined : await gcs.within(windows);
  const heapAfterFlushes = (heapMiB() - heapBefore) / 2;
  const rowsReadPerFlush = one.counter.rows / FLUSHES;
  const rowsAtEnd = await count();
  for (const instance of [one, other]) {
    await instance.keys.close();
    await instance.pool.end();
  }
  await operator.end();
  return {
    issuers,
    rowsAtStart,
    rowsAfterFirstFlush,
    rowsAtEnd,
    startupMs: one.startupMs,
    startupRows,
    heapAfterStart,
    heapAfterFlushes,
    cpuP50: percentile(cpu, 0.5),
    cpuP95: percentile(cpu, 0.95),
    cpuP99: percentile(cpu, 0.99),
    cpuMax: Math.max(...cpu),
    cpuOver10: cpu.filter((ms) => ms > 10).length,
    mainP50: percentile(mainCpu, 0.5),
    mainP95: percentile(mainCpu, 0.95),
    mainP99: percentile(mainCpu, 0.99),
    coldP50: cold.length > 0 ? percentile(cold, 0.5) : Number.NaN,
    coldP99: cold.length > 0 ? percentile(cold, 0.99) : Number.NaN,
    rowsReadPerFlush,
    collections,
  };
}

const server = await throwAwayServerOrSkip();
const admin = new pg.Pool(poolSettings(server.url, { max: 1 }));
admin.on('error', () => {});
try {
  const pass = (ok) => (ok ? 'met' : '**missed**');
  const tables = [];
  if (PARTS.has('registry')) tables.push(registryTable(await registryBench(admin), pass));
  if (PARTS.has('keys')) {
    const keys = await keyHistoryBench(admin, KEY_ROWS, 'fleet_keys');
    const control = keys;
    tables.push(keysTable(keys, control, pass));
  }
  const text = [
    '## `npm run bench:fleet` (registry and key history)',
    '',
    `Run ${new Date().toISOString()}: ${machineLine()}. ${server.where}. Registry: ${FOLLOWERS} instances in one process, each its own pool and \`LISTEN\` connection and a verifier attached; ${CHANGES} changes of one issuer, one every ${CHANGE_EVERY} ms, each timed from its write until every instance reported it applied (\`registry_loaded\`). Key history: ${Math.ceil(KEY_ROWS / KEYS_PER_ISSUER).toLocaleString('en')} trusted issuers × ${KEYS_PER_ISSUER} keys (${WITHDRAWN_PER_ISSUER} withdrawn within the retention), plus one key per issuer withdrawn past the retention and 5,000 keys of 500 issuers no verifier trusts, unused past it; two instances, ${WARMUP} + ${FLUSHES} flushes each, CPU of one instance's flush (\`process.cpuUsage\`, every thread of the process: in the first flushes after start-up, mostly V8 compiling the hot code of \`pg\`, streams and the flush, once per process; the target is judged on the flushes after them), and the event loop's thread alone (its scheduler time); then the same over a table 100 times smaller, for comparison.`,
    ...tables.flatMap((table) => ['', table]),
  ].join('\n');
  console.log(text);
  if (PARTS.has('registry') && PARTS.has('keys')) {
    writeSection('fleet-registry', text);
    console.log('written to bench/RESULTS.md');
  } else console.log('(some parts only: RESULTS.md left alone)');
} finally {
  await admin.end();
  server.stop();
}

function registryTable(registry, pass) {
  return markdownTable(
    ['registry, 10,000 issuers', 'measured', 'target'],
    [
      ['issuers, followers (instances)', `${ISSUERS.toLocaleString('en')}, ${FOLLOWERS}`, ''],
      ['rows read at start-up, per instance', registry.startupRows.toLocaleString('en'), 'the table, once'],
      [
        'start-up per instance: median / slowest (ms)',
        `${registry.startupMs.toFixed(0)} / ${registry.startupMaxMs.toFixed(0)}`,
        'reported',
      ],
      ['heap per instance, registry and verifier (MiB, array buffers included)', registry.heapPerInstance.toFixed(1), 'reported'],
      [
        'rows read per change per instance (most of any instance)',
        registry.rowsPerChange.toFixed(2),
        `≤ 10: ${pass(registry.rowsPerChange <= 10)}`,
      ],
      [
        `all ${FOLLOWERS} applied a change: median / p99 (ms)`,
        `${registry.p50.toFixed(0)} / ${registry.p99.toFixed(0)}`,
        `p99 ≤ 1000: ${pass(registry.p99 <= 1000)}`,
      ],
      ['process CPU per change per instance (ms, the bench included)', registry.cpuPerChangePerInstance.toFixed(2), 'reported'],
      ['every instance reports the same digest', registry.agree ? 'yes' : '**no**', 'yes'],
    ],
    ['l', 'r', 'l'],
  );
}

function collectionsCell(collections) {
  if (collections === undefined) return 'n/a';
  return ['major', 'marking', 'minor'].map((kind) => `${collections[kind].count} (${collections[kind].ms.toFixed(1)})`).join(' / ');
}

function keysTable(keys, control, pass) {
  return markdownTable(
    [`key history, ${KEY_ROWS.toLocaleString('en')} rows`, 'measured', 'target'],
    [
      [
        'rows in the table: written / after the first flush / at the end',
        `${keys.rowsAtStart.toLocaleString('en')} / ${keys.rowsAfterFirstFlush.toLocaleString('en')} / ${keys.rowsAtEnd.toLocaleString('en')}`,
        `held to the retention: ${pass(keys.rowsAfterFirstFlush === keys.issuers * KEYS_PER_ISSUER && keys.rowsAtEnd === keys.rowsAfterFirstFlush)}`,
      ],
      ['rows read at start-up', keys.startupRows.toLocaleString('en'), 'the table, once'],
      ['start-up (ms)', keys.startupMs.toFixed(0), 'reported'],
      [
        'heap per instance (key history and verifier, array buffers included): after start-up / after the flushes (MiB)',
        `${keys.heapAfterStart.toFixed(1)} / ${keys.heapAfterFlushes.toFixed(1)}`,
        'bounded',
      ],
      ['rows read per flush (5 changed here, 5 by another instance)', keys.rowsReadPerFlush.toFixed(1), 'what changed'],
      [
        `client CPU per flush, the first ${WARMUP} after start-up (hot code compiled): median / p99 (ms)`,
        `${keys.coldP50.toFixed(2)} / ${keys.coldP99.toFixed(2)}`,
        'reported',
      ],
      [
        `client CPU per flush, the ${FLUSHES.toLocaleString('en')} after them: median / p95 / p99 (ms)`,
        `${keys.cpuP50.toFixed(2)} / ${keys.cpuP95.toFixed(2)} / ${keys.cpuP99.toFixed(2)}`,
        `≤ 10: ${pass(keys.cpuP99 <= 10)}`,
      ],
      [
        'the same flushes: the slowest (ms), and how many took over 10 ms',
        `${keys.cpuMax.toFixed(2)}, ${keys.cpuOver10} of ${FLUSHES.toLocaleString('en')}`,
        'reported',
      ],
      [
        "the same flushes, the event loop's thread alone (the rest: V8 compiling and GC helpers on their threads): median / p95 / p99 (ms)",
        `${keys.mainP50.toFixed(2)} / ${keys.mainP95.toFixed(2)} / ${keys.mainP99.toFixed(2)}`,
        'reported',
      ],
      [
        `collections within those flushes (V8's \`gc\` entries, load-independent): major / incremental marking / minor, count (pause ms)`,
        collectionsCell(keys.collections),
        'reported',
      ],
      [
        `the same, over ${control.rowsAfterFirstFlush.toLocaleString('en')} rows (a table 100 times smaller, for comparison): median / p95 / p99 (ms)`,
        `${control.cpuP50.toFixed(2)} / ${control.cpuP95.toFixed(2)} / ${control.cpuP99.toFixed(2)}`,
        'reported',
      ],
    ],
    ['l', 'r', 'l'],
  );
}
