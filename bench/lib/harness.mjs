/**
 * Timing: one sample runs an operation for a time budget (or an operation count) and gives ops/s.
 * Three ways to run: a sync loop, an `await` loop (one at a time), and N lanes each awaiting its
 * own operation (N in flight). Every benchmark is sampled once per round; rounds rotate the order
 * and the median of the rounds is reported, so a burst of load elsewhere touches one sample of each.
 *
 * Each sample starts after a full collection, so that no case pays for another's garbage, and then
 * warms its case up, untimed, on inputs it will not time. The collection frees the previous
 * sample's objects; V8 then discards the optimised code that relied on their shapes, and the next
 * few thousand operations run while it recompiles (measured with 64 in flight: the first 4,000 of
 * 10,000 tokens after a collection took 8 to 23 % more CPU each than without one). A service
 * does not meet a full collection every 300 ms, so a sample times its case once the JIT has
 * settled again.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

/** Operations between two clock reads. */
const CHUNK = 16;

let collect = globalThis.gc;
if (typeof collect !== 'function') {
  v8.setFlagsFromString('--expose-gc');
  collect = vm.runInNewContext('gc');
}

/** A full garbage collection (untimed, between samples). */
export function gc() {
  collect();
}

/** Runs sync `op(token)` over `tokens` (cycled from `offset`). */
export function sampleSync(op, tokens, { budgetMs, maxOps = Infinity, offset = 0 }) {
  const n = tokens.length;
  let index = offset % n;
  let done = 0;
  const start = performance.now();
  const end = start + budgetMs;
  let now = start;
  while (now < end && done < maxOps) {
    const stop = Math.min(done + CHUNK, maxOps);
    for (; done < stop; done += 1) {
      op(tokens[index]);
      index = index + 1 === n ? 0 : index + 1;
    }
    now = performance.now();
  }
  return { ops: done, ms: now - start };
}

/**
 * Awaits `op(token)` one at a time. `check(result)`, when given, runs on each result after the
 * `await`, as a caller's own code runs after its `await` (a route's scope check, say), so that the
 * operation needs no async function of its own around it.
 */
export async function sampleSequential(op, tokens, { budgetMs, maxOps = Infinity, offset = 0, check }) {
  const n = tokens.length;
  let index = offset % n;
  let done = 0;
  const start = performance.now();
  const end = start + budgetMs;
  let now = start;
  while (now < end && done < maxOps) {
    const stop = Math.min(done + CHUNK, maxOps);
    for (; done < stop; done += 1) {
      const result = await op(tokens[index]);
      if (check !== undefined) check(result);
      index = index + 1 === n ? 0 : index + 1;
    }
    now = performance.now();
  }
  return { ops: done, ms: now - start };
}

/** Keeps `lanes` operations in flight until the budget or `maxOps` is spent; `check` as above. */
export async function sampleInFlight(op, tokens, { budgetMs, maxOps = Infinity, offset = 0, lanes = 64, check }) {
  const n = tokens.length;
  let index = offset % n;
  let started = 0;
  let finished = 0;
  let stop = false;
  const start = performance.now();
  const end = start + budgetMs;
  const lane = async () => {
    while (!stop && started < maxOps) {
      started += 1;
      const token = tokens[index];
      index = index + 1 === n ? 0 : index + 1;
      const result = await op(token);
      if (check !== undefined) check(result);
      finished += 1;
      if ((finished & (CHUNK - 1)) === 0 && performance.now() >= end) stop = true;
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return { ops: finished, ms: performance.now() - start };
}

/** One sample of case `c`, in ops/s: a full collection, the case's untimed warm-up, the timed sample. */
async function rateOf(c, round) {
  gc();
  await c.warmUp(round);
  const { ops, ms } = await c.sample(round);
  return (ops * 1000) / ms;
}

/**
 * Runs every case `rounds` times, in a rotated order each round; returns ops/s samples per case id.
 * A case is `{ id, warmUp(round) → Promise, sample(round) → Promise<{ ops, ms }> }`; `warmUp` runs
 * untimed right before each `sample`.
 */
export async function runRounds(cases, rounds, onSample = () => {}) {
  const samples = new Map(cases.map((c) => [c.id, []]));
  for (let round = 0; round < rounds; round += 1) {
    const shift = round % cases.length;
    const order = [...cases.slice(shift), ...cases.slice(0, shift)];
    for (const c of order) {
      const rate = await rateOf(c, round);
      samples.get(c.id).push(rate);
      onSample(c, round, rate);
    }
  }
  return samples;
}

/**
 * Ratios of each of `cases` (each with an `id`) to `base`, paired in time: `base` is measured
 * first, then, round after round, every case followed by `base` again, and a case's ratio is its
 * rate over the mean of the two `base` rates either side of it. A slow spell of the machine
 * (seconds long on a shared two-core VM) then weighs on both sides of a ratio, which medians of
 * rates taken seconds apart cannot promise. `measure(item, round)` resolves to a rate;
 * `onRatio(c, round, ratio)` hears each ratio. Returns the ratios per case id, one per round.
 */
export async function pairRates(base, cases, rounds, measure, onRatio = () => {}) {
  const ratios = new Map(cases.map((c) => [c.id, []]));
  let before = await measure(base, 0);
  for (let round = 0; round < rounds; round += 1) {
    for (const c of cases) {
      const rate = await measure(c, round);
      const after = await measure(base, round);
      const ratio = rate / ((before + after) / 2);
      ratios.get(c.id).push(ratio);
      onRatio(c, round, ratio);
      before = after;
    }
  }
  return ratios;
}

/** {@link pairRates} over benchmark cases, each sample taken as {@link runRounds} takes it. */
export function runPaired(base, cases, rounds) {
  return pairRates(base, cases, rounds, rateOf);
}
