/**
 * JSON objects from untrusted input: parsed, stripped of `__proto__` and `constructor` keys at
 * every depth, and frozen, so that nothing downstream can be tricked through a prototype key or
 * change a verified claim.
 *
 * @module paygate-auth
 */

/** A JSON object as parsed. */
export type JsonObject = { readonly [key: string]: unknown };

/** Parses `text` as a JSON object; `undefined` when it is not JSON or not an object. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isJsonObject(value) ? value : undefined;
}

/** `true` for a plain object (not `null`, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Removes prototype-bearing keys and freezes `value` and everything in it; returns `value`. Walks
 * an explicit stack, not the call stack: a claim nested thousands of levels deep cannot overflow it.
 */
export function sanitizeAndFreeze<T>(value: T): T {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next !== 'object' || next === null || Object.isFrozen(next)) continue;
    const record = next as Record<string, unknown>;
    if (Object.hasOwn(record, '__proto__')) Reflect.deleteProperty(record, '__proto__');
    if (Object.hasOwn(record, 'constructor')) Reflect.deleteProperty(record, 'constructor');
    for (const key in record) {
      const child = record[key];
      if (typeof child === 'object' && child !== null) pending.push(child);
    }
    Object.freeze(record);
  }
  return value;
}
