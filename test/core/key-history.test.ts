/**
 * The key rules watched through the verifier, against a real JWKS endpoint on 127.0.0.1 and a
 * frozen clock: `key_used_early`, `key_rotation_overdue` and `key_withdrawn`, each once per kid,
 * and the history `keyHistory()` reports.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { KeyBreachEvent, KeyHistoryEntry } from '../../src/index.js';
import { type TestIssuer, createTestIssuer } from '../../src/testing/index.js';
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
