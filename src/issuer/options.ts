/**
 * Checks of the issuer's own kinds of option (names, text); numbers, booleans and unknown options
 * are checked by the package's one home of option checks (src/core/options.ts, through src/internal).
 */
import { ErnError, formatTenantErn } from '../index.js';
import { describeListFault, describeValue, isHttpsUri, quote } from '../internal/index.js';

/** What the contract asks of an `iss` and an audience, as the gateway's registry checks it. */
export const URI_RULE = 'must be an https: URI without credentials (http: only on a loopback host)';

/** What a URI `value` that breaks {@link URI_RULE} is, for the message: never a credential. */
function describeUri(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  return url !== undefined && (url.username !== '' || url.password !== '') ? 'a URI carrying credentials' : quote(value);
}

/** An `iss` the gateway's registry can hold: a URI by {@link URI_RULE}. @throws {TypeError} naming `name` and the value. */
export function issuerOption(name: string, value: unknown): string {
  const issuer = textOption(name, value);
  if (!isHttpsUri(issuer)) throw new TypeError(`${name} ${URI_RULE}, got ${describeUri(issuer)}`);
  return issuer;
}

/** A non-empty string without surrounding white space. */
export function textOption(name: string, value: unknown): string {
  if (typeof value !== 'string' || value === '' || value.trim() !== value) {
    throw new TypeError(`${name} must be a non-empty string without surrounding white space, got ${describeValue(value)}`);
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
    const found = typeof value === 'string' ? describeValue(value) : describeListFault(list, isNamePart);
    throw new TypeError(`${name} must be a name, or a non-empty array of names, of letters, digits, "-", "_" and ".", got ${found}`);
  }
  return Object.freeze([...new Set(list as string[])]);
}
