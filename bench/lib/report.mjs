/**
 * Tables and the targets of the benchmark, printed and written to bench/RESULTS.md. Each part of
 * RESULTS.md sits between markers, so the main, memory and instruction runs each replace only
 * their own.
 */
import { readFileSync, writeFileSync } from 'node:fs';

export const RESULTS_URL = new URL('../RESULTS.md', import.meta.url);

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function ops(value) {
  return value === undefined ? '–' : integer.format(value);
}

export function ratio(value, digits = 2) {
  return value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits);
}

/**
 * A measured ratio beside the `threshold` it is judged against: two decimals, or three when two
 * would round it up to the threshold it misses (0.897 is not shown as a failing "0.90").
 */
export function ratioAgainst(value, threshold) {
  const shown = ratio(value);
  return Number(shown) >= threshold && value < threshold ? ratio(value, 3) : shown;
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

/** Each target of the benchmark: what it asks, what this run measured, whether it holds. */
export function microTargets(micro) {
  const r = micro.result;
  const base = r.raw.cold.median;
  // "Ahead of every peer" reads the rounds in which each paygate-auth sample ran between two of the
  // peer with the highest median in that mode (see runMicro).
  const ahead = (mode) => {
    const { peer, median: m, samples } = micro.peerPaired[mode];
    return {
      pass: m > 1,
      text: `best peer ${r[peer].label} ${ratio(r[peer][mode].median / base)}×; paygate-auth ÷ it, paired: ${ratio(m)}× (rounds ${ratio(Math.min(...samples))}–${ratio(Math.max(...samples))})`,
    };
  };
  const coldPeer = ahead('cold');
  const flightPeer = ahead('inflight');
  const cold = r.paygate.cold.median;
  const flight = r.paygate.inflight.median;
  const warm = r.paygate.warm.median;
  // The ratio targets read the paired rounds (each sample between two raw ones; see runPaired);
  // the table's medians are shown beside them. A miss's cost reads the rounds in which each sample
  // of the verifier with its cache ran between two of the verifier with `cache: false`.
  const p = micro.paired;
  const pairedCost = (mode, id = 'paygate') => 1 - micro.missPaired[`${id}:${mode}`].median;
  const missCost = pairedCost('cold');
  const missCostFlight = pairedCost('inflight');
  const percent = (cost) => `${(cost * 100).toFixed(1)} %`;
  const pairedRange = (id) => `${ratio(Math.min(...p[id].samples))}–${ratio(Math.max(...p[id].samples))}`;
  return [
    {
      target: 'cold, one at a time: ≥ 0.9× raw `crypto.verify`, ahead of every peer',
      measured: `${ratioAgainst(p['paygate:cold'].median, 0.9)}× raw, paired (rounds ${pairedRange('paygate:cold')}; \`authenticate()\` ${ratio(p['paygateAuthenticate:cold'].median)}×); table medians ${ratio(cold / base)}×; ${coldPeer.text}`,
      pass: p['paygate:cold'].median >= 0.9 && coldPeer.pass,
    },
    {
      target: `cold, ${micro.lanes} in flight: ≥ 1.5× raw one at a time, ahead of every peer in flight`,
      measured: `${ratioAgainst(p['paygate:inflight'].median, 1.5)}× raw, paired (rounds ${pairedRange('paygate:inflight')}; \`authenticate()\` ${ratio(p['paygateAuthenticate:inflight'].median)}×); table medians ${ratio(flight / base)}×, raw in flight ${ratio(r.raw.inflight.median / base)}×; ${flightPeer.text}`,
      pass: p['paygate:inflight'].median >= 1.5 && flightPeer.pass,
    },
    {
      target: 'warm: ≥ 2× fast-jwt `cache: true` warm',
      measured: `${ratio(warm / r.fastCached.warm.median)}× (${ops(warm)} vs ${ops(r.fastCached.warm.median)} ops/s); through \`authenticate()\` ${ratio(r.paygateAuthenticate.warm.median / r.fastCached.warm.median)}×`,
      pass: warm / r.fastCached.warm.median >= 2,
    },
    {
      target: 'a cache miss costs ≤ 5 % against the same verifier with `cache: false`',
      measured: `${percent(missCost)} one at a time; ${percent(missCostFlight)} in flight (each sample between two with \`cache: false\`); a miss kept in the cache (\`cacheAdmission: 'first-use'\`, never used again): ${percent(pairedCost('cold', 'paygateFirstUse'))} and ${percent(pairedCost('inflight', 'paygateFirstUse'))}`,
      pass: missCost <= 0.05 && missCostFlight <= 0.05,
    },
  ];
}

export function targetTable(targets) {
  return markdownTable(
    ['target', 'measured', 'holds'],
    targets.map((t) => [t.target, t.measured, t.pass === undefined ? '–' : t.pass ? 'yes' : '**no**']),
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
