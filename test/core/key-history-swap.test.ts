/**
 * A new key under an old `kid`: a JWKS host that swaps the key material behind a kid starts a new
 * history for it (first seen at that download, the key before withdrawn), told apart by the key's
 * RFC 7638 thumbprint, in this verifier and when histories are merged from another instance.
 */
import { describe, expect, test } from 'vitest';
import type { VerifierEvent } from '../../src/index.js';
import { KeyHistory, type KeyHistoryEntry, keyThumbprint } from '../../src/core/key-history.js';
import type { PreparedKey } from '../../src/core/signature.js';

const ISSUER = 'https://auth.acme.example';
const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** A key history on a clock the test moves: a 1 h publication lead, keys overdue after 2 days. */
function history(start = 10 * DAY_MS) {
  const clock = { now: start };
  const events: VerifierEvent[] = [];
  const keys = new KeyHistory(
    {
      publishLead: 3600,
      maxKeyAge: 2 * 86_400,
      now: () => clock.now,
      longestValidity: () => 3600,
      retention: () => 86_400,
    },
    (event) => events.push(event),
  );
  const breaches = () => events.map((event) => `${event.type} ${'kid' in event ? event.kid : ''}`);
  return { clock, keys, breaches };
}

/** A prepared key of kid `k1` with modulus `n`: another `n` is another key. */
const key = (n: string): PreparedKey => ({ kid: 'k1', jwk: { kty: 'RSA', kid: 'k1', n, e: 'AQAB' } }) as unknown as PreparedKey;

const times = (at: number, lifetime = HOUR_MS) => ({
  expiry: (at + lifetime) / 1000,
  expiryClaim: 'exp' as const,
  iat: at / 1000,
  nbf: undefined,
});

const k1 = (keys: KeyHistory): KeyHistoryEntry | undefined => keys.snapshot().find((entry) => entry.kid === 'k1');

describe('a new key under an old kid', () => {
  test('is first seen at the download that lists it, with the download before as its publication bound', () => {
    const { clock, keys } = history();
    const start = clock.now;
    keys.listed(ISSUER, new Map([['k1', key('old')]]), start, 0);
    clock.now += 3 * DAY_MS;
    keys.listed(ISSUER, new Map([['k1', key('new')]]), clock.now, clock.now - 10 * MINUTE_MS);
    expect(k1(keys)).toMatchObject({
      firstSeen: clock.now,
      publishedAfter: clock.now - 10 * MINUTE_MS,
      thumbprint: keyThumbprint(key('new')),
      withdrawn: null,
    });
  });

  test('used 5 minutes after the download that first listed it is key_used_early', () => {
    const { clock, keys, breaches } = history();
    keys.listed(ISSUER, new Map([['k1', key('old')]]), clock.now, 0);
    clock.now += DAY_MS;
    const swapped = key('new');
    keys.listed(ISSUER, new Map([['k1', swapped]]), clock.now, clock.now - MINUTE_MS);
    clock.now += 5 * MINUTE_MS;
    keys.used(swapped, clock.now, times(clock.now));
    expect(breaches()).toEqual(['key_used_early k1']);
  });

  test("counts its rotation age from its own first sighting, not the old key's", () => {
    const { clock, keys, breaches } = history();
    keys.listed(ISSUER, new Map([['k1', key('old')]]), clock.now, 0);
    clock.now += 3 * DAY_MS;
    const swapped = key('new');
    keys.listed(ISSUER, new Map([['k1', swapped]]), clock.now, clock.now - MINUTE_MS);
    clock.now += 2 * HOUR_MS;
    keys.used(swapped, clock.now, times(clock.now));
    expect(breaches()).toEqual([]);
  });

  test('withdraws the key before it: key_withdrawn, once, when a token it verified is still valid', () => {
    const { clock, keys, breaches } = history();
    const old = key('old');
    keys.listed(ISSUER, new Map([['k1', old]]), clock.now, 0);
    clock.now += 2 * HOUR_MS;
    keys.used(old, clock.now, times(clock.now));
    clock.now += MINUTE_MS;
    keys.listed(ISSUER, new Map([['k1', key('new')]]), clock.now, clock.now - MINUTE_MS);
    keys.listed(ISSUER, new Map([['k1', key('new')]]), clock.now + MINUTE_MS, clock.now);
    expect(breaches()).toEqual(['key_withdrawn k1']);
    expect(k1(keys)).toMatchObject({ firstUsed: null, lastUsed: null, latestExpiry: null, breaches: [] });
  });

  test('a use through the old prepared key after the swap records nothing on the new key', () => {
    const { clock, keys } = history();
    const old = key('old');
    keys.listed(ISSUER, new Map([['k1', old]]), clock.now, 0);
    clock.now += DAY_MS;
    keys.listed(ISSUER, new Map([['k1', key('new')]]), clock.now, clock.now - MINUTE_MS);
    keys.used(old, clock.now + MINUTE_MS, times(clock.now));
    expect(k1(keys)).toMatchObject({ firstUsed: null, lastUsed: null });
  });

  test('the same key listed again (a new prepared key, the same material) keeps its history', () => {
    const { clock, keys } = history();
    const start = clock.now;
    keys.listed(ISSUER, new Map([['k1', key('same')]]), start, 0);
    clock.now += DAY_MS;
    keys.listed(ISSUER, new Map([['k1', key('same')]]), clock.now, clock.now - MINUTE_MS);
    expect(k1(keys)).toMatchObject({ firstSeen: start, publishedAfter: null });
  });
});

describe('merged from another instance', () => {
  test('a newer key under the kid, first seen later elsewhere, replaces the one held; the old key used here records nothing', () => {
    const { clock, keys } = history();
    const old = key('old');
    keys.listed(ISSUER, new Map([['k1', old]]), clock.now, 0);
    const swappedAt = clock.now + DAY_MS;
    const elsewhere = { ...(k1(keys) as KeyHistoryEntry), thumbprint: keyThumbprint(key('new')), firstSeen: swappedAt };
    keys.merge([elsewhere], true);
    keys.used(old, swappedAt + MINUTE_MS, times(swappedAt));
    expect(k1(keys)).toMatchObject({ firstSeen: swappedAt, thumbprint: keyThumbprint(key('new')), firstUsed: null });
  });

  test('the old key, first seen earlier, does not bring back its history over the newer one held', () => {
    const { clock, keys } = history();
    const start = clock.now;
    keys.listed(ISSUER, new Map([['k1', key('old')]]), start, 0);
    const stale = k1(keys) as KeyHistoryEntry;
    clock.now += DAY_MS;
    keys.listed(ISSUER, new Map([['k1', key('new')]]), clock.now, clock.now - MINUTE_MS);
    keys.merge([stale], true);
    expect(k1(keys)).toMatchObject({ firstSeen: clock.now, thumbprint: keyThumbprint(key('new')) });
  });

  test('an entry without a thumbprint (an older version) merges into the key of its kid as before', () => {
    const { clock, keys } = history();
    const start = clock.now;
    keys.listed(ISSUER, new Map([['k1', key('old')]]), start, 0);
    const { thumbprint: _, ...older } = k1(keys) as KeyHistoryEntry;
    keys.merge([{ ...older, firstSeen: start - DAY_MS }], true);
    expect(k1(keys)).toMatchObject({ firstSeen: start - DAY_MS, thumbprint: keyThumbprint(key('old')) });
  });
});
