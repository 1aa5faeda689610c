/**
 * Checks of the issuer's options: each bad value throws a `TypeError` naming the option.
 */
import { ErnError, formatTenantErn } from '../index.js';

/** A number of seconds within `[min, max]` (or `(min, max]` with `exclusiveMin`), or `fallback`. */
export function secondsOption(
  name: string,
  value: unknown,
  fallback: number,
  limits: { readonly min: number; readonly max: number; readonly exclusiveMin?: boolean },
): number {
  if (value === undefined) return fallback;
  const low = limits.exclusiveMin === true ? `above ${limits.min}` : `at least ${limits.min}`;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value > limits.max ||
    value < limits.min ||
    (limits.exclusiveMin === true && value === limits.min)
  ) {
    throw new TypeError(`${name} must be a number of seconds ${low} and at most ${limits.max}`);
  }
  return value;
}

/** Throws a `TypeError` for any member of `options` not in `known`. */
export function rejectUnknownOptions(owner: string, options: object, known: ReadonlySet<string>): void {
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw new TypeError(`${owner}: unknown option "${key}" (expected one of ${[...known].join(', ')})`);
  }
}

/** A non-empty string without surrounding white space. */
export function textOption(name: string, value: unknown): string {
  if (typeof value !== 'string' || value === '' || value.trim() !== value) {
    throw new TypeError(`${name} must be a non-empty string without surrounding white space`);
  }
  return value;
}

/** `true` for a name the gateway's ERNs take as a product or a tenant id (the root's rule, both parts alike). */
function isNamePart(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    formatTenantErn({ product: value, id: value });
    return true;
  } catch (error) {
    if (error instanceof ErnError) return false;
    throw error;
  }
}

/** One name, or a non-empty array of names (letters, digits, `-`, `_`, `.`), as a frozen list. */
export function namesOption(name: string, value: unknown, required: boolean): readonly string[] | null {
  if (value === undefined && !required) return null;
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0 || !list.every(isNamePart)) {
    throw new TypeError(`${name} must be a name, or a non-empty array of names, of letters, digits, "-", "_" and "."`);
  }
  return Object.freeze([...new Set(list as string[])]);
}
