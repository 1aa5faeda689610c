/**
 * What the load run prints: the request classes with their statuses, the idempotency and
 * read-back figures, the request log, memory before and after, and the checks.
 */
import { CLASSES } from './traffic.mjs';

const MiB = 1024 * 1024;
const mib = (bytes) => (Number.isFinite(bytes) ? `${(bytes / MiB).toFixed(1)} MiB` : 'n/a');
const signedMib = (bytes) => `${bytes >= 0 ? '+' : ''}${(bytes / MiB).toFixed(1)} MiB`;
const joinCounts = (map) =>
  [...map.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, count]) => `${key}×${count}`)
    .join(' ');

/** A plain table: columns padded to their widest cell. */
export function table(header, rows) {
  const widths = header.map((cell, column) => Math.max(String(cell).length, ...rows.map((row) => String(row[column]).length)));
  const line = (row) =>
    row
      .map((cell, column) => String(cell).padEnd(widths[column]))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

export function classTable(tally) {
  const rows = [...tally.entries()].map(([name, counts]) => [
    name,
    CLASSES[name].expected.join('/'),
    counts.count,
    joinCounts(counts.statuses),
    joinCounts(new Map([...counts.codes].filter(([code]) => code !== '-'))),
    counts.unexpected,
    CLASSES[name].refused ? counts.accepted : '',
  ]);
  return table(['class', 'expected', 'requests', 'statuses', 'codes', 'unexpected', 'wrongly accepted'], rows);
}

/** The gateway's memory at each `[label, usage]` sample, and the change from the first to the last. */
export function memoryTable(samples) {
  const first = samples[0][1];
  const last = samples[samples.length - 1][1];
  const row = (label, name, showChange = true) => [
    label,
    ...samples.map(([, usage]) => mib(usage[name])),
    showChange ? signedMib(last[name] - first[name]) : '',
  ];
  const rows = [
    row('rss', 'rss'),
    row('heap used', 'heapUsed'),
    row('heap total', 'heapTotal'),
    row('external', 'external'),
    row('array buffers', 'arrayBuffers'),
  ];
  if (Number.isFinite(last.peakRss)) rows.push(row('peak rss (VmHWM)', 'peakRss', false));
  return table(['gateway memory (after a full GC)', ...samples.map(([label]) => label), 'change'], rows);
}

/** `[name, passed, detail]` rows, printed as PASS/FAIL lines. */
export function checkLines(checks) {
  return checks.map(([name, passed, detail]) => `${passed ? 'PASS' : 'FAIL'}  ${name}${detail ? ` (${detail})` : ''}`).join('\n');
}

export { mib, joinCounts };
