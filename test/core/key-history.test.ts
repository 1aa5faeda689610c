/**
 * The key rules watched through the verifier, against a real JWKS endpoint on 127.0.0.1 and a
 * frozen clock: `key_used_early`, `key_rotation_overdue` and `key_withdrawn`, each once per kid,
 * and the history `keyHistory()` reports.
 */
import { type JWK, calculateJwkThumbprint } from 'jose';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { KeyBreachEvent, KeyHistoryEntry, Verifier } from '../../src/index.js';
import { type TestIssuer, createTestIssuer } from '../../src/testing/index.js';
import { KEYS_KEPT, NEW_KIDS_RECORDED, WITHDRAWN_KEPT } from '../../src/core/key-history.js';
import { fakeClock } from '../support/jwks-clock.js';
import { verifierFixture } from '../support/verifier-fixture.js';

const AUDIENCE = 'https://payments.test';
const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;

let clock: ReturnType<typeof fakeClock>;
let issuer: TestIssuer;

beforeEach(async () => {
  clock = fakeClock();
  issuer = await createTestIssuer({ audience: AUDIENCE, now: clock.now });
  await issuer.listen();
});

afterEach(() => issuer.close());

const { verifier, log } = verifierFixture(() => ({ registry: [issuer.entry], audience: AUDIENCE, now: clock.now, cache: false }));

const breaches = (): KeyBreachEvent[] =>
  log.events.filter((event): event is KeyBreachEvent => ['key_used_early', 'key_rotation_overdue', 'key_withdrawn'].includes(event.type));

describe('key_used_early', () => {
  test('a key used 5 minutes after it was published is reported, once', async () => {
    const gateway = verifier();
    await gateway.verify(await issuer.token());
    const next = await issuer.addKey({ kid: 'next' });
    clock.advance(5 * MINUTE);
    await gateway.verify(await issuer.token(undefined, undefined, { key: next }));
    await gateway.verify(await issuer.token(undefined, undefined, { key: next }));
    expect(breaches()).toEqual([expect.objectContaining({ type: 'key_used_early', kid: 'next' })]);
    expect(breaches()[0]?.key).toMatchObject({ publishedAfter: expect.any(Number), firstUsed: clock.now() });
  });

  test('a key first used after the publication lead is not reported', async () => {
    const gateway = verifier();
    await gateway.verify(await issuer.token());
    const next = await issuer.addKey({ kid: 'next' });
    clock.advance(HOUR);
    await gateway.verify(await issuer.token(undefined, undefined, { key: next }));
    expect(breaches()).toEqual([]);
  });

  test('a key first used one second before the publication lead (1 h) is reported', async () => {
    const gateway = verifier();
    await gateway.verify(await issuer.token());
    const next = await issuer.addKey({ kid: 'next' });
    clock.advance(HOUR - 1);
    await gateway.verify(await issuer.token(undefined, undefined, { key: next }));
    expect(breaches().map((event) => [event.type, event.kid])).toEqual([['key_used_early', 'next']]);
  });

  test("a key in the issuer's first download is not reported, its publication time being unknown", async () => {
    const gateway = verifier();
    await gateway.verify(await issuer.token());
    expect(breaches()).toEqual([]);
    expect(gateway.keyHistory()).toEqual([expect.objectContaining({ kid: issuer.signingKey.kid, publishedAfter: null })]);
  });

  test('keyPublishLead sets the lead', async () => {
    const gateway = verifier({ keyPublishLead: 2 * HOUR });
    await gateway.verify(await issuer.token());
    const next = await issuer.addKey({ kid: 'next' });
    clock.advance(HOUR);
    await gateway.verify(await issuer.token(undefined, undefined, { key: next }));
    expect(breaches().map((event) => event.type)).toEqual(['key_used_early']);
  });
});

describe('key_rotation_overdue', () => {
  test('a key signing for 30 days is reported once, on the first token signed past 72 h', async () => {
    const gateway = verifier();
    for (let day = 0; day <= 30; day += 1) {
      await gateway.verify(await issuer.token());
      if (day === 3) expect(breaches()).toEqual([]);
      if (day === 4) expect(breaches()).toEqual([expect.objectContaining({ type: 'key_rotation_overdue', kid: issuer.signingKey.kid })]);
      clock.advance(DAY);
    }
    expect(breaches()).toHaveLength(1);
  });

  test('a token signed within the age limit and verified after it is not reported', async () => {
    const gateway = verifier({ keyMaxAge: 2 * HOUR });
    const early = await issuer.token({ iat: clock.now() / 1000, expt: clock.now() / 1000 + 3 * HOUR });
    await gateway.verify(early);
    clock.advance(2 * HOUR + MINUTE);
    await gateway.verify(early);
    expect(breaches()).toEqual([]);
  });

  test('keyMaxAge sets the limit', async () => {
    const gateway = verifier({ keyMaxAge: 2 * HOUR });
    await gateway.verify(await issuer.token());
    clock.advance(2 * HOUR + 1);
    await gateway.verify(await issuer.token());
    expect(breaches().map((event) => event.type)).toEqual(['key_rotation_overdue']);
  });

  test('a key signing exactly keyMaxAge after it was first seen is not reported, one second later it is', async () => {
    const gateway = verifier({ keyMaxAge: 2 * HOUR });
    await gateway.verify(await issuer.token());
    clock.advance(2 * HOUR);
    await gateway.verify(await issuer.token());
    expect(breaches()).toEqual([]);
    clock.advance(1);
    await gateway.verify(await issuer.token());
    expect(breaches().map((event) => event.type)).toEqual(['key_rotation_overdue']);
  });
});

describe('key_withdrawn', () => {
  test('a key leaving the JWKS while a token it verified is valid is reported at the next download, once', async () => {
    const gateway = verifier();
    const old = issuer.signingKey;
    await gateway.verify(await issuer.token());
    await issuer.rotate();
    issuer.unpublish(old.kid);
    await gateway.refresh(issuer.entry.issuer);
    await gateway.refresh(issuer.entry.issuer);
    expect(breaches()).toEqual([expect.objectContaining({ type: 'key_withdrawn', kid: old.kid })]);
    expect(breaches()[0]?.key.withdrawn).toBe(clock.now());
  });

  test('a key leaving the JWKS after its tokens expired is not reported', async () => {
    const gateway = verifier();
    const old = issuer.signingKey;
    await gateway.verify(await issuer.token());
    await issuer.rotate();
    clock.advance(DAY + HOUR);
    issuer.unpublish(old.kid);
    await gateway.refresh(issuer.entry.issuer);
    expect(breaches()).toEqual([]);
  });
});

describe('keyHistory()', () => {
  test('lists each kid with when it was first seen, first and last used', async () => {
    const gateway = verifier();
    const start = clock.now();
    await gateway.verify(await issuer.token());
    clock.advance(HOUR);
    await gateway.verify(await issuer.token());
    expect(gateway.keyHistory()).toEqual([
      {
        issuer: issuer.entry.issuer,
        kid: issuer.signingKey.kid,
        // RFC 7638, as jose computes it from the published JWK.
        thumbprint: await calculateJwkThumbprint(issuer.jwks.keys[0] as JWK),
        firstSeen: start,
        publishedAfter: null,
        firstUsed: start,
        lastUsed: start + HOUR * 1000,
        latestExpiry: expect.any(Number),
        withdrawn: null,
        breaches: [],
      },
    ]);
  });
});

describe('mergeKeyHistory()', () => {
  test("a restarted verifier keeps counting a key's age from when it was first seen before the restart", async () => {
    const before = verifier();
    await before.verify(await issuer.token());
    const kept = before.keyHistory();
    clock.advance(4 * DAY);
    const after = verifier();
    after.mergeKeyHistory(kept);
    await after.verify(await issuer.token());
    expect(breaches().map((event) => event.type)).toEqual(['key_rotation_overdue']);
  });

  test('a breach another instance reported is not reported again here', async () => {
    const first = verifier();
    await first.verify(await issuer.token());
    const next = await issuer.addKey({ kid: 'next' });
    clock.advance(5 * MINUTE);
    await first.verify(await issuer.token(undefined, undefined, { key: next }));
    const shared = first.keyHistory();
    const second = verifier();
    second.mergeKeyHistory(shared);
    await second.verify(await issuer.token(undefined, undefined, { key: next }));
    expect(breaches()).toEqual([]);
    expect(second.keyHistory().find((entry) => entry.kid === 'next')?.breaches).toEqual(['key_used_early']);
  });

  test('takes the earliest sighting and first use, and the latest use', async () => {
    const first = verifier();
    const start = clock.now();
    await first.verify(await issuer.token());
    clock.advance(HOUR);
    const second = verifier();
    await second.verify(await issuer.token());
    second.mergeKeyHistory(first.keyHistory());
    expect(second.keyHistory()).toEqual([expect.objectContaining({ firstSeen: start, firstUsed: start, lastUsed: start + HOUR * 1000 })]);
  });

  test('an expiry taken in is bounded by the longest validity after its last use: a forged one raises no key_withdrawn at a normal rotation', async () => {
    const first = verifier();
    const old = issuer.signingKey;
    await first.verify(await issuer.token());
    const [used] = first.keyHistory();
    const second = verifier();
    await second.verify(await issuer.token());
    // A table writer's expiry: 30 days ahead, far past any token this verifier accepts (24 h).
    second.mergeKeyHistory([{ ...(used as KeyHistoryEntry), latestExpiry: Math.floor(clock.now() / 1000) + 30 * DAY }]);
    expect(second.keyHistory()[0]?.latestExpiry).toBeLessThanOrEqual(Math.floor(clock.now() / 1000) + DAY + 30);
    clock.advance(2 * DAY);
    await issuer.rotate();
    issuer.unpublish(old.kid);
    await second.refresh(issuer.entry.issuer);
    expect(breaches()).toEqual([]);
  });

  test('an expiry taken in that a verifier could have seen still raises key_withdrawn when the key goes early', async () => {
    const first = verifier();
    const old = issuer.signingKey;
    await first.verify(await issuer.token());
    const second = verifier();
    second.mergeKeyHistory(first.keyHistory());
    clock.advance(MINUTE);
    await issuer.rotate();
    issuer.unpublish(old.kid);
    await second.refresh(issuer.entry.issuer);
    expect(breaches()).toEqual([expect.objectContaining({ type: 'key_withdrawn', kid: old.kid })]);
  });

  test.each([
    ['kid', ''],
    ['firstSeen', 'yesterday'],
    ['lastUsed', -1],
    ['breaches', ['key_stolen']],
  ])('an entry with a bad %s throws a TypeError naming it', async (field, value) => {
    const gateway = verifier();
    await gateway.verify(await issuer.token());
    const [entry] = gateway.keyHistory();
    expect(() => gateway.mergeKeyHistory([{ ...entry, [field]: value } as never])).toThrow(
      expect.objectContaining({ name: 'TypeError', message: expect.stringContaining(`entries[0].${field}`) }),
    );
  });
});

describe('mergeKeyHistory names what it got in place of entries', () => {
  test.each([
    ['an entry that is not an object', [null], 'entries[0] must be an object (a key history entry), got null'],
    ['entries that are not an array', 'rows', 'got "rows"'],
  ])('%s', (_case, entries, found) => {
    expect(() => verifier().mergeKeyHistory(entries as never)).toThrow(found);
  });
});

describe('the limits are checked', () => {
  test.each([
    ['keyPublishLead', -1],
    ['keyPublishLead', '1h'],
    ['keyMaxAge', 0],
  ])('a bad %s throws a TypeError naming it', (name, value) => {
    expect(() => verifier({ [name]: value })).toThrow(
      expect.objectContaining({ name: 'TypeError', message: expect.stringContaining(name) }),
    );
  });
});

/** The signing key's public JWK under `count` new kids: a JWKS host minting kids to grow the history. */
function mintKids(prefix: string, count: number): Record<string, unknown>[] {
  const jwk = issuer.jwks.keys.find((key) => key.kid === issuer.signingKey.kid) as Record<string, unknown>;
  return Array.from({ length: count }, (_, index) => ({ ...jwk, kid: `${prefix}-${index}` }));
}

/** Publishes `count` new kids in place of the ones minted before, and downloads the JWKS. */
async function download(gateway: Verifier, round: number, count = 200): Promise<void> {
  if (round > 0) for (const key of mintKids(`round${round - 1}`, count)) issuer.unpublish(key.kid as string);
  issuer.publish(...mintKids(`round${round}`, count));
  await gateway.refresh(issuer.entry.issuer);
}

const kidsOf = (gateway: Verifier): string[] => gateway.keyHistory().map((entry) => entry.kid);

describe('a bounded key history', () => {
  test(`records at most ${NEW_KIDS_RECORDED} new kids per download, the others at later downloads while still listed`, async () => {
    const gateway = verifier();
    issuer.publish(...mintKids('many', 40));
    await gateway.refresh(issuer.entry.issuer);
    expect(kidsOf(gateway)).toHaveLength(NEW_KIDS_RECORDED);
    await gateway.refresh(issuer.entry.issuer);
    expect(kidsOf(gateway)).toHaveLength(2 * NEW_KIDS_RECORDED);
    await gateway.refresh(issuer.entry.issuer);
    expect(kidsOf(gateway)).toHaveLength(41);
  });

  test(`a JWKS listing 200 new kids per download holds the issuer to ${NEW_KIDS_RECORDED} new listed and ${WITHDRAWN_KEPT} withdrawn keys, the latest withdrawn`, async () => {
    // A set this large is read only under a raised jwksMaxKeys (100 entries by default).
    const gateway = verifier({ jwksMaxKeys: 1000 });
    for (let round = 0; round < 8; round += 1) {
      await download(gateway, round);
      clock.advance(MINUTE);
    }
    const history = gateway.keyHistory();
    // Listed: the issuer's signing key, and the minted kids the last download recorded.
    expect(history.filter((entry) => entry.withdrawn === null)).toHaveLength(1 + NEW_KIDS_RECORDED);
    const withdrawn = history.filter((entry) => entry.withdrawn !== null);
    expect(withdrawn).toHaveLength(WITHDRAWN_KEPT);
    expect(withdrawn.every((entry) => entry.kid.startsWith('round6-') || entry.kid.startsWith('round5-'))).toBe(true);
  });

  test('forgets a withdrawn key once maxTokenLifetime, clockTolerance and jwksStaleWindow have passed since its withdrawal', async () => {
    const gateway = verifier({ maxTokenLifetime: HOUR, clockTolerance: 0, jwksStaleWindow: 10 * MINUTE });
    const old = issuer.signingKey;
    await gateway.verify(await issuer.token());
    await issuer.rotate();
    issuer.unpublish(old.kid);
    await gateway.refresh(issuer.entry.issuer);
    expect(gateway.keyHistoryChanges(0)).toMatchObject({
      retention: HOUR + 10 * MINUTE,
      withdrawnBefore: clock.now() - (HOUR + 10 * MINUTE) * 1000,
    });
    clock.advance(HOUR + 10 * MINUTE);
    await gateway.refresh(issuer.entry.issuer);
    expect(kidsOf(gateway)).toContain(old.kid);
    clock.advance(1);
    await gateway.refresh(issuer.entry.issuer);
    expect(kidsOf(gateway)).toEqual([issuer.signingKey.kid]);
  });

  test('keeps a withdrawn key as long as the longest lifetime an issuer entry allows', async () => {
    const gateway = verifier({ registry: [{ ...issuer.entry, maxTokenLifetime: 2 * DAY }], maxTokenLifetime: HOUR, clockTolerance: 0 });
    expect(gateway.keyHistoryChanges(0).retention).toBe(2 * DAY + DAY);
  });

  test(`takes in at most ${WITHDRAWN_KEPT} withdrawn keys of an issuer (the latest withdrawn) and ${KEYS_KEPT} keys in all`, () => {
    const gateway = verifier();
    const now = clock.now();
    const entry = (kid: string, withdrawn: number | null): KeyHistoryEntry => ({
      issuer: issuer.entry.issuer,
      kid,
      firstSeen: now,
      publishedAfter: null,
      firstUsed: null,
      lastUsed: null,
      latestExpiry: null,
      withdrawn,
      breaches: [],
    });
    gateway.mergeKeyHistory(Array.from({ length: 100 }, (_, index) => entry(`gone-${index}`, now + index)));
    const withdrawn = gateway.keyHistory().map((kept) => kept.kid);
    expect(withdrawn).toHaveLength(WITHDRAWN_KEPT);
    expect(withdrawn).toContain('gone-99');
    expect(withdrawn).not.toContain('gone-67');
    gateway.mergeKeyHistory(Array.from({ length: 1000 }, (_, index) => entry(`listed-${index}`, null)));
    expect(gateway.keyHistory()).toHaveLength(KEYS_KEPT);
  });
});

describe('keyHistoryChanges()', () => {
  test('lists the keys changed here after the version given, and the version now', async () => {
    const gateway = verifier();
    const empty = gateway.keyHistoryChanges(0);
    expect(empty.entries).toEqual([]);
    await gateway.verify(await issuer.token());
    const first = gateway.keyHistoryChanges(empty.through);
    expect(first.entries.map((entry) => entry.kid)).toEqual([issuer.signingKey.kid]);
    expect(gateway.keyHistoryChanges(first.through).entries).toEqual([]);
    clock.advance(MINUTE);
    await gateway.verify(await issuer.token());
    expect(gateway.keyHistoryChanges(first.through).entries).toEqual([expect.objectContaining({ lastUsed: clock.now() })]);
  });

  test('counts what is merged as a change, unless it comes from the store (stored)', async () => {
    const source = verifier();
    await source.verify(await issuer.token());
    const fromStore = verifier();
    fromStore.mergeKeyHistory(source.keyHistory(), { stored: true });
    expect(fromStore.keyHistoryChanges(0).entries).toEqual([]);
    const fromFile = verifier();
    fromFile.mergeKeyHistory(source.keyHistory());
    expect(fromFile.keyHistoryChanges(0).entries.map((entry) => entry.kid)).toEqual([issuer.signingKey.kid]);
    expect(() => fromFile.mergeKeyHistory([], { stored: 'yes' } as never)).toThrow(
      expect.objectContaining({ name: 'TypeError', message: expect.stringContaining('stored') }),
    );
  });

  test("withdraws a removed issuer's keys at the removal, hands them out once, then forgets them", async () => {
    const gateway = verifier();
    await gateway.verify(await issuer.token());
    const before = gateway.keyHistoryChanges(0).through;
    gateway.setRegistry([]);
    const removal = gateway.keyHistoryChanges(before);
    expect(removal.entries).toEqual([expect.objectContaining({ kid: issuer.signingKey.kid, withdrawn: clock.now() })]);
    expect(gateway.keyHistory()).toEqual([]);
    expect(gateway.keyHistoryChanges(removal.through).entries).toEqual([]);
  });

  test('hands out one entry per key, the latest, for an issuer removed and added back before the changes are asked for', async () => {
    // A store writes the entries with one INSERT … ON CONFLICT, which fails on a row named twice.
    const gateway = verifier();
    await gateway.verify(await issuer.token());
    const before = gateway.keyHistoryChanges(0).through;
    gateway.setRegistry([]);
    clock.advance(MINUTE);
    gateway.setRegistry([issuer.entry]);
    await gateway.verify(await issuer.token());
    const changes = gateway.keyHistoryChanges(before);
    expect(changes.entries).toEqual([expect.objectContaining({ kid: issuer.signingKey.kid, withdrawn: null, lastUsed: clock.now() })]);
  });

  test.each([-1, 1.5, '0'])('a bad version (%s) throws a TypeError naming after', (after) => {
    expect(() => verifier().keyHistoryChanges(after as never)).toThrow(
      expect.objectContaining({ name: 'TypeError', message: expect.stringContaining('after') }),
    );
  });

  test.each([
    ['0', 'got "0"'],
    [-1, 'got -1'],
    [null, 'got null'],
  ])('a bad version (%j) is named in the message as found, a string quoted', (after, found) => {
    expect(() => verifier().keyHistoryChanges(after as never)).toThrow(
      expect.objectContaining({ message: expect.stringContaining(found) }),
    );
  });

  test('bad options of mergeKeyHistory are named in the message as found', () => {
    expect(() => verifier().mergeKeyHistory([], null as never)).toThrow(/mergeKeyHistory: options must be an object, got null/);
  });
});

describe('keyHistoryChanges() asked by more than one reader', () => {
  test('a reader behind the last one asked still gets every key changed after its version', async () => {
    const gateway = verifier();
    await gateway.verify(await issuer.token());
    const first = gateway.keyHistoryChanges(0);
    clock.advance(MINUTE);
    await gateway.verify(await issuer.token());
    gateway.keyHistoryChanges(first.through);
    expect(gateway.keyHistoryChanges(0).entries).toEqual([expect.objectContaining({ kid: issuer.signingKey.kid, lastUsed: clock.now() })]);
  });
});
