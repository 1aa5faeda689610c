/**
 * The standby key: published with each signing key, so that it has been published for the
 * publication lead by the time that key signs, it takes over at once when the signing key is
 * compromised, for the rest of that key's turn. Times below count from the store's creation (t0);
 * the first key signs from 1 h, the second from 49 h.
 */
import { decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import { InMemoryKeyStore, type Issuer, IssuerError, type KeyInfo, createIssuer } from '../../src/issuer/index.js';
import { type FakeClock, fakeClock } from '../support/jwks-clock.js';

const HOUR = 3600;
const TENANT = 'ern:acme/tenants/t-1';

async function setUp(): Promise<{ issuer: Issuer; clock: FakeClock; store: InMemoryKeyStore; t0: number }> {
  const clock = fakeClock();
  const store = new InMemoryKeyStore();
  const issuer = await createIssuer({
    issuer: 'https://auth.acme.example',
    audience: 'https://payments.example',
    product: 'acme',
    keyStore: store,
    now: clock.now,
  });
  return { issuer, clock, store, t0: clock.now() };
}

const published = (issuer: Issuer) => new Set(issuer.jwks().document.keys.map((key) => key.kid));
const states = (issuer: Issuer) => Object.fromEntries(issuer.keys().map((key) => [key.kid, key.state]));
const inState = (issuer: Issuer, state: KeyInfo['state']) => issuer.keys().filter((key) => key.state === state);
const only = (issuer: Issuer, state: KeyInfo['state']) => {
  const keys = inState(issuer, state);
  expect(keys).toHaveLength(1);
  return keys[0] as KeyInfo;
};
const signedBy = async (issuer: Issuer) => decodeProtectedHeader(await issuer.sign({ tenant: TENANT, scopes: ['hub:subscribe'] })).kid;
const hours = (t0: number, at: Date | null | undefined) => ((at?.getTime() ?? Number.NaN) - t0) / 3_600_000;

async function refusal(issuer: Issuer): Promise<IssuerError> {
  const error = await issuer.sign({ tenant: TENANT, scopes: ['hub:subscribe'] }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(IssuerError);
  return error as IssuerError;
}

describe('the JWKS through a cycle: the signing key, the standby, and retired keys whose tokens may be valid', () => {
  it('holds, at each stage, exactly the keys the schedule names', async () => {
    const { issuer, clock, store, t0 } = await setUp();
    const [first, firstStandby] = issuer.keys().map((key) => key.kid) as [string, string];
    // t0: the first key and its standby, neither may sign yet.
    expect(states(issuer)).toEqual({ [first]: 'published', [firstStandby]: 'standby' });
    expect(published(issuer)).toEqual(new Set([first, firstStandby]));
    expect((await issuer.tick()).standby).toBeNull();

    clock.advance(HOUR);
    expect(await signedBy(issuer)).toBe(first);
    expect(states(issuer)).toEqual({ [first]: 'signing', [firstStandby]: 'standby' });
    expect((await issuer.tick()).standby).toBe(firstStandby);

    // 48 h: the next key and its standby, an hour before the next key's turn.
    clock.advance(47 * HOUR);
    const rotation = await issuer.tick();
    expect(rotation.published).toHaveLength(2);
    const [second, secondStandby] = rotation.published as [string, string];
    expect(states(issuer)).toEqual({ [first]: 'signing', [second]: 'published', [firstStandby]: 'standby', [secondStandby]: 'standby' });
    expect(published(issuer)).toEqual(new Set([first, second, firstStandby, secondStandby]));
    expect(rotation.standby).toBe(firstStandby);

    // 49 h: the second key signs; the first is retired; the first standby, which signed nothing, leaves.
    clock.advance(HOUR);
    expect(await signedBy(issuer)).toBe(second);
    expect(published(issuer)).toEqual(new Set([second, first, secondStandby]));
    const after = await issuer.tick();
    expect([after.removed, after.standby]).toEqual([[firstStandby], secondStandby]);
    expect(store.kids).not.toContain(firstStandby);
    expect(states(issuer)).toEqual({ [second]: 'signing', [first]: 'retired', [secondStandby]: 'standby' });

    // 49 h + 24 h + 1 h: every token of the first key has expired.
    clock.advance(25 * HOUR);
    expect((await issuer.tick()).removed).toEqual([first]);
    expect(published(issuer)).toEqual(new Set([second, secondStandby]));
    expect(hours(t0, only(issuer, 'signing').signsFrom)).toBe(49);
  });

  it('publishes a standby with the key rotate() publishes', async () => {
    const { issuer, clock } = await setUp();
    clock.advance(HOUR);
    const next = await issuer.rotate();
    const standbys = inState(issuer, 'standby');
    expect(standbys).toHaveLength(2);
    expect(standbys.some((key) => key.publishedAt.getTime() === next.publishedAt.getTime())).toBe(true);
  });
});

describe('compromised(kid) with a standby', () => {
  it('of the signing key: the standby signs at once, and a new standby is published', async () => {
    const { issuer, clock, store, t0 } = await setUp();
    clock.advance(10 * HOUR);
    const [signing, standby] = [only(issuer, 'signing').kid, only(issuer, 'standby').kid];
    const report = await issuer.compromised(signing);
    expect([report.removed, report.signing, report.next]).toEqual([signing, standby, null]);
    expect(await signedBy(issuer)).toBe(standby);
    const fresh = report.standby as KeyInfo;
    expect([fresh.state, hours(t0, fresh.publishedAt), hours(t0, fresh.signsFrom)]).toEqual(['standby', 10, 11]);
    expect(published(issuer)).toEqual(new Set([standby, fresh.kid]));
    expect(store.kids).not.toContain(signing);
  });

  it('of the signing key: the standby signs to the end of that key’s turn, and the rotation keeps its 48 h', async () => {
    const { issuer, clock, t0 } = await setUp();
    clock.advance(10 * HOUR);
    const { signing } = await issuer.compromised(only(issuer, 'signing').kid);
    clock.advance(38 * HOUR - 1);
    expect((await issuer.tick()).published).toEqual([]);
    clock.advance(1);
    const [next] = (await issuer.tick()).published;
    expect(hours(t0, issuer.keys().find((key) => key.kid === next)?.signsFrom)).toBe(49);
    clock.advance(HOUR - 1);
    expect(await signedBy(issuer)).toBe(signing);
    clock.advance(1);
    expect(await signedBy(issuer)).toBe(next);
  });

  it('of the standby: the signing key goes on, and a new standby may take over an hour later', async () => {
    const { issuer, clock, store } = await setUp();
    clock.advance(10 * HOUR);
    const [signing, standby] = [only(issuer, 'signing').kid, only(issuer, 'standby').kid];
    const report = await issuer.compromised(standby);
    expect([report.signing, report.next]).toEqual([signing, null]);
    const fresh = report.standby as KeyInfo;
    expect(fresh.kid).not.toBe(standby);
    expect(fresh.signsFrom.getTime() - fresh.publishedAt.getTime()).toBe(HOUR * 1000);
    expect(published(issuer)).toEqual(new Set([signing, fresh.kid]));
    expect(store.kids).not.toContain(standby);
    expect(await signedBy(issuer)).toBe(signing);
    expect((await issuer.tick()).standby).toBeNull();
    clock.advance(HOUR);
    expect((await issuer.tick()).standby).toBe(fresh.kid);
  });

  it('of the signing key in the hour before the rotation: the standby signs until the next key’s turn, whose standby is already published', async () => {
    const { issuer, clock } = await setUp();
    clock.advance(48 * HOUR);
    const standby = only(issuer, 'standby').kid;
    const [next, nextStandby] = (await issuer.tick()).published as [string, string];
    clock.advance(HOUR / 2);
    const report = await issuer.compromised(only(issuer, 'signing').kid);
    expect([report.signing, report.next?.kid, report.standby?.kid]).toEqual([standby, next, nextStandby]);
    expect(await signedBy(issuer)).toBe(standby);
    clock.advance(HOUR / 2);
    expect(await signedBy(issuer)).toBe(next);
  });

  it('of the next key before its turn: its standby takes that turn, at the same moment', async () => {
    const { issuer, clock, t0 } = await setUp();
    clock.advance(48 * HOUR);
    const standby = only(issuer, 'standby').kid;
    const [next, nextStandby] = (await issuer.tick()).published as [string, string];
    const signing = only(issuer, 'signing').kid;
    const report = await issuer.compromised(next);
    expect([report.signing, report.next?.kid, hours(t0, report.next?.signsFrom)]).toEqual([signing, nextStandby, 49]);
    // The signing key keeps its standby; a new one is published for the turn starting at 49 h.
    expect(report.standby?.kid).toBe(standby);
    const fresh = inState(issuer, 'standby').find((key) => key.kid !== standby) as KeyInfo;
    expect([hours(t0, fresh.publishedAt), hours(t0, fresh.signsFrom)]).toEqual([48, 49]);
    clock.advance(HOUR);
    expect(await signedBy(issuer)).toBe(nextStandby);
  });

  it('of the first key in its first hour: its standby takes its turn, at the same moment', async () => {
    const { issuer, clock, t0 } = await setUp();
    const [first, standby] = issuer.keys().map((key) => key.kid) as [string, string];
    clock.advance(HOUR / 2);
    const report = await issuer.compromised(first);
    expect([report.signing, report.next?.kid, hours(t0, report.next?.signsFrom)]).toEqual([null, standby, 1]);
    expect((await refusal(issuer)).code).toBe('key_not_ready');
    clock.advance(HOUR / 2);
    expect(await signedBy(issuer)).toBe(standby);
  });

  it('twice within the hour: the second waits for the new standby to have been published for an hour', async () => {
    const { issuer, clock } = await setUp();
    clock.advance(10 * HOUR);
    const first = await issuer.compromised(only(issuer, 'signing').kid);
    clock.advance(HOUR / 6);
    const second = await issuer.compromised(first.signing as string);
    const waiting = first.standby as KeyInfo;
    expect([second.signing, second.next?.kid]).toEqual([null, waiting.kid]);
    expect(second.next?.signsFrom).toEqual(waiting.signsFrom);
    const refused = await refusal(issuer);
    expect(refused.code).toBe('key_not_ready');
    expect(refused.message).toContain(waiting.signsFrom.toISOString());
    clock.advance((5 * HOUR) / 6);
    expect(await signedBy(issuer)).toBe(waiting.kid);
    expect(second.standby?.kid).not.toBe(waiting.kid);
  });
});
