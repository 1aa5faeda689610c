/**
 * ISO 8601 UTC timestamps of payment links: `expires` to the second, `sent` to the microsecond,
 * both with `Z`.
 */

/** What {@link formatSeconds} writes, as a regular expression's source (anchored), for schemas. */
export const SECONDS_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$';

/** What {@link formatMicros} writes, as a regular expression's source (anchored), for schemas. */
export const MICROS_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z$';

/** Whole microseconds since the epoch of a clock reading in milliseconds (which may carry a fraction). */
export function epochMicros(ms: number): number {
  return Math.round(ms * 1000);
}

/** `2026-01-02T03:04:05Z`: whole seconds (`ms` truncated), UTC. */
export function formatSeconds(ms: number): string {
  return `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;
}

/** `2026-01-02T03:04:05.123456Z`: six fractional digits, UTC, from whole microseconds since the epoch. */
export function formatMicros(micros: number): string {
  const seconds = Math.floor(micros / 1_000_000);
  const fraction = String(micros - seconds * 1_000_000).padStart(6, '0');
  return `${formatSeconds(seconds * 1000).slice(0, 19)}.${fraction}Z`;
}
