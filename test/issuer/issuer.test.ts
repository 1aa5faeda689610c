import { generateKeyPairSync } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { describe, expect, it, vi } from 'vitest';
import {
  InMemoryKeyStore,
  type Issuer,
  type IssuerOptions,
  IssuerError,
  type KeyRecord,
  KeyStoreError,
  createIssuer,
} from '../../src/issuer/index.js';
import type { RsaPublicJwk } from '../../src/index.js';
import { fakeClock, type FakeClock } from '../support/jwks-clock.js';
import { PATIENCE_MS } from '../support/loaded-machine.js';
import { watchUnhandledRejections } from '../support/unhandled-rejections.js';

const ISS = 'https://auth.acme.example';
const AUD = 'https://payments.example';
const HOUR = 3600;
const TENANT = 'ern:acme/tenants/t-1';

async function setUp(options: Partial<IssuerOptions> = {}): Promise<{ issuer: Issuer; clock: FakeClock; store: InMemoryKeyStore }> {
  const clock = fakeClock();
  const store = new InMemoryKeyStore();
  const issuer = await createIssuer({
    issuer: ISS,
    audience: AUD,
    product: 'acme',
    keyStore: store,
    now: clock.now,
    ...options,
  });
  return { issuer, clock, store };
}

/** An issuer whose first key has been published for an hour. */
async function ready(options: Partial<IssuerOptions> = {}) {
  const setup = await setUp(options);
  setup.clock.advance(HOUR);
  return setup;
}

const kids = (issuer: Issuer) => issuer.jwks().document.keys.map((key) => key.kid);
const signingKid = (issuer: Issuer) => issuer.keys().find((key) => key.state === 'signing')?.kid;

async function refusal(promise: Promise<unknown>): Promise<IssuerError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(IssuerError);
  return error as IssuerError;
}

describe('createIssuer: the first key', () => {
  it('publishes a first key and its standby at once; the key may sign only an hour later', async () => {
    const { issuer, clock } = await setUp();
    expect(issuer.keys().map((key) => key.state)).toEqual(['published', 'standby']);
    expect(kids(issuer)).toEqual(issuer.keys().map((key) => key.kid));
    const early = await refusal(issuer.sign({ tenant: TENANT, scopes: ['pay:processPayments'] }));
    expect(early.code).toBe('key_not_ready');
    expect(early.message).toContain('signs from 2030-01-01T01:00:00.000Z');
    clock.advance(HOUR - 1);
    expect((await refusal(issuer.sign({ tenant: TENANT, scopes: ['pay:processPayments'] }))).code).toBe('key_not_ready');
    clock.advance(1);
    await expect(issuer.sign({ tenant: TENANT, scopes: ['pay:processPayments'] })).resolves.toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  });
});

describe('issuer.sign', () => {
  // One issuer for the tests that change nothing in its schedule (a refusal, a token).
  let shared: ReturnType<typeof ready> | undefined;
  const defaultIssuer = () => {
    shared ??= ready();
    return shared;
  };

  it('writes exactly the header alg, typ and kid', async () => {
    const { issuer } = await defaultIssuer();
    const token = await issuer.sign({ tenant: TENANT, scopes: ['pay:processPayments'] });
    expect(decodeProtectedHeader(token)).toStrictEqual({ alg: 'RS256', typ: 'JWT', kid: signingKid(issuer) });
  });

  it("writes exactly the contract's claims, with sub equal to iss, exp equal to expt and nbf equal to iat", async () => {
    const { issuer, clock } = await ready();
    const token = await issuer.sign({
      tenant: TENANT,
      scopes: 'pay:processPayments hub:subscribe',
      user: '//users/u-1',
      tenantName: 'Acme Clinic',
      lifetime: 600,
    });
    const iat = clock.now() / 1000;
    expect(decodeJwt(token)).toStrictEqual({
      iss: ISS,
      sub: ISS,
      aud: AUD,
      scope: 'pay:processPayments hub:subscribe',
      iat,
      nbf: iat,
      exp: iat + 600,
      expt: iat + 600,
      tenant_ern: TENANT,
      tenant_name: 'Acme Clinic',
      user_ern: '//users/u-1',
    });
  });

  it('leaves out exp when emitExp is false', async () => {
    const { issuer } = await ready({ emitExp: false });
    const claims = decodeJwt(await issuer.sign({ tenant: TENANT, scopes: ['pay:chargeToken'] }));
    expect(claims).not.toHaveProperty('exp');
    expect(claims.expt).toBe((claims.iat as number) + 300);
  });

  it("names the public tenant's own ERN as the user of a system token", async () => {
    const { issuer } = await defaultIssuer();
    const claims = decodeJwt(await issuer.sign({ tenant: 'ern:acme/tenants/public', scopes: ['pay:manageIntegration'] }));
    expect(claims.user_ern).toBe('ern:acme/tenants/public');
  });

  it.each([
    [{ tenant: TENANT, scopes: ['pay:refund'] }, 'invalid_scope', 'scopes'],
    [{ tenant: TENANT, scopes: [] }, 'invalid_scope', 'scopes'],
    [{ tenant: TENANT, scopes: 'pay:processPayments  hub:subscribe' }, 'invalid_scope', 'scopes'],
    [{ tenant: 'acme/tenants/t-1', scopes: ['hub:subscribe'] }, 'invalid_tenant', 'tenant'],
    [{ tenant: 'ern:acme/tenants/', scopes: ['hub:subscribe'] }, 'invalid_tenant', 'tenant'],
    [{ tenant: 'ern:globex/tenants/t-1', scopes: ['hub:subscribe'] }, 'tenant_not_allowed', 'tenant'],
    [{ tenant: TENANT, scopes: ['hub:subscribe'], lifetime: 86_401 }, 'lifetime_exceeded', 'lifetime'],
    [{ tenant: TENANT, scopes: ['hub:subscribe'], lifetime: 0 }, 'invalid_lifetime', 'lifetime'],
    [{ tenant: TENANT, scopes: ['hub:subscribe'], lifetime: 1.5 }, 'invalid_lifetime', 'lifetime'],
    [{ tenant: TENANT, scopes: ['hub:subscribe'], user: 'ern:globex/tenants/t-1/users/u-1' }, 'invalid_user', 'user'],
    [{ tenant: TENANT, scopes: ['hub:subscribe'], user: 'u-1' }, 'invalid_user', 'user'],
    [{ tenant: TENANT, scopes: ['hub:subscribe'], tenantName: '' }, 'invalid_tenant_name', 'tenantName'],
    [{ tenant: TENANT, scopes: ['hub:subscribe'], audience: 'x' }, 'unknown_field', 'audience'],
  ])('refuses %j with %s naming %s', async (input, code, field) => {
    const { issuer } = await defaultIssuer();
    const error = await refusal(issuer.sign(input as never));
    expect(error.code).toBe(code);
    expect(error.field).toBe(field);
  });

  it('quotes an unknown field as one escaped line, cut (attack: sign() input from a request, its name forging lines)', async () => {
    const { issuer } = await defaultIssuer();
    const name = `x\n\u001b[2Jall done${'y'.repeat(500)}`;
    const error = await refusal(issuer.sign({ tenant: TENANT, scopes: ['hub:subscribe'], [name]: 1 } as never));
    expect(error.code).toBe('unknown_field');
    expect(error.message).toContain('"x\\u000a\\u001b[2Jall done');
    expect(error.message).not.toMatch(/[\n\u001b]/);
    expect(error.message.length).toBeLessThan(300);
  });

  it('refuses a tenant outside the tenants of a limited integration', async () => {
    const { issuer } = await ready({ tenants: ['t-2'] });
    const error = await refusal(issuer.sign({ tenant: TENANT, scopes: ['hub:subscribe'] }));
    expect([error.code, error.field]).toEqual(['tenant_not_allowed', 'tenant']);
  });

  it('accepts a lifetime exactly at the maximum', async () => {
    const { issuer } = await ready({ maxLifetime: 7200 });
    const claims = decodeJwt(await issuer.sign({ tenant: TENANT, scopes: ['hub:subscribe'], lifetime: 7200 }));
    expect((claims.expt as number) - (claims.nbf as number)).toBe(7200);
  });

  it('caps the default lifetime by a maxLifetime under 300 s, so that the gateway accepts the token', async () => {
    const { issuer } = await ready({ maxLifetime: 60 });
    const claims = decodeJwt(await issuer.sign({ tenant: TENANT, scopes: ['hub:subscribe'] }));
    expect((claims.expt as number) - (claims.iat as number)).toBe(60);
  });

  it('takes the whole seconds of a maxLifetime under 300 s that is not whole as the default lifetime', async () => {
    const { issuer } = await ready({ maxLifetime: 60.5 });
    const claims = decodeJwt(await issuer.sign({ tenant: TENANT, scopes: ['hub:subscribe'] }));
    expect((claims.expt as number) - (claims.iat as number)).toBe(60);
  });
});

describe('the rotation schedule', () => {
  it('serves the JWKS with a Cache-Control max-age under the publication lead', async () => {
    const { issuer } = await setUp();
    const { cacheControl, headers } = issuer.jwks();
    expect(cacheControl).toBe('public, max-age=600');
    expect(headers).toEqual({ 'content-type': 'application/jwk-set+json', 'cache-control': 'public, max-age=600' });
  });

  it('serves the publication lead as the max-age by default when the lead is under 600 s', async () => {
    const { issuer } = await setUp({ rotation: { publishLead: 120 } });
    expect(issuer.jwks().cacheControl).toBe('public, max-age=120');
  });

  it('publishes each key, the standby included, with exactly kty, n, e, kid, alg and use', async () => {
    const { issuer } = await setUp();
    const { keys } = issuer.jwks().document;
    expect(keys).toHaveLength(2);
    for (const key of keys) {
      expect(Object.keys(key).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
      expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', e: 'AQAB' });
    }
  });

  it('rotate() publishes a key that signs an hour later, and returns the waiting key when called again', async () => {
    const { issuer, clock } = await ready();
    const first = signingKid(issuer);
    const next = await issuer.rotate();
    expect(next.state).toBe('published');
    expect(next.signsFrom.getTime() - next.publishedAt.getTime()).toBe(HOUR * 1000);
    expect((await issuer.rotate()).kid).toBe(next.kid);
    expect(signingKid(issuer)).toBe(first);
    clock.advance(HOUR);
    expect(signingKid(issuer)).toBe(next.kid);
  });

  it('startSchedule() runs tick() on its timer until stopped', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const { issuer, clock } = await ready();
      const ticks = vi.spyOn(issuer, 'tick');
      const timer = issuer.startSchedule({ every: 60 });
      clock.advance(47 * HOUR);
      vi.advanceTimersByTime(60_000);
      // tick() makes two RSA keys (the next and its standby); the run's pool hands them out, but a loaded machine may still take seconds.
      await vi.waitFor(() => expect(issuer.keys()).toHaveLength(4), { timeout: PATIENCE_MS });
      timer.stop();
      const ticked = ticks.mock.calls.length;
      clock.advance(48 * HOUR);
      vi.advanceTimersByTime(600_000);
      expect(ticks.mock.calls.length).toBe(ticked);
    } finally {
      vi.useRealTimers();
    }
  });

  it.each([
    {
      hook: 'an onError that throws',
      onError: (reported: unknown[]) => (error: unknown) => {
        reported.push(error);
        throw new Error('the logger failed');
      },
    },
    {
      hook: 'an async onError that rejects',
      onError: (reported: unknown[]) => async (error: unknown) => {
        reported.push(error);
        throw new Error('the log shipper failed');
      },
    },
  ])('startSchedule() shields the process from $hook: no unhandled rejection', async ({ onError }) => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const unhandled = watchUnhandledRejections();
    try {
      const { issuer } = await ready();
      vi.spyOn(issuer, 'tick').mockRejectedValue(new Error('disk full'));
      const reported: unknown[] = [];
      const timer = issuer.startSchedule({ every: 60, onError: onError(reported) });
      vi.advanceTimersByTime(60_000);
      await vi.waitFor(() => expect(reported).toHaveLength(1));
      timer.stop();
      await unhandled.settled();
      expect(unhandled.reasons).toEqual([]);
    } finally {
      unhandled.stop();
      vi.useRealTimers();
    }
  });

  it('startSchedule() without onError logs a failed tick on one escaped line, never silently', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const { issuer } = await ready();
      vi.spyOn(issuer, 'tick').mockRejectedValue(new Error('ENOSPC: disk full\n[fake] all good'));
      const timer = issuer.startSchedule({ every: 60 });
      vi.advanceTimersByTime(60_000);
      await vi.waitFor(() => expect(logged).toHaveBeenCalledTimes(1));
      timer.stop();
      const line = String(logged.mock.calls[0]?.[0]);
      expect(line).toContain("the rotation schedule's tick failed (Error: ENOSPC: disk full\\u000a[fake] all good); it runs again in 60 s");
      expect(line).not.toContain('\n');
    } finally {
      logged.mockRestore();
      vi.useRealTimers();
    }
  });

  it('startSchedule() without onError logs the whole of a key store error, its advice included', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const { issuer } = await ready();
      const advice = 'restore schedule.json from a backup, or correct it (the key files beside it are kept).';
      const failure = new KeyStoreError(
        'invalid_schedule',
        `"/var/lib/acme/paygate-keys/schedule.json": it is empty (0 bytes), not JSON; ${advice}`,
      );
      vi.spyOn(issuer, 'tick').mockRejectedValue(failure);
      const timer = issuer.startSchedule({ every: 60 });
      vi.advanceTimersByTime(60_000);
      await vi.waitFor(() => expect(logged).toHaveBeenCalledTimes(1));
      timer.stop();
      expect(String(logged.mock.calls[0]?.[0])).toContain(advice);
    } finally {
      logged.mockRestore();
      vi.useRealTimers();
    }
  });

  it('compromised(kid) refuses a kid it does not hold', async () => {
    const { issuer } = await ready();
    const error = await refusal(issuer.compromised('nope'));
    expect([error.code, error.field]).toEqual(['unknown_key', 'kid']);
  });

  it('a second instance over the same store sees the schedule after reload()', async () => {
    const { issuer, clock, store } = await ready();
    const other = await createIssuer({ issuer: ISS, audience: AUD, product: 'acme', keyStore: store, now: clock.now });
    const waiting = await issuer.rotate();
    expect(other.jwks().document.keys.map((key) => key.kid)).not.toContain(waiting.kid);
    await other.reload();
    expect(other.jwks().document.keys.map((key) => key.kid)).toContain(waiting.kid);
  });
});

describe('without a standby (standby: false): the schedule as before standbys', () => {
  it('publishes the next key 47 h in, signs with it from 48 h, and unpublishes the old one 25 h after', async () => {
    const { issuer, clock, store } = await ready({ standby: false });
    const first = signingKid(issuer) as string;
    clock.advance(47 * HOUR - 1);
    expect((await issuer.tick()).published).toEqual([]);
    clock.advance(1);
    const report = await issuer.tick();
    expect(report.published).toHaveLength(1);
    const second = report.published[0] as string;
    expect(kids(issuer)).toEqual([second, first]);
    expect(signingKid(issuer)).toBe(first);
    clock.advance(HOUR);
    expect(signingKid(issuer)).toBe(second);
    const old = issuer.keys().find((key) => key.kid === first);
    expect(old?.state).toBe('retired');
    expect(old?.unpublishAt?.getTime()).toBe(clock.now() + 25 * HOUR * 1000);
    clock.advance(25 * HOUR - 1);
    await issuer.tick();
    expect(kids(issuer)).toContain(first);
    clock.advance(1);
    expect((await issuer.tick()).removed).toEqual([first]);
    expect(kids(issuer)).toEqual([second]);
    expect(store.kids).not.toContain(first);
  });

  it('compromised(kid) of the signing key unpublishes it and publishes a replacement that signs only after the publication lead', async () => {
    const { issuer, store, clock } = await ready({ standby: false });
    const first = signingKid(issuer) as string;
    const report = await issuer.compromised(first);
    expect([report.removed, report.signing]).toEqual([first, null]);
    const replacement = report.next?.kid as string;
    expect(kids(issuer)).toEqual([replacement]);
    expect(store.kids).not.toContain(first);
    expect((await refusal(issuer.sign({ tenant: TENANT, scopes: ['hub:subscribe'] }))).code).toBe('key_not_ready');
    clock.advance(HOUR - 1);
    expect((await refusal(issuer.sign({ tenant: TENANT, scopes: ['hub:subscribe'] }))).code).toBe('key_not_ready');
    clock.advance(1);
    expect(decodeProtectedHeader(await issuer.sign({ tenant: TENANT, scopes: ['hub:subscribe'] })).kid).toBe(replacement);
  });

  it('compromised(kid) of the only key in its first hour publishes a replacement that signs an hour later', async () => {
    const { issuer, clock } = await setUp({ standby: false });
    const first = issuer.keys()[0]?.kid as string;
    clock.advance(HOUR / 2);
    const report = await issuer.compromised(first);
    expect(report.signing).toBeNull();
    expect(report.next?.signsFrom.getTime()).toBe(clock.now() + HOUR * 1000);
    expect((await refusal(issuer.sign({ tenant: TENANT, scopes: ['hub:subscribe'] }))).code).toBe('key_not_ready');
  });

  it('compromised(kid) of the signing key lets a key already waiting take over at its own time, not before', async () => {
    const { issuer, clock } = await ready({ standby: false });
    clock.advance(47 * HOUR);
    await issuer.tick();
    const waiting = issuer.keys().find((key) => key.state === 'published') as { kid: string; signsFrom: Date };
    const report = await issuer.compromised(signingKid(issuer) as string);
    expect(report.next?.kid).toBe(waiting.kid);
    expect(issuer.keys().map((key) => key.kid)).toEqual([waiting.kid]);
    expect((await refusal(issuer.sign({ tenant: TENANT, scopes: ['hub:subscribe'] }))).code).toBe('key_not_ready');
    clock.advance(HOUR);
    expect(decodeProtectedHeader(await issuer.sign({ tenant: TENANT, scopes: ['hub:subscribe'] })).kid).toBe(waiting.kid);
  });

  it('compromised(kid) of a successor never lets the retired key before it sign again', async () => {
    const { issuer, clock } = await ready({ standby: false });
    const first = signingKid(issuer) as string;
    const second = await issuer.rotate();
    clock.advance(HOUR);
    expect(signingKid(issuer)).toBe(second.kid);
    await issuer.compromised(second.kid);
    expect(issuer.keys().find((key) => key.kid === first)?.state).toBe('retired');
    expect((await refusal(issuer.sign({ tenant: TENANT, scopes: ['hub:subscribe'] }))).code).toBe('key_not_ready');
  });

  it('compromised(kid) of a waiting key leaves the signing key at work, and tick() publishes the next key when it is due', async () => {
    const { issuer, clock } = await ready({ standby: false });
    const first = signingKid(issuer);
    const waiting = await issuer.rotate();
    expect((await issuer.compromised(waiting.kid)).signing).toBe(first);
    expect(kids(issuer)).toEqual([first]);
    expect((await issuer.tick()).published).toEqual([]);
    clock.advance(47 * HOUR);
    expect((await issuer.tick()).published).toHaveLength(1);
  });
});

describe('createIssuer and weak keys', () => {
  it('refuses a key store whose keys are under 2048 bits, naming the size (weak_key)', async () => {
    const weak = new InMemoryKeyStore();
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const { n, e } = publicKey.export({ format: 'jwk' }) as { n: string; e: string };
    weak.generate = async () => ({ kty: 'RSA', n, e, kid: 'weak', alg: 'RS256', use: 'sig' });
    const error = await createIssuer({ issuer: ISS, audience: AUD, product: 'acme', keyStore: weak }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(KeyStoreError);
    expect([(error as KeyStoreError).code, (error as KeyStoreError).message]).toEqual(['weak_key', expect.stringContaining('1024-bit')]);
  });
});

describe("createIssuer and the gateway's key rule", () => {
  /** A store whose generate() resolves its key changed by `change`. */
  function storeGiving(change: (jwk: RsaPublicJwk) => RsaPublicJwk): InMemoryKeyStore {
    const store = new InMemoryKeyStore();
    const generate = store.generate.bind(store);
    store.generate = async () => change(await generate());
    return store;
  }

  /** A store that names the keys it makes `prefix` and a number, and signs under those names. */
  function storeNaming(prefix: string): InMemoryKeyStore {
    const store = new InMemoryKeyStore();
    const generate = store.generate.bind(store);
    const sign = store.sign.bind(store);
    const made = new Map<string, string>();
    store.generate = async () => {
      const jwk = await generate();
      const kid = `${prefix}${made.size}`;
      made.set(kid, jwk.kid);
      return { ...jwk, kid };
    };
    store.sign = (kid, data) => sign(made.get(kid) ?? kid, data);
    return store;
  }

  async function refusal(store: InMemoryKeyStore): Promise<KeyStoreError> {
    const error = await createIssuer({ issuer: ISS, audience: AUD, product: 'acme', keyStore: store }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(KeyStoreError);
    return error as KeyStoreError;
  }

  it('refuses a key whose kid is over 256 characters, which a verifier ignores (unusable_key)', async () => {
    const error = await refusal(storeNaming('k'.repeat(256)));
    expect([error.code, error.message]).toEqual(['unusable_key', expect.stringContaining('kid is longer than 256 characters')]);
  });

  it('refuses a key whose modulus is even, which a verifier ignores (unusable_key)', async () => {
    const even = (n: string): string => {
      const bytes = Buffer.from(n, 'base64url');
      bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) & 0xfe;
      return bytes.toString('base64url');
    };
    const error = await refusal(storeGiving((jwk) => ({ ...jwk, n: even(jwk.n) })));
    expect([error.code, error.message]).toEqual(['unusable_key', expect.stringContaining('modulus is even')]);
  });

  it('refuses a key whose exponent is even, which a verifier ignores (unusable_key)', async () => {
    const error = await refusal(storeGiving((jwk) => ({ ...jwk, e: Buffer.from([1, 0, 0]).toString('base64url') })));
    expect([error.code, error.message]).toEqual(['unusable_key', expect.stringContaining('exponent is not an odd number')]);
  });

  it.each([
    ['use "enc"', { use: 'enc' }, 'use "enc"'],
    ['alg "RS512"', { alg: 'RS512' }, 'alg "RS512"'],
  ])('refuses a key the store made with %s rather than relabel it', async (_label, change, found) => {
    const store = storeGiving((jwk) => ({ ...jwk, ...change }) as RsaPublicJwk);
    const error = await createIssuer({ issuer: ISS, audience: AUD, product: 'acme', keyStore: store }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toContain(found);
    expect(await store.loadSchedule()).toEqual([]);
  });

  it('publishes nothing when the key it generated is refused', async () => {
    const store = storeNaming('k'.repeat(256));
    await refusal(store);
    expect(await store.loadSchedule()).toEqual([]);
  });
});

describe('createIssuer and the public keys a store gives', () => {
  /** A store whose generate() resolves more than the public key: WebCrypto's export members, and a private one. */
  class ChattyKeyStore extends InMemoryKeyStore {
    override async generate() {
      const jwk = await super.generate();
      return { ...jwk, key_ops: ['verify'], ext: true, d: 'private-exponent' } as typeof jwk;
    }
  }

  it('publishes and saves only kty, n, e, kid, alg and use, whatever else the store resolves', async () => {
    const clock = fakeClock();
    const store = new ChattyKeyStore();
    const issuer = await createIssuer({ issuer: ISS, audience: AUD, product: 'acme', keyStore: store, now: clock.now });
    const members = ['alg', 'e', 'kid', 'kty', 'n', 'use'];
    expect(issuer.jwks().document.keys).toHaveLength(2);
    for (const key of issuer.jwks().document.keys) expect(Object.keys(key).sort()).toEqual(members);
    for (const record of await store.loadSchedule()) expect(Object.keys(record.publicJwk).sort()).toEqual(members);
    clock.advance(HOUR);
    await expect(issuer.sign({ tenant: TENANT, scopes: ['pay:processPayments'] })).resolves.toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  });
});

describe('createIssuer and a kid the schedule already holds', () => {
  /** A store whose generate() resolves, on call `repeatAt`, the key it gave first (a KMS alias reused, a cache gone wrong). */
  class RepeatingKeyStore extends InMemoryKeyStore {
    #first: Awaited<ReturnType<InMemoryKeyStore['generate']>> | undefined;
    #calls = 0;
    constructor(readonly repeatAt: number) {
      super();
    }
    override async generate() {
      this.#calls += 1;
      const jwk = await super.generate();
      this.#first ??= jwk;
      return this.#calls === this.repeatAt ? this.#first : jwk;
    }
  }

  it('refuses at start-up a standby whose kid is the first key’s (key_exists), naming the kid', async () => {
    const store = new RepeatingKeyStore(2);
    const error = await createIssuer({ issuer: ISS, audience: AUD, product: 'acme', keyStore: store }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(KeyStoreError);
    const [kid] = store.kids;
    expect([(error as KeyStoreError).code, (error as KeyStoreError).message]).toEqual(['key_exists', expect.stringContaining(`"${kid}"`)]);
  });

  it('refuses a saved schedule that holds one kid twice (invalid_schedule), naming the kid: nothing is published', async () => {
    const store = new InMemoryKeyStore();
    const first = await createIssuer({ issuer: ISS, audience: AUD, product: 'acme', keyStore: store });
    const [record] = await store.loadSchedule();
    await store.saveSchedule([...(await store.loadSchedule()), { ...(record as KeyRecord), publishedAt: 0, signsFrom: 0 }]);
    const error = await createIssuer({ issuer: ISS, audience: AUD, product: 'acme', keyStore: store }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(KeyStoreError);
    expect([(error as KeyStoreError).code, (error as KeyStoreError).message]).toEqual([
      'invalid_schedule',
      expect.stringContaining(`"${record?.kid}"`),
    ]);
    await expect(first.tick()).rejects.toMatchObject({ code: 'invalid_schedule' });
    expect(new Set(kids(first)).size).toBe(kids(first).length);
  });

  it('refuses a next key whose kid is already published: the JWKS never lists a kid twice and the signing key stays', async () => {
    const clock = fakeClock();
    const issuer = await createIssuer({ issuer: ISS, audience: AUD, product: 'acme', keyStore: new RepeatingKeyStore(3), now: clock.now });
    clock.advance(48 * HOUR); // the first key has signed for 47 h: its successor is due
    const signing = signingKid(issuer);
    await expect(issuer.tick()).rejects.toMatchObject({ name: 'KeyStoreError', code: 'key_exists' });
    expect(new Set(kids(issuer)).size).toBe(kids(issuer).length);
    expect(decodeProtectedHeader(await issuer.sign({ tenant: TENANT, scopes: ['pay:processPayments'] })).kid).toBe(signing);
  });
});

describe('a key generated after start-up', () => {
  /** A store that, once `swap` is set, signs each new key's data with another key (a KMS key mapped wrongly). */
  class SwappingKeyStore extends InMemoryKeyStore {
    swap = false;
    readonly #signer = new Map<string, string>();
    override async generate() {
      const jwk = await super.generate();
      if (this.swap) this.#signer.set(jwk.kid, (await super.generate()).kid);
      return jwk;
    }
    override sign(kid: string, data: Uint8Array) {
      return super.sign(this.#signer.get(kid) ?? kid, data);
    }
  }

  it('is probed as the start-up keys are: one that does not match its published half is refused (key_mismatch), never published', async () => {
    const clock = fakeClock();
    const store = new SwappingKeyStore();
    const issuer = await createIssuer({ issuer: ISS, audience: AUD, product: 'acme', keyStore: store, now: clock.now });
    const before = kids(issuer);
    store.swap = true;
    clock.advance(48 * HOUR); // the next key is due
    await expect(issuer.tick()).rejects.toMatchObject({ name: 'KeyStoreError', code: 'key_mismatch' });
    expect(kids(issuer)).toEqual(before);
    expect((await store.loadSchedule()).map((record) => record.kid).sort()).toEqual([...before].sort());
  });

  it("says, when a new key does not match, that nothing was published and that the store's sign() must use the key generate() made", async () => {
    const clock = fakeClock();
    const store = new SwappingKeyStore();
    const issuer = await createIssuer({ issuer: ISS, audience: AUD, product: 'acme', keyStore: store, now: clock.now });
    store.swap = true;
    clock.advance(48 * HOUR);
    const error = (await issuer.tick().catch((caught: unknown) => caught)) as Error;
    expect(error).toMatchObject({ code: 'key_mismatch' });
    expect(error.message).toContain('nothing was published');
    expect(error.message).toContain('generate()');
  });
});

describe('createIssuer options', () => {
  it('accepts a loopback http: issuer and audience, as the JWKS rule does (tests, examples)', async () => {
    const issuer = await createIssuer({
      issuer: 'http://127.0.0.1:8080',
      audience: ['http://localhost:3000', AUD],
      product: 'acme',
      keyStore: new InMemoryKeyStore(),
    });
    expect([issuer.issuer, issuer.audience]).toEqual(['http://127.0.0.1:8080', ['http://localhost:3000', AUD]]);
  });

  const store = new InMemoryKeyStore();
  const base = { issuer: ISS, audience: AUD, product: 'acme', keyStore: store };
  it.each([
    [{ issuer: '' }, 'issuer must be a non-empty string'],
    [{ audience: [] }, 'audience must be a non-empty string'],
    [{ product: 'ac me' }, 'product must be a name'],
    [{ product: 'a'.repeat(257) }, 'product must be a name'],
    [{ tenants: ['t-1', 't/2'] }, 'tenants must be a name'],
    [{ keyStore: { generate() {} } }, 'keyStore.sign must be a function'],
    [{ rotation: { publishLead: 7200, interval: 3600 } }, 'rotation.publishLead must be shorter than rotation.interval'],
    [{ rotation: { interval: Number.NaN } }, 'rotation.interval must be a number of seconds'],
    [{ rotation: { every: 3600 } }, 'unknown option "every"'],
    [{ maxLifetime: 8 * 86_400 }, 'maxLifetime must be a number of seconds above 0 and at most 604800'],
    [{ lifetime: 90_000 }, 'lifetime must be a whole number of seconds above 0 and at most 86400, got 90000'],
    [{ lifetime: 1.5 }, 'lifetime must be a whole number of seconds above 0 and at most 86400, got 1.5'],
    [{ jwksMaxAge: 7200 }, 'jwksMaxAge must be a number of seconds from 0 to 3600'],
    [{ emitExp: 'yes' }, 'emitExp must be a boolean'],
    [{ rotation: 'daily' }, 'rotation must be an object, got "daily"'],
    [{ now: 1_700_000_000_000 }, 'now must be a function, got 1700000000000'],
    [{ standby: 'no' }, 'standby must be a boolean'],
    [{ algorithm: 'RS512' }, 'unknown option "algorithm"'],
    [{ issuer: 'acme' }, 'issuer must be an https: URI'],
    [{ issuer: 'http://auth.acme.example' }, 'issuer must be an https: URI'],
    [{ issuer: 'https://user:pass@auth.acme.example' }, 'issuer must be an https: URI'],
    [{ audience: 'payments' }, 'audience must be an https: URI'],
    [{ audience: 'http://payments.example' }, 'audience must be an https: URI'],
    [{ audience: [AUD, 'payments'] }, 'audience[1] must be an https: URI'],
  ])('throws a TypeError for %j', async (override, message) => {
    await expect(createIssuer({ ...base, ...override } as IssuerOptions)).rejects.toThrow(TypeError);
    await expect(createIssuer({ ...base, ...override } as IssuerOptions)).rejects.toThrow(message);
  });
});
