/**
 * Text a store can hold: no U+0000 and no lone surrogate (half of a pair, from an escape such as
 * `"\\ud800"` in a JSON text). No UTF-8 encodes a lone surrogate (raw bytes holding one are refused
 * as not UTF-8; the escape must not let it in), strict JSON readers refuse it, and PostgreSQL
 * refuses both: in `text` (U+0000), in `jsonb` (either), or when a field of a stored `json` is read
 * as text (`->>`). Used by the payment links (fields a link stores) and the key history (kids a
 * JWKS names).
 */

/**
 * {@link isStorableText}'s rule as a regular expression's source (anchored). It matches alike with
 * and without the `u` flag, so schemas state it as it is.
 */
export const STORABLE_TEXT_PATTERN = '^(?:[^\\u0000\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])*$';

const STORABLE_TEXT = new RegExp(STORABLE_TEXT_PATTERN);

/** `true` when `value` holds no U+0000 and no lone surrogate. Linear: one code unit or pair per step. */
export function isStorableText(value: string): boolean {
  return STORABLE_TEXT.test(value);
}
