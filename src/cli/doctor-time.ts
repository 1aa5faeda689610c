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

/**
 * The `--now` option (an ISO 8601 date, or seconds since the epoch) in milliseconds; `fallback()`
 * when not given. @throws {UsageError} naming it.
 */
export function readNow(value: string | undefined, fallback: () => number): number {
  if (value === undefined) return fallback();
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value);
  // A moment a Date can hold (±8.64e15 ms): the commands write it as an ISO 8601 date.
  if (Number.isNaN(new Date(ms).getTime()))
    throw new UsageError(`--now must be an ISO 8601 date or seconds since the epoch, got ${quote(value)}`);
  return ms;
}
