/**
 * `meta`: the caller's own string key/value pairs, echoed in the link and handed to the
 * notification hook (the `merchant_meta` of later transaction notifications).
 */
import { isStorableText } from '../internal/index.js';
import { type FieldErrors, memberPath } from './field-errors.js';
import { type JsonObject, characterCount, isJsonObject, jsonType, member, unstorableText, withinLength } from './field-readers.js';

/** Bounds of `meta`. */
export const META_LIMITS = Object.freeze({
  /** Most entries. */
  maxEntries: 50,
  /** Longest key, in characters (keys are at least 1 character). */
  maxKeyLength: 40,
  /** Longest value, in characters. */
  maxValueLength: 500,
});

/** Keys refused because code reading `meta` could take them for an object's own machinery. */
export const RESERVED_META_KEYS: readonly string[] = Object.freeze(['__proto__', 'constructor', 'prototype']);

const RESERVED_KEYS: ReadonlySet<string> = new Set(RESERVED_META_KEYS);

/** Reads `meta`: `{}` when absent, `undefined` when invalid. */
export function readMeta(body: JsonObject, errors: FieldErrors): Readonly<Record<string, string>> | undefined {
  const value = member(body, 'meta', 'meta', errors, false);
  if (value === undefined) return Object.freeze({});
  if (!isJsonObject(value)) {
    errors.add('meta', 'invalid_type', `meta must be an object of strings, not ${jsonType(value)}.`);
    return undefined;
  }
  const entries = Object.entries(value);
  if (entries.length > META_LIMITS.maxEntries) {
    errors.add('meta', 'invalid_count', `meta may hold at most ${META_LIMITS.maxEntries} entries, got ${entries.length}.`);
    return undefined;
  }
  const before = errors.size;
  const pairs: [string, string][] = [];
  for (const [key, entry] of entries) {
    const path = memberPath('meta', key);
    if (!withinLength(key, 1, META_LIMITS.maxKeyLength)) {
      errors.add(path, 'invalid_length', `meta keys must be 1 to ${META_LIMITS.maxKeyLength} characters long, got ${characterCount(key)}.`);
    } else if (!isStorableText(key)) {
      errors.add(path, 'invalid_format', unstorableText('meta keys', key));
    } else if (RESERVED_KEYS.has(key)) {
      errors.add(path, 'reserved_key', `"${key}" cannot be a meta key.`);
    } else if (typeof entry !== 'string') {
      errors.add(path, 'invalid_type', `meta values must be strings, not ${jsonType(entry)}.`);
    } else if (!withinLength(entry, 0, META_LIMITS.maxValueLength)) {
      errors.add(
        path,
        'invalid_length',
        `meta values must be at most ${META_LIMITS.maxValueLength} characters long, got ${characterCount(entry)}.`,
      );
    } else if (!isStorableText(entry)) {
      errors.add(path, 'invalid_format', unstorableText('meta values', entry));
    } else {
      pairs.push([key, entry]);
    }
  }
  // Object.fromEntries defines own data properties; reserved keys never reach it.
  return errors.size === before ? Object.freeze(Object.fromEntries(pairs)) : undefined;
}
