import { describe, expect, test } from 'vitest';
import { type CacheAdmission, IssuerRegistry, type VerifierEvent, type VerifierOptions, createVerifier } from '../../src/index.js';
import { encodeSegment } from '../../src/testing/index.js';
import { AUDIENCE, seconds, useFixture } from '../support/fixture.js';
import { verifyUntilCached } from '../support/result-cache.js';

const fx = useFixture();
const base = (): VerifierOptions => ({
  registry: new IssuerRegistry([fx.issuer.entry]),
  audience: AUDIENCE,
  now: fx.clock,
});

describe('createVerifier options', () => {
  test('accepts the registry as a list of entries', async () => {
    const verifier = createVerifier({ ...base(), registry: [fx.issuer.entry] });
    await expect(verifier.verify(await fx.issuer.token())).resolves.toBeDefined();
    expect(verifier.registry.issuers).toEqual([fx.issuer.issuer]);
  });

  test('exposes its audiences and token size limit', () => {
    const verifier = createVerifier({ ...base(), audience: ['https://a.test', 'https://b.test'], maxTokenBytes: 4096 });
    expect(verifier.audiences).toEqual(['https://a.test', 'https://b.test']);
    expect(verifier.maxTokenBytes).toBe(4096);
  });

  test('refuses an unknown option (a misspelt option is a silent misconfiguration)', () => {
    expect(() => createVerifier({ ...base(), clockTolerence: 5 } as VerifierOptions)).toThrow(
      'createVerifier: unknown option "clockTolerence"',
    );
  });

  test('refuses options that are not an object, naming the value found', () => {
    expect(() => createVerifier(null as unknown as VerifierOptions)).toThrow(/^createVerifier: options must be an object, got null$/);
  });

  test('refuses a missing audience: the check cannot be skipped', () => {
    expect(() => createVerifier({ registry: base().registry } as VerifierOptions)).toThrow(/audience must be/);
  });

  test.each<[keyof VerifierOptions, unknown]>([
    ['clockTolerance', -1],
    ['clockTolerance', Number.NaN],
    ['clockTolerance', '30'],
    ['maxTokenBytes', 100],
    ['maxTokenBytes', 8192.5],
    ['maxTokenLifetime', 0],
    ['maxTokenLifetime', Number.POSITIVE_INFINITY],
    ['jwksMaxAge', -5],
    ['jwksTimeout', 0],
    ['jwksMaxBytes', 10],
    ['jwksMaxRedirects', 1.5],
    ['jwksStaleWindow', -1],
    ['jwksCooldown', Number.NaN],
    ['jwksBackoff', -1],
    ['jwksBackoffMax', '60'],
    ['cacheMaxEntries', 0],
    ['cacheMaxBytes', 12],
    ['cache', 'yes'],
    ['now', 5],
    ['fetch', 'fetch'],
    ['onEvent', {}],
    ['crypto', 'openssl'],
    ['cacheAdmission', 'always'],
    ['cacheAdmission', 2],
  ])('refuses %s = %j, naming the option', (name, value) => {
    expect(() => createVerifier({ ...base(), [name]: value })).toThrow(new RegExp(`createVerifier: ${name} must be`));
  });

  test.each<[keyof VerifierOptions, unknown, string]>([
    ['audience', 5, 'got 5'],
    ['audience', ['https://a.test', ''], 'audience[1] is ""'],
    ['algorithms', 'RS256', 'got "RS256"'],
    ['algorithms', ['RS256', 'ES256'], 'algorithms[1] is "ES256"'],
    ['algorithms', [], 'got an empty array'],
    ['crypto', 'openssl', 'got "openssl"'],
    ['cacheAdmission', 'always', 'got "always"'],
  ])('refuses %s = %j, naming the value found', (name, value, found) => {
    expect(() => createVerifier({ ...base(), [name]: value })).toThrow(found);
  });

  test.each<[keyof VerifierOptions, unknown, string]>([
    ['clockTolerance', 30_000, 'clockTolerance must be a number of seconds from 0 to 600, got 30000'],
    ['maxTokenLifetime', 86_400_000, 'maxTokenLifetime must be a number of seconds above 0 and at most 604800'],
    ['jwksMaxAge', 600_000, 'jwksMaxAge must be a number of seconds from 0 to 86400'],
    ['jwksMaxAgeBounds', { max: 600_000 }, 'jwksMaxAgeBounds.max must be a number of seconds from 0 to 86400'],
    ['keyPublishLead', -1, 'keyPublishLead must be a number of seconds'],
    ['keyMaxAge', 60, 'keyMaxAge must be a number of seconds'],
    ['jwksTimeout', 5000, 'jwksTimeout must be a number of seconds above 0 and at most 120'],
    ['jwksStaleWindow', -1, 'jwksStaleWindow must be a number of seconds'],
    ['jwksCooldown', -1, 'jwksCooldown must be a number of seconds'],
    ['jwksBackoff', -1, 'jwksBackoff must be a number of seconds'],
    ['jwksBackoffMax', -1, 'jwksBackoffMax must be a number of seconds'],
    ['maxTokenBytes', 100, 'maxTokenBytes must be a whole number of bytes from 256 to 1048576'],
    ['jwksMaxBytes', 10, 'jwksMaxBytes must be a whole number of bytes'],
    ['cacheMaxBytes', 12, 'cacheMaxBytes must be a whole number of bytes'],
    ['cacheMaxEntries', 0, 'cacheMaxEntries must be a whole number of results'],
    ['jwksMaxRedirects', 11, 'jwksMaxRedirects must be a whole number of redirects'],
  ])('refuses %s = %j, naming its unit: milliseconds given for seconds are told apart', (name, value, message) => {
    expect(() => createVerifier({ ...base(), [name]: value })).toThrow(message);
  });

  test.each<[keyof VerifierOptions, number, number]>([
    ['clockTolerance', 600, 600.001],
    ['maxTokenBytes', 256, 255],
    ['maxTokenBytes', 1_048_576, 1_048_577],
    ['maxTokenLifetime', 604_800, 604_801],
    ['jwksMaxBytes', 1024, 1023],
    ['jwksMaxBytes', 16 * 1024 * 1024, 16 * 1024 * 1024 + 1],
    ['jwksMaxRedirects', 10, 11],
    ['jwksTimeout', 120, 120.001],
  ])('takes %s = %d, its bound, and refuses %d, one past it, naming the value found', (name, bound, past) => {
    expect(() => createVerifier({ ...base(), [name]: bound })).not.toThrow();
    expect(() => createVerifier({ ...base(), [name]: past })).toThrow(`createVerifier: ${name} must be`);
    expect(() => createVerifier({ ...base(), [name]: past })).toThrow(`got ${past}`);
  });

  test.each<[unknown, string]>([
    ['https://payments.test\n', 'got "https://payments.test\\u000a"'],
    [['https://a.test', ' https://b.test'], 'audience[1] is " https://b.test"'],
  ])(
    'refuses the audience %j, with surrounding white space that no token could match (every request would be refused)',
    (audience, found) => {
      expect(() => createVerifier({ ...base(), audience: audience as string })).toThrow(found);
    },
  );

  test('refuses a jwksBackoff above jwksBackoffMax, naming both values', () => {
    expect(() => createVerifier({ ...base(), jwksBackoff: 10, jwksBackoffMax: 5 })).toThrow(
      'createVerifier: jwksBackoff must not exceed jwksBackoffMax, got 10 > 5',
    );
  });

  test("refuses a jwksBackoff above jwksBackoffMax's default, saying it is the default", () => {
    expect(() => createVerifier({ ...base(), jwksBackoff: 120 })).toThrow('jwksBackoffMax (its default), got 120 > 60');
  });

  test('takes a jwksBackoffMax below the default jwksBackoff, which gives way to it', () => {
    expect(() => createVerifier({ ...base(), jwksBackoffMax: 0.5 })).not.toThrow();
  });

  test.each<[string, unknown, string]>([
    ['not an object', 'snapshot', 'keys must be a snapshot'],
    ['another version', { version: 2, issuers: [] }, 'keys.version must be 1'],
    ['issuers not an array', { version: 1, issuers: {} }, 'keys.issuers must be an array'],
    ['a bad fetchedAt', { version: 1, issuers: [{ issuer: 'x', jwksUri: 'y', fetchedAt: -1, keys: [] }] }, 'keys.issuers[0].fetchedAt'],
  ])('refuses a key snapshot that is %s, naming the field', (_name, keys, message) => {
    expect(() => createVerifier({ ...base(), keys: keys as never })).toThrow(message);
  });

  test.each<[string, unknown, string]>([
    ['not an object', 'snapshot', 'got "snapshot"'],
    ['another version', { version: 2, issuers: [] }, 'keys.version must be 1, got 2'],
    ['issuers not an array', { version: 1, issuers: 'all' }, 'got "all"'],
    ['a bad fetchedAt', { version: 1, issuers: [{ issuer: 'x', jwksUri: 'y', fetchedAt: -1, keys: [] }] }, 'got -1'],
    ['an issuer that is not a string', { version: 1, issuers: [{ issuer: 7, jwksUri: 'y', fetchedAt: 0, keys: [] }] }, 'got 7'],
  ])('refuses a key snapshot that is %s, naming the value found', (_name, keys, found) => {
    expect(() => createVerifier({ ...base(), keys: keys as never })).toThrow(found);
  });
});

describe('the result cache', () => {
  const recording = () => {
    const events: VerifierEvent[] = [];
    return { events, onEvent: (event: VerifierEvent) => events.push(event) };
  };
  const cacheOutcomes = (events: VerifierEvent[]) => events.flatMap((event) => (event.type === 'cache' ? [event.outcome] : []));

  test('answers a token from the cache once it has been verified twice, with the frozen context of the second', async () => {
    const { events, onEvent } = recording();
    const verifier = createVerifier({ ...base(), onEvent });
    const token = await fx.issuer.token();
    const first = await verifier.verify(token);
    const second = await verifier.verify(token);
    const third = await verifier.verify(token);
    expect(second).not.toBe(first);
    expect(third).toBe(second);
    expect(Object.isFrozen(third)).toBe(true);
    expect(cacheOutcomes(events)).toEqual(['miss', 'miss', 'hit']);
  });

  test("cacheAdmission: 'first-use' answers from the cache from the second verification", async () => {
    const { events, onEvent } = recording();
    const verifier = createVerifier({ ...base(), onEvent, cacheAdmission: 'first-use' });
    const token = await fx.issuer.token();
    const first = await verifier.verify(token);
    await expect(verifier.verify(token)).resolves.toBe(first);
    expect(cacheOutcomes(events)).toEqual(['miss', 'hit']);
  });

  test.each<[CacheAdmission, string, string[]]>([
    ['second-use', 'in place (a client signing a token for every call costs the cache nothing)', ['hit', 'hit']],
    ['first-use', 'pushed out', ['miss', 'miss']],
  ])('with cacheAdmission %j, tokens verified once leave the cached results %s', async (cacheAdmission, _effect, outcomes) => {
    const { events, onEvent } = recording();
    const verifier = createVerifier({ ...base(), onEvent, cacheMaxEntries: 2, cacheAdmission });
    const kept = await Promise.all(['a', 'b'].map((name) => fx.issuer.token({ tenant_name: name })));
    for (const token of [...kept, ...kept]) await verifier.verify(token);
    for (let n = 0; n < 20; n += 1) await verifier.verify(await fx.issuer.token({ jti: `once-${n}` }));
    events.length = 0;
    for (const token of kept) await verifier.verify(token);
    expect(cacheOutcomes(events)).toEqual(outcomes);
  });

  test('only a verification that succeeds counts as a use: a token refused while not yet valid is cached from its second accepted use', async () => {
    const { events, onEvent } = recording();
    const verifier = createVerifier({ ...base(), onEvent });
    const token = await fx.issuer.token({ nbf: seconds(fx.clock) + 120 });
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'token_not_yet_valid' });
    fx.clock.advance(120);
    await verifier.verify(token);
    await verifier.verify(token);
    await verifier.verify(token);
    expect(cacheOutcomes(events)).toEqual(['miss', 'miss', 'miss', 'hit']);
  });

  test('is keyed on the exact token: another token is a miss', async () => {
    const { events, onEvent } = recording();
    const verifier = createVerifier({ ...base(), onEvent });
    await verifier.verify(await fx.issuer.token());
    await verifier.verify(await fx.issuer.token({ tenant_name: 'Other' }));
    expect(cacheOutcomes(events)).toEqual(['miss', 'miss']);
  });

  test("a cached token's header and signature under another payload are refused (attack: a payload swapped in under a cached signature)", async () => {
    const verifier = createVerifier({ ...base() });
    const token = await fx.issuer.token();
    await verifyUntilCached(verifier, token);
    const [header, , signature] = token.split('.');
    const forged = `${header}.${encodeSegment(fx.issuer.claims({ tenant_name: 'Elsewhere' }))}.${signature}`;
    await expect(verifier.verify(forged)).rejects.toMatchObject({ code: 'invalid_signature' });
  });

  test('never caches a failure', async () => {
    const { events, onEvent } = recording();
    const verifier = createVerifier({ ...base(), onEvent });
    const token = await fx.issuer.token({ aud: 'https://elsewhere.test' });
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'audience_mismatch' });
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'audience_mismatch' });
    expect(cacheOutcomes(events)).toEqual(['miss', 'miss']);
  });

  test('is bounded by cacheMaxEntries (least recently used goes first)', async () => {
    const { events, onEvent } = recording();
    const verifier = createVerifier({ ...base(), onEvent, cacheMaxEntries: 2, cacheAdmission: 'first-use' });
    const tokens = await Promise.all(['a', 'b', 'c'].map((name) => fx.issuer.token({ tenant_name: name })));
    for (const token of tokens) await verifier.verify(token);
    await verifier.verify(tokens[2]!);
    await verifier.verify(tokens[0]!);
    expect(cacheOutcomes(events)).toEqual(['miss', 'miss', 'miss', 'hit', 'miss']);
  });

  test('is bounded by cacheMaxBytes', async () => {
    const { events, onEvent } = recording();
    const first = await fx.issuer.token({ tenant_name: 'a' });
    const verifier = createVerifier({
      ...base(),
      onEvent,
      cacheMaxBytes: Math.max(1024, first.length + 10),
      cacheAdmission: 'first-use',
    });
    await verifier.verify(first);
    await verifier.verify(await fx.issuer.token({ tenant_name: 'b' }));
    await verifier.verify(first);
    expect(cacheOutcomes(events)).toEqual(['miss', 'miss', 'miss']);
  });

  test('cache: false verifies every time in full', async () => {
    const { events, onEvent } = recording();
    const verifier = createVerifier({ ...base(), onEvent, cache: false });
    const token = await fx.issuer.token();
    const first = await verifier.verify(token);
    const second = await verifier.verify(token);
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
    expect(cacheOutcomes(events)).toEqual([]);
  });
});
