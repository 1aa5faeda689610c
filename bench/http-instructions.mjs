/**
 * `node bench/http-instructions.mjs` (after `npm run build`): the server's instructions per request
 * on each route of `npm run bench:http`, counted by valgrind's callgrind over the whole server
 * process (every thread, the collector and the optimising compiler included), the requests sent
 * from this process over HTTP on loopback. A count does not move with the machine's load, as the
 * CPU times of `npm run bench:http` do on a shared host.
 *
 * Each route is counted in two runs of the server (`node bench/http.mjs serve <framework>` under
 * `valgrind --tool=callgrind`): `warm-up` requests then `counted` more, and `warm-up` then
 * `2 × counted`; the difference over `counted` is one request. V8 runs with `--predictable` and
 * fixed seeds, so that a run repeats.
 *
 * Environment: BENCH_HTTP_INSTR_WARMUP (3000), BENCH_HTTP_INSTR_COUNT (2000),
 * BENCH_HTTP_INSTR_CONNECTIONS (1: each request one turn of the server's event loop, so that a
 * count repeats),
 * BENCH_HTTP_INSTR_ROUTES (`framework:route`, comma-separated; routes `none`, `pass`, `paygate`,
 * `peer`; default every route but the peers), BENCH_HTTP_INSTR_OUT (a directory: callgrind's
 * profile of each run is written there, `<route>-<requests>.out`, for callgrind_annotate).
 */
import { fork, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { figure, machineLine, markdownTable, ratio } from './lib/report.mjs';
import { ISSUER, createBenchKey, signMany } from './lib/tokens.mjs';

const warmUp = Number(process.env.BENCH_HTTP_INSTR_WARMUP ?? 3000);
const counted = Number(process.env.BENCH_HTTP_INSTR_COUNT ?? 2000);
const DEFAULT_ROUTES = ['express', 'fastify', 'hono'].flatMap((framework) =>
  ['none', 'pass', 'paygate'].map((route) => `${framework}:${route}`),
);
const routes = process.env.BENCH_HTTP_INSTR_ROUTES?.split(',') ?? DEFAULT_ROUTES;
if (!(Number.isInteger(warmUp) && warmUp >= 0 && Number.isInteger(counted) && counted >= 100)) {
  console.error('bench/http-instructions.mjs: BENCH_HTTP_INSTR_WARMUP ≥ 0, BENCH_HTTP_INSTR_COUNT ≥ 100');
  process.exit(2);
}
if (spawnSync('valgrind', ['--version']).status !== 0) {
  console.error('bench/http-instructions.mjs needs valgrind on the PATH (Debian: apt-get install valgrind)');
  process.exit(2);
}

const PATH = '/payments/ping';
const connections = Number(process.env.BENCH_HTTP_INSTR_CONNECTIONS ?? 1);

/** One GET of `PATH` on `agent`; throws unless it is answered 200. */
function get(port, agent, authorization) {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path: PATH, agent, headers: { authorization } }, (response) => {
      response.resume().on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`answered ${response.statusCode}`))));
    });
    outgoing.on('error', reject).end();
  });
}

/**
 * Sends `amount` requests to `port`, each connection one at a time (no timeout: under callgrind
 * the first requests are slow), the headers in turn.
 */
async function load(port, headers, amount) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  let sent = 0;
  const lane = async () => {
    while (sent < amount) {
      const index = sent++;
      await get(port, agent, headers[index % headers.length]);
    }
  };
  await Promise.all(Array.from({ length: connections }, lane));
  agent.destroy();
}

const SERVER = fileURLToPath(new URL('./http.mjs', import.meta.url));
/**
 * Counting toggles on inside Node's event loop, off inside V8's optimising compiler and a
 * collection (as in bench/instructions.mjs): over the whole process, when a collection or a
 * compilation falls varies from run to run by more than a request costs.
 */
const TOGGLES = ['node::SpinEventLoopInternal*', 'v8::internal::Runtime_Compile*', 'v8::internal::Heap::CollectGarbage(*'];
const NODE_FLAGS = ['--predictable', '--hash-seed=1', '--random-seed=1', '--initial-old-space-size=4096'];
const running = new Set();
process.on('exit', () => {
  for (const child of running) child.kill();
});

/** The instructions the server process executed, from start to exit, answering `amount` requests on `id`. */
async function countRun(id, jwk, headers, amount) {
  const [framework] = id.split(':');
  const child = fork(SERVER, ['serve', framework], {
    execPath: 'valgrind',
    execArgv: [
      '--tool=callgrind',
      `--callgrind-out-file=${process.env.BENCH_HTTP_INSTR_OUT ? `${process.env.BENCH_HTTP_INSTR_OUT}/${id}-${amount}.out` : '/dev/null'}`,
      '--collect-atstart=no',
      ...TOGGLES.map((toggle) => `--toggle-collect=${toggle}`),
      process.execPath,
      ...NODE_FLAGS,
    ],
    env: { ...process.env, BENCH_JWK: JSON.stringify(jwk) },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  running.add(child);
  child.on('close', () => running.delete(child));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    stderr += chunk;
  });
  const [{ ports }] = await once(child, 'message');
  const port = ports[id];
  if (port === undefined) throw new Error(`${id}: no such route (${Object.keys(ports).join(', ')})`);
  await load(port, headers, amount);
  child.send('exit');
  const [code] = await once(child, 'close');
  const instructions = Number(/Collected\s*:\s*(\d+)/.exec(stderr)?.[1]);
  if (code !== 0 || !(instructions > 0)) throw new Error(`${id}: exit ${code}\n${stderr}`);
  if (process.env.BENCH_HTTP_INSTR_VERBOSE) console.log(`    ${id}, ${amount} requests: ${instructions}`);
  return instructions;
}

const key = createBenchKey();
const headers = (await signMany(key, ISSUER, 100)).map((token) => `Bearer ${token}`);
console.log(`server instructions per request, ${new Date().toISOString()}; ${machineLine()}`);
const rows = [];
for (const id of routes) {
  const [once_, twice] = await Promise.all([
    countRun(id, key.jwk, headers, warmUp + counted),
    countRun(id, key.jwk, headers, warmUp + 2 * counted),
  ]);
  const perRequest = (twice - once_) / counted;
  rows.push([id, perRequest]);
  console.log(`  ${id}: ${Math.round(perRequest)} instructions per request`);
}
const bare = new Map(rows.filter(([id]) => id.endsWith(':none')).map(([id, count]) => [id.split(':')[0], count]));
const table = markdownTable(
  ['route', 'instructions per request', 'added', 'bare ÷ route'],
  rows.map(([id, count]) => {
    const base = bare.get(id.split(':')[0]);
    const own = base === undefined || id.endsWith(':none');
    return [id, figure(count), own ? '' : `+${figure(count - base)}`, own ? '' : ratio(base / count)];
  }),
  ['l', 'r', 'r', 'r'],
);
console.log(
  `\n${warmUp} requests, then ${counted} counted; ${connections} connection(s) each sending one request at a time, 100 tokens reused.\n\n${table}`,
);
