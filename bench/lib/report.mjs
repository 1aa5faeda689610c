/**
 * Tables and the targets of the benchmark, printed and written to bench/RESULTS.md. Each part of
 * RESULTS.md sits between markers, so the main, memory and instruction runs each replace only
 * their own.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { combineVerdicts, judgeMedian, verdictText } from './statistics.mjs';

export const RESULTS_URL = new URL('../RESULTS.md', import.meta.url);

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function ops(value) {
  return value === undefined ? '–' : integer.format(value);
}

export function ratio(value, digits = 2) {
  return value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits);
}

/**
 * A measured ratio beside the `threshold` it is judged against: two decimals, or as many more (up
 * to four) as it takes not to round it up to the threshold it misses (0.897 is not shown as a
 * failing "0.90", nor 0.8996 as "0.900").
 */
export function ratioAgainst(value, threshold) {
  let digits = 2;
  while (digits < 4 && value < threshold && Number(ratio(value, digits)) >= threshold) digits += 1;
  return ratio(value, digits);
}

/** A number with a true minus sign when it is negative. */
export function signed(text) {
  return text.replace(/^-/, '−');
}

export function markdownTable(head, rows, align) {
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (align?.[i] === 'r' ? '---:' : '---')).join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}

/** The one verifier table: ops/s per mode and the ratio of each to raw one-at-a-time cold. */
export function microTable(micro) {
  const { result, rows } = micro;
  const base = result.raw.cold.median;
  return markdownTable(
    ['verifier', 'warm ops/s', 'cold ops/s', `cold, ${micro.lanes} in flight ops/s`, '× raw: warm / cold / in flight'],
    rows.map((id) => {
      const r = result[id];
      return [
        r.label,
        ops(r.warm?.median),
        ops(r.cold?.median),
        ops(r.inflight?.median),
        [r.warm, r.cold, r.inflight].map((m) => ratio(m === undefined ? undefined : m.median / base)).join(' / '),
      ];
    }),
    ['l', 'r', 'r', 'r', 'r'],
  );
}

/**
 * A judged median's interval for the measured column, e.g. "96 % interval 0.85 to 0.93": `map`
 * turns a ratio into what is shown (a cost, say), `digits` and `unit` format it. An end that
 * would print as the target's line without being on it gets more decimals (up to two more), so
 * that an interval reading "0.85 to 0.90" never hides one that ends below 0.9.
 */
export function intervalText(judged, { map = (value) => value, digits = 2, unit = '' } = {}) {
  const line = judged.line === undefined ? undefined : map(judged.line);
  const shown = (value) => {
    let places = digits;
    while (places < digits + 2 && line !== undefined && value !== line && Number(value.toFixed(places)) === Number(line.toFixed(places))) places += 1;
    return signed(value.toFixed(places));
  };
  const [low, high] = [map(judged.low), map(judged.high)].sort((a, b) => a - b);
  return `${Math.floor(judged.coverage * 100)} % interval ${shown(low)} to ${shown(high)}${unit}`;
}

/**
 * Each target of the benchmark: what it asks, what this run measured, whether it holds (by the
 * median, as it always has), and whether the run's rounds decide it (see `statistics.mjs`).
 */
export function microTargets(micro) {
  const r = micro.result;
  const base = r.raw.cold.median;
  const p = micro.paired;
  // "Ahead of every peer" reads the rounds in which each paygate-auth sample ran between two of the
  // peer with the highest median in that mode (see runMicro).
  const ahead = (mode) => {
    const { peer, samples } = micro.peerPaired[mode];
    const judged = judgeMedian(samples, 1, { strict: true });
    return { ...judged, text: `best peer ${r[peer].label} ${ratio(r[peer][mode].median / base)}×; paygate-auth ÷ it, paired: ${ratio(judged.median)}× (${intervalText(judged)})` };
  };
  // The ratio targets read the paired rounds (each sample between two raw ones; see runPaired);
  // the table's medians are shown beside them.
  const againstRaw = (mode, line) => {
    const { samples } = p[`paygate:${mode}`];
    const judged = judgeMedian(samples, line);
    const rounds = `${ratio(Math.min(...samples))}–${ratio(Math.max(...samples))}`;
    const viaAuthenticate = ratio(p[`paygateAuthenticate:${mode}`].median);
    return { ...judged, text: `${ratioAgainst(judged.median, line)}× raw, paired (${intervalText(judged)}; rounds ${rounds}; \`authenticate()\` ${viaAuthenticate}×)` };
  };
  // A miss's cost reads the rounds in which each sample of the verifier with its cache ran between
  // two of the verifier with `cache: false`: the cost is one minus the ratio, ≤ 5 % a ratio ≥ 0.95.
  const miss = (mode, id = 'paygate') => judgeMedian(micro.missPaired[`${id}:${mode}`].samples, 0.95);
  const cost = (value) => (1 - value) * 100;
  const percent = (value) => `${signed(cost(value).toFixed(1))} %`;
  const missText = (judged) => `${percent(judged.median)} (${intervalText(judged, { map: cost, digits: 1, unit: ' %' })})`;
  // Warm compares the two verifiers' warm samples of the same round.
  const warmRatios = r.paygate.warm.samples.map((rate, round) => rate / r.fastCached.warm.samples[round]);
  const warm = judgeMedian(warmRatios, 2);
  const cold = [againstRaw('cold', 0.9), ahead('cold')];
  const flight = [againstRaw('inflight', 1.5), ahead('inflight')];
  const misses = [miss('cold'), miss('inflight')];
  return [
    {
      target: 'cold, one at a time: ≥ 0.9× raw `crypto.verify`, ahead of every peer',
      measured: `${cold[0].text}; table medians ${ratio(r.paygate.cold.median / base)}×; ${cold[1].text}`,
      ...combineVerdicts(cold),
    },
    {
      target: `cold, ${micro.lanes} in flight: ≥ 1.5× raw one at a time, ahead of every peer in flight`,
      measured: `${flight[0].text}; table medians ${ratio(r.paygate.inflight.median / base)}×, raw in flight ${ratio(r.raw.inflight.median / base)}×; ${flight[1].text}`,
      ...combineVerdicts(flight),
    },
    {
      target: 'warm: ≥ 2× fast-jwt `cache: true` warm',
      measured: `${ratio(warm.median)}×, round by round (${intervalText(warm)}; ${ops(r.paygate.warm.median)} vs ${ops(r.fastCached.warm.median)} ops/s); through \`authenticate()\` ${ratio(r.paygateAuthenticate.warm.median / r.fastCached.warm.median)}×`,
      ...combineVerdicts([warm]),
    },
    {
      target: 'a cache miss costs ≤ 5 % against the same verifier with `cache: false`',
      measured: `${missText(misses[0])} one at a time; ${missText(misses[1])} in flight (each sample between two with \`cache: false\`); a miss kept in the cache (\`cacheAdmission: 'first-use'\`, never used again): ${percent(miss('cold', 'paygateFirstUse').median)} and ${percent(miss('inflight', 'paygateFirstUse').median)}`,
      ...combineVerdicts(misses),
    },
  ];
}

export function targetTable(targets) {
  return markdownTable(
    ['target', 'measured', 'holds'],
    targets.map((t) => [t.target, t.measured, t.pass === undefined ? '–' : verdictText(t)]),
  );
}

/** Replaces (or appends) the part of RESULTS.md between `<!-- name -->` and `<!-- /name -->`. */
export function writeSection(name, body, title = '# paygate-auth benchmark results') {
  let text;
  try {
    text = readFileSync(RESULTS_URL, 'utf8');
  } catch {
    text = `${title}\n\nWritten by \`npm run bench\`, \`npm run bench:memory\` and \`npm run bench:instructions\`; do not edit by hand.\n`;
  }
  const open = `<!-- ${name} -->`;
  const close = `<!-- /${name} -->`;
  const block = `${open}\n${body.trim()}\n${close}`;
  const from = text.indexOf(open);
  const to = text.indexOf(close);
  text = from !== -1 && to > from ? text.slice(0, from) + block + text.slice(to + close.length) : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(RESULTS_URL, text);
}
