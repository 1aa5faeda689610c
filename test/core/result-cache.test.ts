import { describe, expect, test } from 'vitest';
import type { AuthContext } from '../../src/index.js';
import { type CachedResult, INDEX_CHARS, ResultCache } from '../../src/core/result-cache.js';
import type { PreparedKey } from '../../src/core/signature.js';

const TAIL = 'S'.repeat(INDEX_CHARS);

/** A result for `token`, verified by `issuer`'s key `kid` (the context is a stand-in). */
function result(token: string, issuer = 'https://acme.test', kid = 'k-1'): CachedResult {
  return {
    token,
    context: { token } as unknown as AuthContext,
    issuer,
    key: { kid, jwk: {}, handle: null } as unknown as PreparedKey,
    expiry: 2_000_000_000,
    expiryClaim: 'exp',
    iat: 1_900_000_000,
    nbf: undefined,
  };
}

/** A cache that admits every token, to test what it keeps. */
const firstUse = (maxEntries = 100) => new ResultCache({ maxEntries, maxBytes: 1_000_000, admission: 'first-use' });

describe('ResultCache', () => {
  test('holds exactly the tokens cached, whatever their index', () => {
    const cache = firstUse();
    cache.set(result(`header.payload.${TAIL}`));
    expect(cache.holds(`header.payload.${TAIL}`)).toBe(true);
    expect(cache.holds(`header.other.${TAIL}`)).toBe(false);
    expect(cache.holds(`header.payload.${TAIL}x`)).toBe(false);
  });

  test('holds() leaves the order of eviction as it was', () => {
    const cache = new ResultCache({ maxEntries: 2, maxBytes: 1_000_000, admission: 'first-use' });
    cache.set(result(`a.a.${TAIL}A`));
    cache.set(result(`b.b.${TAIL}B`));
    expect(cache.holds(`a.a.${TAIL}A`)).toBe(true);
    cache.set(result(`c.c.${TAIL}C`));
    expect(cache.holds(`a.a.${TAIL}A`)).toBe(false);
    expect(cache.holds(`b.b.${TAIL}B`)).toBe(true);
  });

  test('returns the result cached for exactly that token', () => {
    const cache = firstUse();
    const kept = result(`header.payload.${TAIL}`);
    cache.set(kept);
    expect(cache.get(`header.payload.${TAIL}`)).toBe(kept);
  });

  test("a token with a cached token's signature tail but another payload is a miss (attack: a payload swapped under a cached signature)", () => {
    const cache = firstUse();
    cache.set(result(`header.payload.${TAIL}`));
    expect(cache.get(`header.forged.${TAIL}`)).toBeUndefined();
  });

  test('two tokens with one tail share a slot: the later replaces the earlier', () => {
    const cache = firstUse();
    const later = result(`header.second.${TAIL}`);
    cache.set(result(`header.first.${TAIL}`));
    cache.set(later);
    expect([cache.get(`header.first.${TAIL}`), cache.get(`header.second.${TAIL}`), cache.size]).toEqual([undefined, later, 1]);
  });

  test('delete drops only exactly that token, not another with its tail', () => {
    const cache = firstUse();
    const kept = result(`header.payload.${TAIL}`);
    cache.set(kept);
    cache.delete(`header.forged.${TAIL}`);
    expect(cache.get(kept.token)).toBe(kept);
    cache.delete(kept.token);
    expect(cache.get(kept.token)).toBeUndefined();
  });

  test('dropKeys drops the results of those keys of that issuer, and no other', () => {
    const cache = firstUse();
    const doomed = [result('a.b.c1', 'https://acme.test', 'k-1'), result('a.b.c2', 'https://acme.test', 'k-2')];
    const kept = [result('a.b.c3', 'https://acme.test', 'k-3'), result('a.b.c4', 'https://globex.test', 'k-1')];
    for (const one of [...doomed, ...kept]) cache.set(one);
    cache.dropKeys('https://acme.test', new Set(['k-1', 'k-2']));
    expect([...doomed, ...kept].map((one) => cache.get(one.token) === one)).toEqual([false, false, true, true]);
  });

  test('holds at most maxEntries results, least recently used out first', () => {
    const cache = firstUse(2);
    const [a, b, c] = ['a.b.c1', 'a.b.c2', 'a.b.c3'].map((token) => result(token));
    cache.set(a!);
    cache.set(b!);
    cache.get(a!.token);
    cache.set(c!);
    expect([a, b, c].map((one) => cache.get(one!.token) === one)).toEqual([true, false, true]);
  });

  test.each([
    [1024, [true, true]],
    [1023, [false, true]],
  ])(
    'two tokens of 512 characters under maxBytes %i: held %j (the bound holds exactly its bytes; one less evicts the older)',
    (maxBytes, held) => {
      const cache = new ResultCache({ maxEntries: 100, maxBytes, admission: 'first-use' });
      const [a, b] = ['1', '2'].map((last) => result(`h.p.${'s'.repeat(507)}${last}`));
      expect(a!.token).toHaveLength(512);
      cache.set(a!);
      cache.set(b!);
      expect([a, b].map((one) => cache.get(one!.token) === one)).toEqual(held);
    },
  );

  test("under 'first-use' admission every token is admitted", () => {
    const cache = firstUse();
    expect([cache.admits('a.b.c1'), cache.admits('a.b.c1')]).toEqual([true, true]);
  });

  test("under 'second-use' admission a token is admitted when it is offered the second time", () => {
    const cache = new ResultCache({ maxEntries: 100, maxBytes: 1_000_000, admission: 'second-use' });
    expect([cache.admits(`header.payload.${TAIL}`), cache.admits(`header.payload.${TAIL}`)]).toEqual([false, true]);
  });
});
