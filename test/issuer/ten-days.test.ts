import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuthError, IssuerRegistry, type JwksFetchEvent, type Verifier, createVerifier } from '../../src/index.js';
import { InMemoryKeyStore, type Issuer, createIssuer } from '../../src/issuer/index.js';
import { fakeClock } from '../support/jwks-clock.js';
import { type DownloadTracker, type LoopbackJwks, serveIssuerJwks, trackDownloads } from './loopback-jwks.js';
import { useFreshRsaKeys } from '../support/key-pool.js';

// Ten days of rotation on keys InMemoryKeyStore.generate() gets from the platform, not the run's pool.
useFreshRsaKeys();

const ISS = 'https://auth.acme.example';
const AUD = 'https://payments.example';
const HOUR = 3600;
const STEP = HOUR / 2;
const DAYS = 10;

interface Minted {
  readonly token: string;
  readonly kid: string;
  readonly expiry: number;
}

function kidOf(token: string): string {
  return JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString()).kid as string;
}

describe('ten simulated days of rotation against the gateway verifier with default settings', () => {
  const clock = fakeClock();
  const downloads: DownloadTracker = trackDownloads();
  const rejections: string[] = [];
  const firstPublished = new Map<string, number>();
  const firstSigned = new Map<string, number>();
  let issuer: Issuer;
  let server: LoopbackJwks;
  let verifier: Verifier;
  let live: Minted[] = [];
  let signed = 0;
  let verified = 0;
  let compromisedKid: string | undefined;
  const breaches = () => downloads.events.filter((event) => event.type.startsWith('key_') && event.type !== 'keys_removed');

  beforeAll(async () => {
    issuer = await createIssuer({
      issuer: ISS,
      audience: AUD,
      product: 'acme',
      keyStore: new InMemoryKeyStore(),
      now: clock.now,
    });
    server = await serveIssuerJwks(issuer);
    verifier = createVerifier({
      registry: new IssuerRegistry([{ issuer: ISS, jwksUri: server.url, products: ['acme'] }]),
      audience: AUD,
      now: clock.now,
      fetch: downloads.fetch,
      onEvent: downloads.onEvent,
    });
    const end = clock.now() + DAYS * 86_400_000;
    for (const key of issuer.jwks().document.keys) firstPublished.set(key.kid, clock.now());
    clock.advance(HOUR);
    while (clock.now() < end) {
      await issuer.tick();
      const at = clock.now();
      for (const key of issuer.jwks().document.keys) if (!firstPublished.has(key.kid)) firstPublished.set(key.kid, at);
      const token = await issuer.sign({
        tenant: 'ern:acme/tenants/t-1',
        scopes: ['pay:processPayments'],
        lifetime: 86_400,
      });
      signed += 1;
      const kid = kidOf(token);
      if (!firstSigned.has(kid)) firstSigned.set(kid, at);
      live = [...live.filter((minted) => minted.expiry > at / 1000), { token, kid, expiry: at / 1000 + 86_400 }];
      for (const minted of live) {
        try {
          await verifier.verify(minted.token);
          verified += 1;
        } catch (error) {
          rejections.push(`${new Date(at).toISOString()} ${minted.kid}: ${(error as AuthError).code}`);
        }
      }
      await downloads.settled();
      clock.advance(STEP);
    }
  });

  afterAll(async () => {
    await server.close();
  });

  it('signs and verifies a token at every step with no rejection', () => {
    expect(signed).toBe(DAYS * 48 - 2);
    expect(verified).toBeGreaterThan(signed * 40);
    expect(rejections).toEqual([]);
  });

  it('never makes the verifier refetch for an unknown kid', () => {
    const fetches = downloads.events.filter((event): event is JwksFetchEvent => event.type === 'jwks_fetch');
    expect(fetches.length).toBeGreaterThan(DAYS * 40);
    expect(fetches.filter((event) => event.trigger === 'kid_miss')).toEqual([]);
    expect(fetches.filter((event) => event.outcome !== 'ok')).toEqual([]);
  });

  it('rotates every 48 hours, each key published at least an hour before its first token', () => {
    const kids = [...firstSigned.keys()];
    expect(kids).toHaveLength(DAYS / 2);
    const starts = kids.map((kid) => firstSigned.get(kid) as number);
    for (let index = 1; index < starts.length; index += 1) {
      expect(((starts[index] as number) - (starts[index - 1] as number)) / 1000).toBe(48 * HOUR);
    }
    for (const kid of kids) {
      expect(((firstSigned.get(kid) as number) - (firstPublished.get(kid) as number)) / 1000).toBeGreaterThanOrEqual(HOUR);
    }
  });

  it('keeps a retired key published until its tokens have expired, then drops it', () => {
    const published = issuer.jwks().document.keys.map((key) => key.kid);
    const kids = [...firstSigned.keys()];
    expect(published).not.toContain(kids[0]);
    // 240 h: the key signing since 193 h and its standby; the key before retired at 193 h and left at 218 h.
    const schedule = issuer.keys();
    expect(schedule.map((key) => key.state)).toEqual(['signing', 'standby']);
    expect(published.sort()).toEqual(schedule.map((key) => key.kid).sort());
  });

  it('reports no breach of the key rules', () => {
    expect(breaches()).toEqual([]);
    const history = verifier.keyHistory();
    // Each key withdrawn within the retention (48 h and 30 s by default) is still remembered, the
    // older ones forgotten: the signing key, its standby and the key retired before them.
    expect(history.length).toBeGreaterThanOrEqual(3);
    const retention = (2 * 86_400 + 30) * 1000;
    expect(history.filter((key) => key.withdrawn !== null && clock.now() - key.withdrawn > retention)).toEqual([]);
    expect(history.filter((key) => key.breaches.length > 0)).toEqual([]);
  });

  it('after compromised(kid) and refresh(), refuses every token of that key, and accepts the standby’s at once', async () => {
    const kid = issuer.keys().find((key) => key.state === 'signing')?.kid as string;
    const standby = issuer.keys().find((key) => key.state === 'standby')?.kid as string;
    const ofKey = live.filter((minted) => minted.kid === kid);
    expect(ofKey.length).toBeGreaterThan(0);
    compromisedKid = kid;
    const report = await issuer.compromised(kid);
    expect(issuer.jwks().document.keys.map((key) => key.kid)).not.toContain(kid);
    await verifier.refresh(ISS);
    const codes = await Promise.all(
      ofKey.map((minted) =>
        verifier.verify(minted.token).then(
          () => 'accepted',
          (error: AuthError) => error.code,
        ),
      ),
    );
    expect(new Set(codes)).toEqual(new Set(['unknown_key']));
    const fresh = await issuer.sign({ tenant: 'ern:acme/tenants/t-1', scopes: ['pay:processPayments'] });
    expect([kidOf(fresh), report.signing]).toEqual([standby, standby]);
    await expect(verifier.verify(fresh)).resolves.toMatchObject({ issuer: ISS });
  });

  it("reports the compromised key as key_withdrawn at the verifier's next download, once", () => {
    expect(breaches()).toEqual([expect.objectContaining({ type: 'key_withdrawn', issuer: ISS, kid: compromisedKid })]);
  });
});
