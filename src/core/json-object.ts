/**
 * JSON objects from untrusted input: parsed, refused when an object repeats a member name, stripped
 * of `__proto__` and `constructor` keys at every depth, and frozen, so that nothing downstream can
 * be tricked through a prototype key, a second reading of a repeated member, or a changed claim.
 */
import { type MemberPath, findDuplicateMember } from './duplicate-members.js';

/** A JSON object as parsed. */
export type JsonObject = { readonly [key: string]: unknown };

/**
 * Parses `text` as a JSON object; `undefined` when it is not JSON, not an object, or when an object
 * in it repeats a member name (`{"alg":"none","alg":"RS256"}`: readers disagree on which counts).
 */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isJsonObject(value) || findDuplicateMember(text, value) !== undefined) return undefined;
  return value;
}

/**
 * The repeated member that made {@link parseJsonObject} refuse `text` (an object in it repeats a
 * name), or `undefined` when it refused it for not being a JSON object at all.
 */
export function repeatedMember(text: string): MemberPath | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return isJsonObject(value) ? findDuplicateMember(text) : undefined;
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
