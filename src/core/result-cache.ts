/**
 * The bounded cache of verified results, keyed on the exact token string. A hit is re-checked for
 * time on every use (in the verifier); results whose key is removed or revoked are dropped.
 *
 * Entries are indexed by a 30-bit hash of the token's last {@link INDEX_CHARS} characters (the end
 * of its signature) and matched on the whole token: hashing a whole token for a `Map` key costs
 * as much as a twentieth of an RSA verification, hashing its tail almost nothing, and a number
 * key is nothing for the garbage collector to copy. A token whose index equals a cached one's but
 * which differs anywhere is a miss; two verified tokens with one index share a slot (the later
 * replaces the earlier), which costs a verification, never a wrong answer.
 */
import { LRUCache } from 'lru-cache';
import type { AuthContext } from './auth-context.js';
import { type CacheAdmission, SecondUseFilter } from './cache-admission.js';
import type { TokenTimes } from './claims.js';
import type { PreparedKey } from './signature.js';

/**
 * What the cache keeps of a verified token: one flat record (its time facts inline), as every
 * object a cached result holds is one more for the garbage collector to copy as it ages.
 */
export interface CachedResult extends TokenTimes {
  /** The token, exactly as received. */
  readonly token: string;
  readonly context: AuthContext;
  readonly issuer: string;
  readonly key: PreparedKey;
}

/** Bounds of the cache. */
export interface ResultCacheLimits {
  readonly maxEntries: number;
  /** Total token bytes (the token is ASCII: one byte a character). */
  readonly maxBytes: number;
  /** When a verified token's result is kept. */
  readonly admission: CacheAdmission;
}

/** Characters of a token's tail that index it: 24 base64url characters, 144 bits of signature. */
export const INDEX_CHARS = 24;

/** FNV-1a of the token's tail, in 30 bits (a small integer). */
function indexOf(token: string): number {
  let hash = 0x811c9dc5;
  for (let index = Math.max(0, token.length - INDEX_CHARS); index < token.length; index += 1) {
    hash = Math.imul(hash ^ token.charCodeAt(index), 0x01000193);
  }
  return hash >>> 2;
}

/** A bounded LRU of verified results. */
export class ResultCache {
  readonly #lru: LRUCache<number, CachedResult>;
  /** Tokens verified once lately, under `'second-use'` admission. */
  readonly #firstUses: SecondUseFilter | null;

  constructor(limits: ResultCacheLimits) {
    this.#lru = new LRUCache<number, CachedResult>({
      max: limits.maxEntries,
      maxSize: limits.maxBytes,
      sizeCalculation: (result) => result.token.length,
    });
    this.#firstUses = limits.admission === 'second-use' ? new SecondUseFilter(limits.maxEntries) : null;
  }

  /** The result cached for exactly `token`. */
  get(token: string): CachedResult | undefined {
    const result = this.#lru.get(indexOf(token));
    return result !== undefined && result.token === token ? result : undefined;
  }

  /** Whether a result is cached for exactly `token` (its recency untouched, its validity not checked). */
  holds(token: string): boolean {
    return this.#lru.peek(indexOf(token))?.token === token;
  }

  /**
   * Whether the result of `token`, just verified, is to be kept: always under `'first-use'`
   * admission; under `'second-use'`, if it was verified lately (if not, it is marked now).
   * Asked before the result is built, so a token not kept costs no result.
   */
  admits(token: string): boolean {
    return this.#firstUses === null || this.#firstUses.admits(indexOf(token));
  }

  /** Caches `result` for `result.token` (replacing a result indexed alike). */
  set(result: CachedResult): void {
    this.#lru.set(indexOf(result.token), result);
  }

  /** Drops the result of exactly `token`, if cached. */
  delete(token: string): void {
    const index = indexOf(token);
    if (this.#lru.peek(index)?.token === token) this.#lru.delete(index);
  }

  /** Drops every result of `issuer` verified with one of `kids`. */
  dropKeys(issuer: string, kids: ReadonlySet<string>): void {
    this.#dropWhere((result) => result.issuer === issuer && kids.has(result.key.kid));
  }

  /** Drops every result of `issuer` (its entry changed or was removed). */
  dropIssuer(issuer: string): void {
    this.#dropWhere((result) => result.issuer === issuer);
  }

  #dropWhere(doomed: (result: CachedResult) => boolean): void {
    const indexes: number[] = [];
    for (const [index, result] of this.#lru.entries()) if (doomed(result)) indexes.push(index);
    for (const index of indexes) this.#lru.delete(index);
  }

  get size(): number {
    return this.#lru.size;
  }
}
