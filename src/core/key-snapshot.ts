/**
 * The shape check of a key snapshot handed to `createVerifier({ keys })`. Which keys are usable is
 * decided later by the same rules as a download.
 */
import { isJsonObject } from './json-object.js';
import type { KeySnapshot } from './jwks-cache.js';
import { describe } from './options.js';

/**
 * Returns `value` when it has the shape of a {@link KeySnapshot}.
 * @throws {TypeError} naming the field at fault and the value found there.
 */
export function checkKeySnapshot(owner: string, value: unknown): KeySnapshot {
  const fail = (field: string, rule: string, found: unknown): never => {
    throw new TypeError(`${owner}: keys${field} ${rule}, got ${describe(found)}`);
  };
  if (!isJsonObject(value)) return fail('', 'must be a snapshot from exportKeys()', value);
  if (value.version !== 1) fail('.version', 'must be 1', value.version);
  if (!Array.isArray(value.issuers)) fail('.issuers', 'must be an array', value.issuers);
  for (const [index, entry] of (value.issuers as unknown[]).entries()) {
    const at = `.issuers[${index}]`;
    if (!isJsonObject(entry)) return fail(at, 'must be an object', entry);
    if (typeof entry.issuer !== 'string') fail(`${at}.issuer`, 'must be a string', entry.issuer);
    if (typeof entry.jwksUri !== 'string') fail(`${at}.jwksUri`, 'must be a string', entry.jwksUri);
    if (typeof entry.fetchedAt !== 'number' || !Number.isFinite(entry.fetchedAt) || entry.fetchedAt < 0) {
      fail(`${at}.fetchedAt`, 'must be a time in milliseconds since the epoch', entry.fetchedAt);
    }
    if (!Array.isArray(entry.keys)) fail(`${at}.keys`, 'must be an array of JWKs', entry.keys);
    const revoked = entry.revoked;
    if (revoked !== undefined && (!Array.isArray(revoked) || !revoked.every((kid) => typeof kid === 'string' && kid !== ''))) {
      fail(`${at}.revoked`, 'must be an array of kids (non-empty strings)', revoked);
    }
  }
  return value as unknown as KeySnapshot;
}
