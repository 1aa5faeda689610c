/**
 * The key history's compact store (an issuer's keys as columns, a slot per key): a null time
 * stays null, a time of 0 stays 0, breaches keep the order found, and a slot freed by a forgotten
 * key and reused by another carries none of the first key's times, breaches or uses.
 */
import { describe, expect, test } from 'vitest';
import { FIRST_USED, IssuerKeys, LAST_USED, LATEST_EXPIRY, WITHDRAWN } from '../../src/core/issuer-keys.js';
import { KeyHistory, type KeyHistoryEntry } from '../../src/core/key-history.js';
import type { PreparedKey } from '../../src/core/signature.js';

const ISSUER = 'https://auth.acme.example';
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** A key history on a clock the test moves, keeping withdrawn keys a day. */
function history(start = 10 * DAY_MS) {
  const clock = { now: start };
  const keys = new KeyHistory(
    {
      publishLead: 3600,
      maxKeyAge: 3 * 86_400,
      now: () => clock.now,
      longestValidity: () => 3600,
      retention: () => 86_400,
    },
    undefined,
  );
  return { clock, keys };
}

/** A prepared key stands as the history's lookup key here, with key material `n` (one key's unless told). */
const preparedKey = (n = 'n1'): PreparedKey => ({ jwk: { kty: 'RSA', kid: 'k', n, e: 'AQAB' } }) as PreparedKey;

const entry = (fields: Partial<KeyHistoryEntry>): KeyHistoryEntry => ({
  issuer: ISSUER,
  kid: 'k1',
  thumbprint: null,
  firstSeen: 1000,
  publishedAfter: null,
  firstUsed: null,
  lastUsed: null,
  latestExpiry: null,
  withdrawn: null,
  breaches: [],
  ...fields,
});

describe('IssuerKeys', () => {
  test('a key taken in has no times but its first sighting and publication, no breach', () => {
    const held = new IssuerKeys(ISSUER);
    const slot = held.add('k1', 5000, null, null);
    expect(held.entry(slot)).toEqual(entry({ firstSeen: 5000 }));
  });

  test('a time of 0 is kept as 0, not taken for null', () => {
    const held = new IssuerKeys(ISSUER);
    const slot = held.add('k1', 0, 0, null);
    for (const column of [FIRST_USED, LAST_USED, LATEST_EXPIRY, WITHDRAWN] as const) held.setTime(slot, column, 0);
    expect(held.entry(slot)).toEqual(entry({ firstSeen: 0, publishedAfter: 0, firstUsed: 0, lastUsed: 0, latestExpiry: 0, withdrawn: 0 }));
  });

  test('a time set back to null reads null', () => {
    const held = new IssuerKeys(ISSUER);
    const slot = held.add('k1', 5000, 4000, null);
    held.setTime(slot, WITHDRAWN, 6000);
    held.setTime(slot, WITHDRAWN, null);
    expect(held.time(slot, WITHDRAWN)).toBeNull();
  });

  test('breaches keep the order found, each once', () => {
    const held = new IssuerKeys(ISSUER);
    const slot = held.add('k1', 5000, null, null);
    expect(held.addBreach(slot, 'key_withdrawn')).toBe(true);
    expect(held.addBreach(slot, 'key_used_early')).toBe(true);
    expect(held.addBreach(slot, 'key_withdrawn')).toBe(false);
    expect(held.addBreach(slot, 'key_rotation_overdue')).toBe(true);
    expect(held.breaches(slot)).toEqual(['key_withdrawn', 'key_used_early', 'key_rotation_overdue']);
    expect(held.hasBreach(slot, 'key_used_early')).toBe(true);
  });

  test('a slot freed by a forgotten key and reused carries none of its times or breaches', () => {
    const held = new IssuerKeys(ISSUER);
    const first = held.add('old', 1000, 500, null);
    for (const column of [FIRST_USED, LAST_USED, LATEST_EXPIRY, WITHDRAWN] as const) held.setTime(first, column, 2000);
    held.addBreach(first, 'key_withdrawn');
    held.setVersion(first, 7);
    held.forget(first);
    const reused = held.add('new', 3000, null, null);
    expect(reused).toBe(first);
    expect(held.entry(reused)).toEqual(entry({ kid: 'new', firstSeen: 3000 }));
    expect(held.version(reused)).toBe(0);
    expect(held.slot('old')).toBeUndefined();
  });

  test('keys past the first slots keep their values as the columns grow, in the order taken in', () => {
    const held = new IssuerKeys(ISSUER);
    for (let index = 0; index < 100; index += 1) {
      const slot = held.add(`k${index}`, index, null, null);
      held.setTime(slot, LAST_USED, index * 10);
    }
    expect([...held.slots()].map((slot) => held.entry(slot))).toEqual(
      Array.from({ length: 100 }, (_, index) => entry({ kid: `k${index}`, firstSeen: index, lastUsed: index * 10 })),
    );
  });
});

describe('KeyHistory over reused slots', () => {
  test('a null time merged in stays null, and a time of 0 stays 0', () => {
    const { keys } = history();
    const zero = entry({ kid: 'zero', firstSeen: 0, publishedAfter: 0, firstUsed: 0, lastUsed: 0, latestExpiry: 0 });
    const none = entry({ kid: 'none' });
    keys.merge([zero, none], false);
    expect(keys.snapshot()).toEqual([zero, none]);
  });

  test("a use through a forgotten key's prepared key changes nothing of the key now in its slot", () => {
    const { clock, keys } = history();
    const old = preparedKey();
    keys.listed(ISSUER, new Map([['old', old]]), clock.now, 0);
    keys.used(old, clock.now, { expiry: clock.now / 1000 + 3600, expiryClaim: 'exp', iat: clock.now / 1000, nbf: undefined });
    keys.listed(ISSUER, new Map([['kept', preparedKey()]]), clock.now + 1, clock.now);
    // Withdrawn for longer than the retention: forgotten at the next download, its slot freed.
    clock.now += 2 * DAY_MS;
    keys.listed(ISSUER, new Map([['kept', preparedKey()]]), clock.now, clock.now - 1);
    const added = preparedKey();
    keys.listed(ISSUER, new Map([['added', added]]), clock.now + 1, clock.now);
    expect(keys.snapshot().map((key) => key.kid)).toEqual(['kept', 'added']);

    keys.used(old, clock.now + 2, { expiry: clock.now / 1000 + 7200, expiryClaim: 'exp', iat: 0, nbf: undefined });
    const reused = keys.snapshot().find((key) => key.kid === 'added');
    expect(reused).toMatchObject({ firstUsed: null, lastUsed: null, latestExpiry: null, breaches: [] });
  });

  test('breaches merged in unite in the order found', () => {
    const { keys } = history();
    keys.merge([entry({ breaches: ['key_withdrawn', 'key_used_early'] })], true);
    keys.merge([entry({ breaches: ['key_rotation_overdue', 'key_withdrawn'] })], true);
    expect(keys.snapshot()[0]?.breaches).toEqual(['key_withdrawn', 'key_used_early', 'key_rotation_overdue']);
  });

  test('a key forgotten leaves the changes not yet asked for', () => {
    const { clock, keys } = history();
    keys.listed(ISSUER, new Map([['old', preparedKey()]]), clock.now, 0);
    keys.listed(ISSUER, new Map(), clock.now + 1, clock.now);
    clock.now += 2 * DAY_MS;
    keys.listed(ISSUER, new Map([['new', preparedKey()]]), clock.now, clock.now - 1);
    expect(keys.changes(0).entries.map((key) => key.kid)).toEqual(['new']);
  });
});
