/**
 * The verifier rows of `npm run bench`, timed by tinybench in one process and one run:
 * - cold: distinct tokens one at a time (BENCH_TOKENS, 10,000), every pass over them on a fresh
 *   verifier, so that paygate-auth's result cache never holds the token being checked;
 * - warm: one token again and again, through a cache (paygate-auth's, fast-jwt's `cache: true`);
 * - 64 in flight: distinct tokens, 64 verifications awaited at once; the CPU each verification took
 *   is logged too, the whole process's and the event loop's thread's (Linux), whose work competes
 *   with libuv's pool for the cores.
 * One tinybench iteration is a batch of verifications, so that its timer and `await` weigh little.
 */
import { Bench } from 'tinybench';
import { mainThreadCpuMs, processCpuMs } from './lib/thread-cpu.mjs';
import { ISSUER, badTokens, claimsFor, createBenchKey, rawParts, signMany, signToken } from './lib/tokens.mjs';
import {
  awsJwtVerify,
  fastJwtVerify,
  inFlight,
  joseVerify,
  jsonwebtokenVerify,
  paygateVerifier,
  qualify,
  rawVerify,
  rawVerifyCallback,
} from './lib/verifiers.mjs';

const COLD = 'cold, one at a time';
const WARM = 'warm (cached token)';
const IN_FLIGHT = '64 in flight';
const LANES = 64;
const BATCH = { [COLD]: 100, [WARM]: 1000, [IN_FLIGHT]: 1280 };

/** In-flight verifications started since the last measured phase began (see `setup`). */
let done = 0;

/**
 * A tinybench task for `c`: `{ group, make, input, async }` where `make()` builds the operation
 * (again for every pass over the inputs unless the group is warm).
 */
function addTask(bench, c, inputs) {
  const batch = BATCH[c.group];
  const fresh = c.group !== WARM;
  let op;
  let position = inputs.length;
  const take = () => {
    const start = position;
    position += batch;
    return start;
  };
  const beforeEach = async () => {
    if (op === undefined || position + batch > inputs.length) {
      position = 0;
      if (op === undefined || fresh) op = await c.make();
    }
  };
  let fn;
  if (c.group === IN_FLIGHT)
    fn = () => {
      done += batch;
      return inFlight(op, inputs, take(), batch, LANES);
    };
  else if (c.async)
    fn = async () => {
      const start = take();
      for (let i = start; i < start + batch; i += 1) await op(inputs[i]);
    };
  else
    fn = () => {
      const start = take();
      for (let i = start; i < start + batch; i += 1) op(inputs[i]);
    };
  bench.add(c.id, fn, { beforeEach, async: c.group === IN_FLIGHT || c.async === true });
}

/** The verifier rows (see bench/lib/report.mjs for a row's shape). */
export default async function verifierRows({ log, timeMs }) {
  const count = Number(process.env.BENCH_TOKENS ?? 10_000);
  const key = createBenchKey();
  let started = performance.now();
  const tokens = await signMany(key, ISSUER, count);
  log(`signed ${count} distinct tokens in ${Math.round(performance.now() - started)} ms`);
  const parts = tokens.map(rawParts);
  const warmToken = signToken(key, claimsFor(ISSUER, 'warm'));
  const warmTokens = new Array(BATCH[WARM]).fill(warmToken);
  const bad = badTokens(key, ISSUER);

  const paygate = async (options) => {
    const verifier = await paygateVerifier(key.jwk, options);
    return (token) => verifier.verify(token);
  };
  const cases = [
    {
      id: 'cold:raw',
      group: COLD,
      label: '`crypto.verify`, KeyObject built once',
      role: 'baseline',
      make: () => rawVerify(key),
      raw: true,
    },
    {
      id: 'cold:paygate',
      group: COLD,
      label: 'paygate-auth `verify()`',
      role: 'ours',
      make: () => paygate(),
      async: true,
    },
    {
      id: 'cold:fast-jwt',
      group: COLD,
      label: 'fast-jwt, no cache',
      role: 'peer',
      make: () => fastJwtVerify(key, false),
    },
    { id: 'cold:aws', group: COLD, label: 'aws-jwt-verify `verifySync`', role: 'peer', make: () => awsJwtVerify(key) },
    { id: 'cold:jose', group: COLD, label: 'jose `jwtVerify`', role: 'peer', make: () => joseVerify(key), async: true },
    { id: 'cold:jsonwebtoken', group: COLD, label: 'jsonwebtoken', role: 'peer', make: () => jsonwebtokenVerify(key) },
    {
      id: 'warm:paygate',
      group: WARM,
      label: 'paygate-auth `verify()`',
      role: 'ours',
      baseline: 'cold:raw',
      make: () => paygate(),
      async: true,
    },
    {
      id: 'warm:fast-jwt',
      group: WARM,
      label: 'fast-jwt, `cache: true`',
      role: 'peer',
      baseline: 'cold:raw',
      make: () => fastJwtVerify(key, true),
    },
    {
      id: 'inflight:raw',
      group: IN_FLIGHT,
      label: '`crypto.verify` callback form',
      role: 'baseline',
      make: () => rawVerifyCallback(key),
      raw: true,
    },
    { id: 'inflight:paygate', group: IN_FLIGHT, label: 'paygate-auth `verify()`', role: 'ours', make: () => paygate() },
    { id: 'inflight:jose', group: IN_FLIGHT, label: 'jose `jwtVerify`', role: 'peer', make: () => joseVerify(key) },
  ];

  // The CPU of each in-flight case's measured phase: the process's and the event loop's, per verification.
  const cpu = new Map();
  let cpuAtStart;
  const inFlightTask = (task) => cases.find((c) => c.id === task.name)?.group === IN_FLIGHT;
  const setup = (task, mode) => {
    if (mode !== 'run' || !inFlightTask(task)) return;
    done = 0;
    cpuAtStart = { process: processCpuMs(), loop: mainThreadCpuMs() };
  };
  const teardown = (task, mode) => {
    if (mode !== 'run' || !inFlightTask(task)) return;
    cpu.set(task.name, {
      process: ((processCpuMs() - cpuAtStart.process) * 1000) / done,
      loop: ((mainThreadCpuMs() - cpuAtStart.loop) * 1000) / done,
    });
  };
  const bench = new Bench({ time: timeMs, warmupTime: Math.min(500, timeMs / 2), iterations: 16, throws: true, setup, teardown });
  for (const c of cases) {
    const verify = await c.make();
    if (c.raw) await qualify(c.label, verify, rawParts(warmToken), { tampered: rawParts(bad.tampered) });
    else await qualify(c.label, verify, warmToken, bad);
    addTask(bench, c, c.raw ? parts : c.group === WARM ? warmTokens : tokens);
  }
  started = performance.now();
  await bench.run();
  log(`timed ${cases.length} verifier cases in ${Math.round((performance.now() - started) / 1000)} s`);
  for (const [id, spent] of cpu) {
    log(`${id}: CPU per verification ${spent.process.toFixed(1)} µs, of which the event loop's thread ${spent.loop.toFixed(1)} µs`);
  }

  return cases.map(({ id, group, label, role, baseline }) => {
    const { latency } = bench.getTask(id).result;
    return { id, group, label, role, baseline, rate: (BATCH[group] * 1000) / latency.mean, spread: latency.rme };
  });
}
