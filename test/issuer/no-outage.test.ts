/**
 * A compromise costs no outage: the standby signs at once, and the gateway's own verifier (default
 * settings: a JWKS max-age of 600 s) accepts its tokens from the JWKS it already holds. The JWKS is
 * served on 127.0.0.1 by `jwksNodeHandler`; the issuer and the verifier run on one injected clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuthError, IssuerRegistry, type JwksFetchEvent, type VerifierEvent, createVerifier } from '../../src/index.js';
import { InMemoryKeyStore, type Issuer, type JwksResponse, createIssuer } from '../../src/issuer/index.js';
import { fakeClock, type FakeClock } from '../support/jwks-clock.js';
import { type DownloadTracker, type LoopbackJwks, serveIssuerJwks, trackDownloads } from './loopback-jwks.js';
import { RecycledKeyStore, makeKeyPairs } from './recycled-key-store.js';

const ISS = 'https://auth.acme.example';
const AUD = 'https://payments.example';
const TENANT = 'ern:acme/tenants/t-1';
const HOUR = 3600;
const STEP = 600;
const CYCLE = 48 * HOUR;

function kidOf(token: string): string {
  return JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString()).kid as string;
}

function gateway(url: string, clock: FakeClock, downloads: DownloadTracker) {
  return createVerifier({
    registry: new IssuerRegistry([{ issuer: ISS, jwksUri: url, products: ['acme'] }]),
    audience: AUD,
    now: clock.now,
    fetch: downloads.fetch,
    onEvent: downloads.onEvent,
  });
}

const fetches = (events: readonly VerifierEvent[]) => events.filter((event): event is JwksFetchEvent => event.type === 'jwks_fetch');

/** What happened when the signing key was compromised `offset` seconds into its turn. */
interface Moment {
  readonly offset: number;
  readonly compromised: string;
  /** The standby before the compromise, and how long it had been published (s). */
  readonly standby: string | undefined;
  readonly standbyAge: number;
  readonly reportedSigner: string | null;
  /** The kid of the token signed at the moment of the compromise, or the refusal's code. */
  readonly signed: string;
  /** The verifier's verdict on that token: `accepted` or a rejection code. */
  readonly verdict: string;
  /** The verifier's downloads, by trigger. */
  readonly triggers: readonly string[];
  /** The standby after the compromise: its kid and publication time (s after the compromise). */
  readonly newStandby: string | undefined;
  readonly newStandbyPublished: number;
}

describe('the signing key compromised at each 10-minute moment of a 48 h turn', () => {
  const moments: Moment[] = [];
  let server: LoopbackJwks;
  let serving: () => JwksResponse = () => {
    throw new Error('no issuer yet');
  };

  /**
   * A fresh store (t0 its creation): the first key signs from 1 h; the second, published with its
   * standby at 48 h, from 49 h. Its turn is the cycle: the schedule ticks every hour, the gateway
   * verifies a token 10 minutes before the compromise, and again the first token after it.
   */
  async function compromiseAt(offset: number, pairs: Awaited<ReturnType<typeof makeKeyPairs>>): Promise<Moment> {
    const clock = fakeClock();
    const issuer = await createIssuer({
      issuer: ISS,
      audience: AUD,
      product: 'acme',
      keyStore: new RecycledKeyStore(pairs),
      now: clock.now,
    });
    serving = () => issuer.jwks();
    const downloads = trackDownloads();
    const verifier = gateway(server.url, clock, downloads);
    const start = clock.now() + 49 * HOUR * 1000;
    const at = start + offset * 1000;
    const runTo = async (time: number) => {
      while (clock.now() < time) {
        clock.advance(Math.min(HOUR, (time - clock.now()) / 1000));
        await issuer.tick();
      }
    };
    await runTo(at - STEP * 1000);
    await verifier.verify(await issuer.sign({ tenant: TENANT, scopes: ['pay:processPayments'] }));
    await downloads.settled();
    await runTo(at);
    const compromised = issuer.keys().find((key) => key.state === 'signing')?.kid as string;
    const standby = issuer.keys().find((key) => key.state === 'standby' && key.signsFrom.getTime() <= at);
    const report = await issuer.compromised(compromised);
    const signed = await issuer.sign({ tenant: TENANT, scopes: ['pay:processPayments'] }).then(
      (token) => ({ token, kid: kidOf(token) }),
      (error: { code: string }) => ({ token: undefined, kid: error.code }),
    );
    const verdict =
      signed.token === undefined
        ? 'not signed'
        : await verifier.verify(signed.token).then(
            () => 'accepted',
            (error: AuthError) => error.code,
          );
    await downloads.settled();
    return {
      offset,
      compromised,
      standby: standby?.kid,
      standbyAge: standby === undefined ? Number.NaN : (at - standby.publishedAt.getTime()) / 1000,
      reportedSigner: report.signing,
      signed: signed.kid,
      verdict,
      triggers: fetches(downloads.events).map((event) => event.trigger),
      newStandby: report.standby?.kid,
      newStandbyPublished: ((report.standby?.publishedAt.getTime() ?? Number.NaN) - at) / 1000,
    };
  }

  beforeAll(async () => {
    // A turn needs six keys at most (two keys and their standbys, the next key and its standby, a new
    // standby): eight pairs, shared by the stores of all 288 moments, which never meet.
    const pairs = await makeKeyPairs(8);
    server = await serveIssuerJwks({ jwks: () => serving() });
    for (let offset = 0; offset < CYCLE; offset += STEP) moments.push(await compromiseAt(offset, pairs));
  });

  afterAll(async () => {
    await server?.close();
  });

  it('covers every 10-minute moment of the turn, its first and last hours included', () => {
    expect(moments).toHaveLength(288);
    expect([moments[0]?.offset, moments.at(-1)?.offset]).toEqual([0, CYCLE - STEP]);
  });

  it('signs at once each time, with the standby, published at least an hour earlier', () => {
    const wrong = moments.filter(
      (moment) =>
        moment.standby === undefined ||
        moment.signed !== moment.standby ||
        moment.reportedSigner !== moment.standby ||
        !(moment.standbyAge >= HOUR),
    );
    expect(wrong).toEqual([]);
  });

  it("the gateway's verifier accepts each new token from the JWKS it holds, never downloading for an unknown kid", () => {
    expect(moments.filter((moment) => moment.verdict !== 'accepted')).toEqual([]);
    expect(moments.filter((moment) => moment.triggers.includes('kid_miss'))).toEqual([]);
    // It did download: once before the compromise, and at most a max-age reload after it.
    expect(moments.filter((moment) => moment.triggers[0] !== 'initial' || moment.triggers.length > 2)).toEqual([]);
  });

  it('publishes a new standby each time, except in the last hour, when the next key’s standby is already published', () => {
    const lastHour = (moment: Moment) => moment.offset >= CYCLE - HOUR;
    expect(moments.filter((moment) => !lastHour(moment) && moment.newStandbyPublished !== 0)).toEqual([]);
    expect(moments.filter((moment) => lastHour(moment) && moment.newStandbyPublished !== -(moment.offset - (CYCLE - HOUR)))).toEqual([]);
    expect(moments.filter((moment) => moment.newStandby === moment.standby || moment.newStandby === moment.compromised)).toEqual([]);
  });
});

describe('ten simulated days with one compromise a day, against the gateway verifier with default settings', () => {
  const DAYS = 10;
  const clock = fakeClock();
  const downloads = trackDownloads();
  const rejections: string[] = [];
  const refusals: string[] = [];
  const compromised = new Set<string>();
  /** The compromised keys that had signed tokens still valid: each one a key_withdrawn breach. */
  const withdrawnLive = new Set<string>();
  let tokensOfCompromised = 0;
  /** kid-miss downloads while verifying tokens of sound keys (a compromised key's tokens cause their own). */
  let kidMisses = 0;
  let stillAccepted = 0;
  let signed = 0;
  let verified = 0;
  let issuer: Issuer;
  let server: LoopbackJwks;

  beforeAll(async () => {
    issuer = await createIssuer({ issuer: ISS, audience: AUD, product: 'acme', keyStore: new InMemoryKeyStore(), now: clock.now });
    server = await serveIssuerJwks(issuer);
    const verifier = gateway(server.url, clock, downloads);
    const misses = () => fetches(downloads.events).filter((event) => event.trigger === 'kid_miss').length;
    let live: { token: string; kid: string; expiry: number }[] = [];
    clock.advance(HOUR);
    const end = clock.now() + DAYS * 86_400_000;
    for (let step = 0; clock.now() < end; step += 1) {
      await issuer.tick();
      const at = clock.now();
      // Once a day, at a different time of day each day: the signing key is compromised.
      if (step % 48 === (Math.floor(step / 48) * 17 + 5) % 48) {
        const kid = issuer.keys().find((key) => key.state === 'signing')?.kid as string;
        compromised.add(kid);
        await issuer.compromised(kid);
        // The operators are told, and refresh: from now on, each of its tokens is refused.
        await verifier.refresh(ISS);
        const ofKey = live.filter((minted) => minted.kid === kid && minted.expiry > at / 1000);
        if (ofKey.length > 0) withdrawnLive.add(kid);
        for (const minted of ofKey) {
          tokensOfCompromised += 1;
          await verifier.verify(minted.token).then(
            () => (stillAccepted += 1),
            () => undefined,
          );
        }
        live = live.filter((minted) => minted.kid !== kid);
      }
      try {
        const token = await issuer.sign({ tenant: TENANT, scopes: ['pay:processPayments'], lifetime: 86_400 });
        signed += 1;
        live = [...live.filter((minted) => minted.expiry > at / 1000), { token, kid: kidOf(token), expiry: at / 1000 + 86_400 }];
      } catch (error) {
        refusals.push(`${new Date(at).toISOString()}: ${(error as { code: string }).code}`);
      }
      const missesBefore = misses();
      for (const minted of live) {
        await verifier.verify(minted.token).then(
          () => (verified += 1),
          (error: AuthError) => rejections.push(`${new Date(at).toISOString()} ${minted.kid}: ${error.code}`),
        );
      }
      await downloads.settled();
      kidMisses += misses() - missesBefore;
      clock.advance(HOUR / 2);
    }
  });

  afterAll(async () => {
    await server?.close();
  });

  it('compromises a signing key on each of the ten days', () => {
    expect(compromised.size).toBe(DAYS);
  });

  it('signs at every step, the moment of each compromise included, and the verifier rejects no token of a sound key', () => {
    expect(refusals).toEqual([]);
    expect(rejections).toEqual([]);
    expect(signed).toBe(DAYS * 48);
    expect(verified).toBeGreaterThan(signed * 10);
  });

  it('refuses every token of a compromised key once the operators refresh', () => {
    expect(tokensOfCompromised).toBeGreaterThan(DAYS * 10);
    expect(stillAccepted).toBe(0);
  });

  it('never makes the verifier download for an unknown kid to verify a token of a sound key', () => {
    expect(kidMisses).toBe(0);
    expect(fetches(downloads.events).filter((event) => event.trigger === 'refresh')).toHaveLength(DAYS);
  });

  it('breaks no key rule but the withdrawal of each compromised key (no key used early, none signing too long)', () => {
    const breaches = downloads.events.filter((event) => event.type.startsWith('key_') && event.type !== 'keys_removed');
    expect(breaches.filter((event) => event.type !== 'key_withdrawn')).toEqual([]);
    expect(new Set(breaches.map((event) => (event as { kid: string }).kid))).toEqual(withdrawnLive);
    expect(withdrawnLive.size).toBeGreaterThanOrEqual(DAYS - 1);
  });
});

describe("a compromise late in a turn, against the gateway verifier's key rules", () => {
  it('the standby signs to the end of the turn only, so no key signs past the key age limit (key_rotation_overdue)', async () => {
    const clock = fakeClock();
    const downloads = trackDownloads();
    const issuer = await createIssuer({ issuer: ISS, audience: AUD, product: 'acme', keyStore: new InMemoryKeyStore(), now: clock.now });
    const server = await serveIssuerJwks(issuer);
    try {
      const verifier = gateway(server.url, clock, downloads);
      const verdicts: string[] = [];
      let compromisedKid = '';
      // Hourly from 1 h (the first key's turn) for four days; the signing key is compromised 46 h into its turn,
      // before the next key is published: its standby, published with it, signs only to the end of its turn.
      for (let hour = 1; hour <= 96; hour += 1) {
        clock.advance(HOUR);
        await issuer.tick();
        if (hour === 47) {
          compromisedKid = issuer.keys().find((key) => key.state === 'signing')?.kid as string;
          await issuer.compromised(compromisedKid);
        }
        const token = await issuer.sign({ tenant: TENANT, scopes: ['pay:processPayments'] });
        verdicts.push(
          await verifier.verify(token).then(
            () => 'accepted',
            (error: AuthError) => error.code,
          ),
        );
        await downloads.settled();
      }
      expect(new Set(verdicts)).toEqual(new Set(['accepted']));
      const kinds = downloads.events
        .filter((event) => event.type.startsWith('key_') && event.type !== 'keys_removed')
        .map((event) => event.type);
      expect(kinds.filter((kind) => kind !== 'key_withdrawn')).toEqual([]);
      // Three keys signed; the compromised one, withdrawn at 47 h, is forgotten 48 h later (the
      // retention: maxTokenLifetime, clockTolerance and jwksStaleWindow), so two remain.
      const used = verifier.keyHistory().filter((key) => key.firstUsed !== null);
      expect(used).toHaveLength(2);
      expect(used.map((key) => key.kid)).not.toContain(compromisedKid);
    } finally {
      await server.close();
    }
  });
});
