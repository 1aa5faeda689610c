/**
 * How hints write the values they quote: JSON-quoted (control characters escaped, so a hint is one
 * safe log line), cut when long, lists shortened. Only values a client sent or public
 * configuration are ever given to these functions.
 *
 * @module paygate-auth
 */

/** Longest value quoted whole; a longer one is cut and marked with `…`. */
export const MAX_QUOTED_CHARS = 80;
/** Most values of a list quoted; the rest are counted. */
export const MAX_LISTED = 8;

/** Longest hint: longer ones are cut. */
export const MAX_HINT_CHARS = 1000;

/** `hint` cut to {@link MAX_HINT_CHARS} characters, marked with `…` when cut. */
export function capHint(hint: string): string {
  return hint.length <= MAX_HINT_CHARS ? hint : `${hint.slice(0, MAX_HINT_CHARS - 1)}…`;
}

/** `value` as a JSON string, cut to {@link MAX_QUOTED_CHARS} characters. */
export function quote(value: string): string {
  return JSON.stringify(value.length > MAX_QUOTED_CHARS ? `${value.slice(0, MAX_QUOTED_CHARS)}…` : value);
}

/** `"a", "b" and 3 more`, or `none` for an empty list. */
export function quoteList(values: readonly string[]): string {
  if (values.length === 0) return 'none';
  const shown = values.slice(0, MAX_LISTED).map(quote).join(', ');
  return values.length > MAX_LISTED ? `${shown} and ${values.length - MAX_LISTED} more` : shown;
}

/** What kind of JSON value `value` is, without its content: `a string`, `an array`, `missing`. */
export function kindOf(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return typeof value === 'number' ? 'a number' : typeof value === 'boolean' ? 'a boolean' : 'a string';
}
