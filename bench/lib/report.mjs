/**
 * The benchmarks' one table, its ratios, and bench/RESULTS.md, whose parts (`bench`, `memory`,
 * `instructions`) each sit between markers so that each run replaces only its own.
 *
 * A row is `{ id, group, label, rate, spread?, role, baseline? }`:
 * - `rate`: operations per second (or instructions per verification: any "per" figure);
 * - `spread`: tinybench's relative margin of error, in %, when the row was timed by it;
 * - `role`: `'baseline'` (what the group's rows are divided by), `'peer'`, `'ours'`, or
 *   `'reference'` (a row only divided by the baseline);
 * - `baseline`: the id of a row of another group to divide by, when the group has none of its own.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';

const RESULTS_URL = new URL('../RESULTS.md', import.meta.url);
const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/**
 * Each row with `xBaseline` (its rate over its baseline's) and, for paygate-auth's rows,
 * `xBestPeer` and `bestPeer` (over the fastest peer of the same group). `lowerIsBetter` is for
 * counts, where the best peer is the one with the fewest.
 */
export function withRatios(rows, { lowerIsBetter = false } = {}) {
  const byId = new Map(rows.map((row) => [row.id, row]));
  return rows.map((row) => {
    const baseline =
      row.baseline !== undefined ? byId.get(row.baseline) : rows.find((other) => other.group === row.group && other.role === 'baseline');
    const peers = rows.filter((other) => other.group === row.group && other.role === 'peer');
    const best = peers.reduce((a, b) => (a === undefined || (lowerIsBetter ? b.rate < a.rate : b.rate > a.rate) ? b : a), undefined);
    const ours = row.role === 'ours' && best !== undefined;
    return {
      ...row,
      xBaseline: baseline === undefined ? undefined : row.rate / baseline.rate,
      xBestPeer: ours ? row.rate / best.rate : undefined,
      bestPeer: ours ? best.label : undefined,
    };
  });
}

/** The middle of `values` (the upper of the two middle ones for an even count): a rate's median round. */
export function median(values) {
  return [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
}

/** A figure: whole numbers with separators from 100 up, three significant digits below. */
export function figure(value) {
  if (value === undefined || !Number.isFinite(value)) return '–';
  return Math.abs(value) >= 100 ? integer.format(value) : value.toPrecision(3);
}

/** A ratio: two decimals, or two significant digits under 0.1. */
export function ratio(value) {
  if (value === undefined || !Number.isFinite(value)) return '–';
  return `${value < 0.1 ? value.toPrecision(2) : value.toFixed(2)}×`;
}

export function markdownTable(head, rows, align = []) {
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (align[i] === 'r' ? '---:' : '---')).join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}

/**
 * The table of `rows` (with ratios), the group named on its first row only; the spread column only
 * when a row has one.
 */
export function resultTable(rows, { unit = 'per second', lowerIsBetter = false } = {}) {
  const spread = rows.some((row) => row.spread !== undefined);
  const body = withRatios(rows, { lowerIsBetter }).map((row, index, all) => [
    index > 0 && all[index - 1].group === row.group ? '' : row.group,
    row.label,
    figure(row.rate),
    ...(spread ? [row.spread === undefined ? '' : `±${row.spread.toFixed(1)} %`] : []),
    ratio(row.xBaseline),
    row.xBestPeer === undefined ? '' : `${ratio(row.xBestPeer)} ${row.bestPeer}`,
  ]);
  const head = ['mode', 'case', unit, ...(spread ? ['spread'] : []), '× baseline', '× best peer'];
  return markdownTable(head, body, ['l', 'l', 'r', ...(spread ? ['r'] : []), 'r', 'l']);
}

/** `document` with its part `name` replaced by `text` (or `text` appended when absent). */
export function replaceSection(document, name, text) {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const block = `${start}\n${text.trim()}\n${end}`;
  const from = document.indexOf(start);
  const to = document.indexOf(end);
  if (from === -1 || to < from) return `${document.trimEnd()}\n\n${block}\n`;
  return `${document.slice(0, from)}${block}${document.slice(to + end.length)}`;
}

/** Writes part `name` of bench/RESULTS.md. */
export function writeSection(name, text) {
  let document;
  try {
    document = readFileSync(RESULTS_URL, 'utf8');
  } catch {
    const parts = ['bench', 'instructions', 'memory'].map((part) => `<!-- ${part}:start -->\n<!-- ${part}:end -->`);
    document = [
      '# Benchmark results',
      'Written by `npm run bench`, `bench:instructions` and `bench:memory`; see docs/performance.md.',
      ...parts,
    ].join('\n\n');
  }
  writeFileSync(RESULTS_URL, replaceSection(document, name, text));
}

/** What the figures were measured on, in one line. */
export function machineLine() {
  const cpus = os.cpus();
  const { node, v8, openssl } = process.versions;
  return `Node ${`v${node}`} (V8 ${v8}, OpenSSL ${openssl}); ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores; ${os.platform()} ${os.arch()}; load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ')}`;
}
