/**
 * The digest of a registry: the SHA-256 of each entry (canonical JSON: object members sorted) is
 * put in one of 256 buckets by its first byte; each bucket is hashed (SHA-256 over its entries'
 * hashes, taken in the order of their `iss`; an empty bucket hashes nothing), and the digest is
 * the SHA-256 over the 256 bucket hashes in bucket order, in hex. Two instances holding the same
 * registry report the same digest, whatever order they read the rows in, so a fleet split between
 * two registries shows at a glance. {@link RegistryDigest} keeps it up to date as a registry
 * changes, hashing again only the entries that changed and their buckets: a change costs the same
 * at 10 issuers as at 10,000, where one SHA-256 over every entry's hash would cost the table.
 */
import { sha256, sha256Hex } from '../internal/index.js';
import type { IssuerRegistry } from '../index.js';
import { canonicalJson } from '../payment-links/index.js';

const BUCKETS = 256;
const HASH_BYTES = 32;

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The digest of one registry, kept up to date as it changes. */
export class RegistryDigest {
  /** Each entry's hash, by `iss`. */
  readonly #hashes = new Map<string, Uint8Array>();
  /** The issuers of each bucket (the first byte of their entry's hash). */
  readonly #buckets: Set<string>[] = Array.from({ length: BUCKETS }, () => new Set());
  /** The hash of each bucket, in bucket order; `undefined` until the first update. */
  #bucketHashes: Uint8Array | undefined;

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
    const first = this.#bucketHashes === undefined;
    const dirty = new Set<number>();
    for (const [issuer, hash] of hashed) {
      const held = this.#hashes.get(issuer);
      if (held !== undefined) {
        this.#buckets[held[0] as number]?.delete(issuer);
        dirty.add(held[0] as number);
        this.#hashes.delete(issuer);
      }
      if (hash === undefined) continue;
      this.#hashes.set(issuer, hash);
      this.#buckets[hash[0] as number]?.add(issuer);
      dirty.add(hash[0] as number);
    }
    this.#bucketHashes ??= new Uint8Array(BUCKETS * HASH_BYTES);
    const bucketHashes = this.#bucketHashes;
    // The buckets' contents are taken now, before any wait, so the digest is of this state.
    const rehashed = Array.from({ length: BUCKETS }, (_, bucket) => bucket).filter((bucket) => first || dirty.has(bucket));
    const hashes = await Promise.all(rehashed.map((bucket) => sha256(this.#bucketContent(bucket))));
    for (const [index, bucket] of rehashed.entries()) bucketHashes.set(hashes[index] as Uint8Array, bucket * HASH_BYTES);
    return sha256Hex(bucketHashes);
  }

  /** The hashes of `bucket`'s entries, by `iss`, end to end. */
  #bucketContent(bucket: number): Uint8Array {
    const issuers = [...(this.#buckets[bucket] as Set<string>)].sort(byCodeUnit);
    const all = new Uint8Array(issuers.length * HASH_BYTES);
    for (const [index, issuer] of issuers.entries()) all.set(this.#hashes.get(issuer) as Uint8Array, index * HASH_BYTES);
    return all;
  }
}

/** The digest of `registry`'s entries (see the module's documentation), 64 hex digits. */
export async function registryDigest(registry: IssuerRegistry): Promise<string> {
  return new RegistryDigest().update(registry, registry.issuers);
}
