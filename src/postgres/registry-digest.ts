/**
 * The digest of a registry: SHA-256 over the SHA-256 of each entry (canonical JSON: object
 * members sorted), taken in the order of their `iss`, in hex. Two instances holding the same
 * registry report the same digest, whatever order they read the rows in, so a fleet split between
 * two registries shows at a glance. {@link RegistryDigest} keeps it up to date as a registry
 * changes, hashing again only the entries that changed.
 */
import { sha256, sha256Hex } from '../internal/index.js';
import type { IssuerRegistry } from '../index.js';
import { canonicalJson } from '../payment-links/index.js';

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The first index of `sorted` whose value is not below `value`. */
function lowerBound(sorted: readonly string[], value: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((sorted[middle] as string) < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** SHA-256 of the entry hashes of `issuers` (in that order), in hex. */
async function combine(issuers: readonly string[], hashes: ReadonlyMap<string, Uint8Array>): Promise<string> {
  const all = new Uint8Array(issuers.length * 32);
  for (const [index, issuer] of issuers.entries()) all.set(hashes.get(issuer) as Uint8Array, index * 32);
  return sha256Hex(all);
}

/** The digest of one registry, kept up to date as it changes. */
export class RegistryDigest {
  /** Each entry's hash, by `iss`. */
  readonly #hashes = new Map<string, Uint8Array>();
  /** The issuers hashed, in code-unit order. */
  readonly #order: string[] = [];

  /**
   * The digest of `registry`, whose entries differ from those last given only for `touched`
   * issuers (put in, replaced or taken out); every issuer at the first call.
   */
  async update(registry: IssuerRegistry, touched: Iterable<string>): Promise<string> {
    const hashed = await Promise.all(
      [...touched].map(async (issuer) => {
        const entry = registry.get(issuer)?.entry;
        return [issuer, entry === undefined ? undefined : await sha256(canonicalJson(entry))] as const;
      }),
    );
    for (const [issuer, hash] of hashed) {
      const held = this.#hashes.has(issuer);
      if (hash === undefined) {
        if (!held) continue;
        this.#hashes.delete(issuer);
        this.#order.splice(lowerBound(this.#order, issuer), 1);
      } else {
        this.#hashes.set(issuer, hash);
        if (!held) this.#order.splice(lowerBound(this.#order, issuer), 0, issuer);
      }
    }
    return combine(this.#order, this.#hashes);
  }
}

/** The digest of `registry`'s entries (see the module's documentation), 64 hex digits. */
export async function registryDigest(registry: IssuerRegistry): Promise<string> {
  return new RegistryDigest().update(registry, [...registry.issuers].sort(byCodeUnit));
}
