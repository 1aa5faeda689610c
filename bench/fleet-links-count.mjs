/**
 * The instructions the client executes per link (the handler with `PostgresDirectory`, as
 * `bench/fleet-links.mjs` runs it) and per raw `INSERT … RETURNING`, counted by valgrind's
 * callgrind: a count does not move with the machine's load, as the bench's timed CPU does.
 *
 * Each kind runs twice under callgrind, `warm-up` operations then `counted` more, and `warm-up`
 * then `2 × counted`; the difference over `counted` is one operation, 16 in flight. As in
 * `bench/instructions.mjs`, V8 runs with `--predictable` and a large old generation, and
 * callgrind counts inside Node's event loop, not inside V8's optimising compiler nor a
 * collection. The server is a throw-away one started by each run (not counted: another process).
 *
 * `node bench/fleet-links-count.mjs` (after `npm run build`; BENCH_LINK_COUNT_WARMUP, default
 * 3000; BENCH_LINK_COUNT, default 1000; BENCH_LINK_COUNT_KINDS, default `link,raw`). Prints;
 * writes nothing. Inside a run: `node bench/fleet-links-count.mjs run <kind> <warm-up> <counted>`.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { poolSettings } from 'paygate-auth/postgres';
import { linkBench, runMany } from './lib/link-bench.mjs';
import { throwAwayServerOrSkip } from './lib/postgres-server.mjs';

const IN_FLIGHT = 16;
const TOGGLES = ['node::SpinEventLoopInternal*', 'v8::internal::Runtime_Compile*', 'v8::internal::Heap::CollectGarbage(*'];
const NODE_FLAGS = ['--predictable', '--hash-seed=1', '--random-seed=1', '--initial-old-space-size=4096'];

if (process.argv[2] === 'run') {
  const [kind, warmUp, counted, url] = [process.argv[3], Number(process.argv[4]), Number(process.argv[5]), process.argv[6]];
  // A database of its own on the parent's server, so that each run starts from empty tables.
  const name = `bench_${process.pid}`;
  const server = new pg.Client(url);
  await server.connect();
  await server.query(`CREATE DATABASE ${name}`);
  const own = url.replace(/\/[^/]*$/, `/${name}`);
  const admin = new pg.Pool(poolSettings(own, { max: 1 }));
  const pool = new pg.Pool(poolSettings(own, { max: IN_FLIGHT }));
  try {
    // A minute per statement: under callgrind the client runs about 50 times slower.
    const bench = await linkBench(admin, pool, 60_000);
    await runMany(bench[kind], warmUp + counted, IN_FLIGHT);
    await bench.close();
  } catch (error) {
    console.error(error);
    process.exitCode = 1;
  } finally {
    await pool.end();
    await admin.end();
    await server.query(`DROP DATABASE ${name}`);
    await server.end();
  }
} else {
  const server = await throwAwayServerOrSkip();
  const warmUp = Number(process.env.BENCH_LINK_COUNT_WARMUP ?? 3000);
  const counted = Number(process.env.BENCH_LINK_COUNT ?? 1000);
  const kinds = (process.env.BENCH_LINK_COUNT_KINDS ?? 'link,raw').split(',');
  const script = fileURLToPath(import.meta.url);
  const count = (kind, n) => {
    const args = [
      '--tool=callgrind',
      '--callgrind-out-file=/dev/null',
      '--collect-atstart=no',
      ...TOGGLES.map((t) => `--toggle-collect=${t}`),
    ];
    const run = spawnSync(
      'valgrind',
      [...args, process.execPath, ...NODE_FLAGS, script, 'run', kind, String(warmUp), String(n), server.url],
      {
        encoding: 'utf8',
      },
    );
    const match = /Collected : (\d+)/.exec(run.stderr);
    if (run.status !== 0 || match === null) throw new Error(`callgrind run of ${kind} failed:\n${run.stderr.slice(-2000)}`);
    return Number(match[1]);
  };
  const perOp = {};
  try {
    for (const kind of kinds) {
      perOp[kind] = (count(kind, 2 * counted) - count(kind, counted)) / counted;
      console.log(
        `${kind}: ${Math.round(perOp[kind]).toLocaleString('en')} instructions per operation (${IN_FLIGHT} in flight, ${warmUp} + ${counted})`,
      );
    }
    if (perOp.link !== undefined && perOp.raw !== undefined) console.log(`link / raw: ${(perOp.link / perOp.raw).toFixed(2)}×`);
  } finally {
    server.stop();
  }
}
