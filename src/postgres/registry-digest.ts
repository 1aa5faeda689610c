/**
 * The digest of a registry: SHA-256 of its entries in one canonical form (by `iss`, object members
 * sorted), in hex. Two instances holding the same registry report the same digest, whatever order
 * they read the rows in, so a fleet split between two registries shows at a glance.
 */
import type { IssuerRegistry } from '../index.js';
import { canonicalJson } from '../payment-links/index.js';

/** The SHA-256 of `registry`'s entries (sorted by `iss`, canonical JSON), 64 hex digits. */
export async function registryDigest(registry: IssuerRegistry): Promise<string> {
  const entries = [...registry.entries()].sort((a, b) => (a.issuer < b.issuer ? -1 : a.issuer > b.issuer ? 1 : 0));
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(canonicalJson(entries))));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
}
