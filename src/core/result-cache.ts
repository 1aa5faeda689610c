/**
 * The bounded cache of verified results, keyed on the exact token string. A hit is re-checked for
 * time on every use (in the verifier); results whose key is removed or revoked are dropped.
 *
 * @module paygate-auth
 */
import { LRUCache } from 'lru-cache';
import type { AuthContext } from './auth-context.js';
import type { TokenTimes } from './claims.js';
import type { PreparedKey } from './signature.js';

/** What the cache keeps of a verified token. */
export interface CachedResult {
  readonly context: AuthContext;
  readonly issuer: string;
  readonly key: PreparedKey;
  readonly times: TokenTimes;
}

/** Bounds of the cache. */
export interface ResultCacheLimits {
  readonly maxEntries: number;
  /** Total token bytes (the token is ASCII: one byte a character). */
  readonly maxBytes: number;
}

/** A bounded LRU of verified results. */
export class ResultCache {
  readonly #lru: LRUCache<string, CachedResult>;

  constructor(limits: ResultCacheLimits) {
    this.#lru = new LRUCache<string, CachedResult>({
      max: limits.maxEntries,
      maxSize: limits.maxBytes,
      sizeCalculation: (_value, token) => token.length,
    });
  }

  get(token: string): CachedResult | undefined {
    return this.#lru.get(token);
  }

  set(token: string, result: CachedResult): void {
    this.#lru.set(token, result);
  }

  delete(token: string): void {
    this.#lru.delete(token);
  }

  /** Drops every result of `issuer` verified with one of `kids`. */
  dropKeys(issuer: string, kids: ReadonlySet<string>): void {
    const doomed: string[] = [];
    for (const [token, result] of this.#lru.entries()) {
      if (result.issuer === issuer && kids.has(result.key.kid)) doomed.push(token);
    }
    for (const token of doomed) this.#lru.delete(token);
  }

  get size(): number {
    return this.#lru.size;
  }
}
