/**
 * Times as people read them: a date, how far from now, and a warning when a value looks like
 * milliseconds where seconds are due; and the `--now` option that sets "now".
 */
import { MILLISECONDS_THRESHOLD, isoSeconds, quote } from '../internal/index.js';
import { UsageError } from './command.js';

/** `seconds` as an ISO 8601 UTC date, to the second (the hints' own). */
export { isoSeconds };

/** `2 h 5 min`, `45 s`, `3 d 4 h`: the two largest units of `seconds` (absolute). */
export function describeDuration(seconds: number): string {
  let rest = Math.round(Math.abs(seconds));
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['min', 60],
    ['s', 1],
  ] as const) {
    if (rest >= size || (unit === 's' && parts.length === 0)) {
      parts.push(`${Math.floor(rest / size)} ${unit}`);
      rest %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

/**
 * `1893456000 = 2030-01-01T00:00:00Z (in 5 min)`; with `withValue` false, only the date and distance.
 * Adds "looks like milliseconds" (and the date it would then be) for values that do.
 */
export function describeTime(value: number, now: number, withValue = true): string {
  const prefix = withValue ? `${value} = ` : '';
  const date = isoSeconds(value);
  const distance = value === now ? 'now' : value > now ? `in ${describeDuration(value - now)}` : `${describeDuration(now - value)} ago`;
  const millis = value >= MILLISECONDS_THRESHOLD ? `; looks like milliseconds: read as seconds/1000 it is ${isoSeconds(value / 1000)}` : '';
  return `${prefix}${date} (${distance}${millis})`;
}

/** `true` when `value`'s leading `YYYY-MM-DD` is a day of the calendar. */
function isCalendarDay(value: string): boolean {
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/**
 * The `--now` option (an ISO 8601 date, or seconds since the epoch) in milliseconds; `fallback()`
 * when not given. @throws {UsageError} naming it.
 */
export function readNow(value: string | undefined, fallback: () => number): number {
  if (value === undefined) return fallback();
  const expected = `--now must be an ISO 8601 date or seconds since the epoch, got ${quote(value)}`;
  // ISO 8601 only: Date.parse also reads "-1" and "Dec 7" as dates of 2001.
  const iso = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/.exec(value);
  if (!/^\d+$/.test(value) && iso === null) throw new UsageError(`${expected}: give e.g. 2030-01-01T12:00:00Z or 1893499200`);
  // A time of day without its zone would be read in this machine's zone, unlike the gateway's.
  if (iso !== null && value.includes('T') && iso[1] === undefined)
    throw new UsageError(`${expected}, a time without its zone: add Z (UTC) or an offset, as in ${quote(`${value}Z`)}`);
  const ms = iso === null ? Number(value) * 1000 : Date.parse(value);
  // A moment a Date can hold (±8.64e15 ms): the commands write it as an ISO 8601 date. A day past
  // its month's end (2030-02-31) is no date, where Date.parse would roll it over into March.
  if (Number.isNaN(new Date(ms).getTime()) || (iso !== null && !isCalendarDay(value))) throw new UsageError(expected);
  return ms;
}
