/**
 * Checks of the issuer's own kinds of option (names, text); numbers, booleans and unknown options
 * are checked by the package's one home of option checks (src/core/options.ts, through src/internal).
 */
import { ErnError, formatTenantErn } from '../index.js';

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
