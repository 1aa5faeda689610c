/**
 * How hints and messages write the values they quote: as one safe log line. A quoted value is cut
 * first (so the work is bounded whatever its length), then escaped: `"` and `\`, every control
 * character (C0, DEL, C1), U+2028/U+2029, the bidirectional controls, every default-ignorable
 * (invisible) code point and lone surrogates are shown as escapes, never raw. Lists are shortened.
 * Each function reads its input once.
 */

/** Longest value quoted whole; a longer one is cut and marked with `…`. */
export const MAX_QUOTED_CHARS = 80;
/** Most values of a list quoted; the rest are counted. */
export const MAX_LISTED = 8;

/** Longest hint: longer ones are cut. */
export const MAX_HINT_CHARS = 1000;

/**
 * What a log line must not hold raw: C0, DEL, C1, U+2028/U+2029, the bidirectional controls, every
 * default-ignorable code point (Unicode's invisible characters: soft hyphen, combining grapheme
 * joiner, Hangul fillers, Khmer inherent vowels, Mongolian variation selectors, zero-width space
 * and joiners, word joiner and the invisible operators, variation selectors, BOM, the shorthand
 * and musical format controls, the tags and variation selectors of U+E0000–U+E0FFF: a value that
 * differs from another only by one of them would print the same), a lone surrogate. Each match is
 * one code unit, or the two of a character outside the basic plane (a lone surrogate is told
 * apart by its neighbour alone), so matching is linear. The combining ones (U+034F, U+17B4–U+17B5,
 * the variation selectors) stand alone: in a class with others they would read as one character.
 */
const UNSAFE =
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff0-\ufffb]|\u034f|[\u17b4-\u17b5]|[\u180b-\u180d]|\u180f|[\ufe00-\ufe0f]|\ud82f[\udca0-\udca3]|\ud834[\udd73-\udd7a]|[\udb40-\udb43][\udc00-\udfff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const UNSAFE_OR_QUOTING = new RegExp(`${UNSAFE.source}|["\\\\]`, 'g');

/** `\uXXXX` for each code unit of `text` (one, or the two of a character outside the basic plane). */
function unicodeEscapes(text: string): string {
  let escaped = '';
  for (let index = 0; index < text.length; index += 1) escaped += `\\u${text.charCodeAt(index).toString(16).padStart(4, '0')}`;
  return escaped;
}

function escapeOne(char: string): string {
  return char === '"' || char === '\\' ? `\\${char}` : unicodeEscapes(char);
}

/** `text` with every unsafe code unit written as `\uXXXX`; with `quoting`, `"` and `\` escaped too. */
function escapeUnsafe(text: string, quoting: boolean): string {
  return text.replace(quoting ? UNSAFE_OR_QUOTING : UNSAFE, escapeOne);
}

/** `text` cut to `max` characters (a cut marked with `…`), never splitting a surrogate pair. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? max - 1 : max;
  return `${text.slice(0, end)}…`;
}

/** The start of a `\uXXXX` escape left at the end of a text cut short. */
const PARTIAL_ESCAPE = /\\(?:u[0-9a-f]{0,3})?$/;

/**
 * `hint` made one safe line (unsafe characters escaped) of at most {@link MAX_HINT_CHARS}
 * characters: cut before escaping, so that the work is bounded, and after, as each character
 * escaped takes six (the cut falls between two escapes, never within one).
 */
export function capHint(hint: string): string {
  const escaped = escapeUnsafe(hint.length <= MAX_HINT_CHARS ? hint : cut(hint, MAX_HINT_CHARS - 1), false);
  if (escaped.length <= MAX_HINT_CHARS) return escaped;
  // Never within an escape: `\u20…` would read as no character, or another one.
  return `${cut(escaped, MAX_HINT_CHARS - 1)
    .slice(0, -1)
    .replace(PARTIAL_ESCAPE, '')}…`;
}

/**
 * `value` cut to {@link MAX_QUOTED_CHARS} characters, escaped and quoted: `"a\"b\u202e"`. Every
 * message of the package quotes a value found this way; exported from `paygate-auth` so that an
 * application's own messages quote hostile text as safely (one log line, bounded work).
 */
export function quote(value: string): string {
  return `"${escapeUnsafe(cut(value, MAX_QUOTED_CHARS), true)}"`;
}

/**
 * `value` as JSON on one safe line: no indentation, and every unsafe code unit the JSON text
 * could still hold raw (DEL, C1, U+2028/U+2029, the bidirectional controls) written as `\uXXXX`,
 * which JSON reads back as the same character. Not cut: for machine output.
 */
export function oneLineJson(value: unknown): string {
  return escapeUnsafe(JSON.stringify(value), false);
}

/**
 * `"a", "b" and 3 more`, or `none` for an empty list.
 * @param total how many values the list holds, when `values` holds only its first ones
 */
export function quoteList(values: readonly string[], total = values.length): string {
  if (total === 0) return 'none';
  const shown = values.slice(0, MAX_LISTED).map(quote).join(', ');
  return total > MAX_LISTED ? `${shown} and ${total - MAX_LISTED} more` : shown;
}

/** Latest moment a `Date` holds, in seconds since the epoch (either side of it). */
const MAX_DATE_SECONDS = 8.64e12;

/**
 * `seconds` since the epoch as an ISO 8601 UTC date, to the second (`2030-01-01T00:00:00Z`), or
 * `beyond any calendar date` where no date holds it.
 */
export function isoSeconds(seconds: number): string {
  if (!(Math.abs(seconds) <= MAX_DATE_SECONDS)) return 'beyond any calendar date';
  return new Date(Math.floor(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** What kind of JSON value `value` is, without its content: `a string`, `an array`, `missing`. */
export function kindOf(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return typeof value === 'number' ? 'a number' : typeof value === 'boolean' ? 'a boolean' : 'a string';
}
