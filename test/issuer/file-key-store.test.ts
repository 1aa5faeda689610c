import { generateKeyPairSync } from 'node:crypto';
import { chmod, copyFile, mkdtemp, readFile, readdir, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileKeyStore, type IssuerOptions, KeyStoreError, createIssuer, generateKeyFile } from '../../src/issuer/index.js';
import { fakeClock } from '../support/jwks-clock.js';

const ISS = 'https://auth.acme.example';
const AUD = 'https://payments.example';
let directory: string;

beforeEach(async () => {
  directory = join(await mkdtemp(join(tmpdir(), 'paygate-keys-')), 'keys');
});

afterEach(async () => {
  await rm(join(directory, '..'), { recursive: true, force: true });
});

const mode = async (file: string) => (await stat(file)).mode & 0o777;

describe('FileKeyStore', () => {
  it.each([
    ['pkcs8', '.pem'],
    ['jwk', '.jwk.json'],
  ] as const)('writes %s private keys with mode 0600 in a 0700 directory', async (format, suffix) => {
    const store = new FileKeyStore({ directory, format });
    const jwk = await store.generate();
    expect(await mode(join(directory, `${jwk.kid}${suffix}`))).toBe(0o600);
    expect(await mode(directory)).toBe(0o700);
    const signature = await store.sign(jwk.kid, new TextEncoder().encode('input'));
    expect(signature.byteLength).toBe(256);
  });

  it('keeps the schedule across processes: a new issuer over the directory signs with the same key', async () => {
    const clock = fakeClock();
    const options = { issuer: ISS, audience: AUD, product: 'acme', now: clock.now };
    const first = await createIssuer({ ...options, keyStore: new FileKeyStore({ directory }) });
    clock.advance(3600);
    const kid = decodeProtectedHeader(await first.sign({ tenant: 'ern:acme/tenants/t-1', scopes: ['hub:subscribe'] })).kid;
    const second = await createIssuer({ ...options, keyStore: new FileKeyStore({ directory }) });
    expect(decodeProtectedHeader(await second.sign({ tenant: 'ern:acme/tenants/t-1', scopes: ['hub:subscribe'] })).kid).toBe(kid);
    expect(second.jwks().document).toEqual(first.jwks().document);
  });

  it('refuses to sign with a key file that others may read', async () => {
    const store = new FileKeyStore({ directory });
    const { kid } = await store.generate();
    await chmod(join(directory, `${kid}.pem`), 0o644);
    const error = await new FileKeyStore({ directory }).sign(kid, new Uint8Array(1)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(KeyStoreError);
    expect((error as KeyStoreError).code).toBe('insecure_key_file');
    expect((error as KeyStoreError).message).toContain('mode 644');
  });

  it('refuses to sign with a key file under 2048 bits, naming its size (weak_key)', async () => {
    await new FileKeyStore({ directory }).loadSchedule();
    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    await writeFile(join(directory, 'weak.pem'), weak, { mode: 0o600 });
    const error = await new FileKeyStore({ directory }).sign('weak', new Uint8Array(1)).catch((caught: unknown) => caught);
    expect((error as KeyStoreError).code).toBe('weak_key');
    expect((error as KeyStoreError).message).toContain('1024-bit');
  });

  it.each([0o777, 0o770, 0o720])(
    'refuses a key directory that others may write (mode %o: they could plant or swap a key)',
    async (bits) => {
      await new FileKeyStore({ directory }).loadSchedule();
      await chmod(directory, bits);
      const error = await createIssuer({
        issuer: ISS,
        audience: AUD,
        product: 'acme',
        keyStore: new FileKeyStore({ directory }),
      }).catch((caught: unknown) => caught);
      expect((error as KeyStoreError).code).toBe('insecure_directory');
      expect((error as KeyStoreError).message).toContain(`mode ${bits.toString(8)}`);
      expect(await readdir(directory)).toEqual([]);
    },
  );

  it('accepts a key directory that others may read but not write', async () => {
    await new FileKeyStore({ directory }).loadSchedule();
    await chmod(directory, 0o755);
    await expect(
      createIssuer({ issuer: ISS, audience: AUD, product: 'acme', keyStore: new FileKeyStore({ directory }) }),
    ).resolves.toBeDefined();
  });

  it('destroys a key for good', async () => {
    const store = new FileKeyStore({ directory });
    const { kid } = await store.generate();
    await store.destroy(kid);
    expect(await readdir(directory)).toEqual(['schedule.json']);
    await expect(store.sign(kid, new Uint8Array(1))).rejects.toMatchObject({ code: 'key_not_found' });
  });

  it.each([
    ['not JSON', '{'],
    ['no keys array', '{"schedule":[]}'],
    ['a record without a public key', '{"keys":[{"kid":"k","publishedAt":0,"signsFrom":0}]}'],
  ])('refuses a damaged schedule: %s', async (_name, text) => {
    const store = new FileKeyStore({ directory });
    await store.saveSchedule([]);
    await writeFile(join(directory, 'schedule.json'), text);
    await expect(store.loadSchedule()).rejects.toMatchObject({ code: 'invalid_schedule' });
  });

  it.each([
    ['an empty file', '', 'it is empty (0 bytes), not JSON'],
    ['not JSON', '{', 'it is not JSON'],
    [
      'a record without a time',
      `{"keys":[{"kid":"k","publicJwk":{"kty":"RSA","n":"n","e":"AQAB","kid":"k","alg":"RS256","use":"sig"}}]}`,
      'entry 0.publishedAt is not a time',
    ],
  ])('names the schedule file, the fault and the next step for %s', async (_name, text, fault) => {
    const store = new FileKeyStore({ directory });
    await store.saveSchedule([]);
    await writeFile(join(directory, 'schedule.json'), text);
    const error = await store.loadSchedule().catch((caught: unknown) => caught);
    expect((error as KeyStoreError).code).toBe('invalid_schedule');
    expect((error as KeyStoreError).message).toContain(`"${join(directory, 'schedule.json')}": ${fault}`);
    expect((error as KeyStoreError).message).toContain('restore schedule.json from a backup');
  });

  it('refuses a schedule entry whose standby mark is not true, naming the value found and the one expected', async () => {
    const store = new FileKeyStore({ directory });
    const publicJwk = await store.generate();
    const record = { kid: publicJwk.kid, publicJwk, publishedAt: 0, signsFrom: 0, standby: 'yes' };
    await writeFile(join(directory, 'schedule.json'), JSON.stringify({ keys: [record] }));
    const error = await store.loadSchedule().catch((caught: unknown) => caught);
    expect((error as KeyStoreError).code).toBe('invalid_schedule');
    expect((error as KeyStoreError).message).toContain('entry 0.standby is "yes"; it must be true (a standby) or absent');
  });

  it('saves the schedule whole, as JSON, without private members', async () => {
    const store = new FileKeyStore({ directory });
    await createIssuer({ issuer: ISS, audience: AUD, product: 'acme', keyStore: store });
    const saved = JSON.parse(await readFile(join(directory, 'schedule.json'), 'utf8')) as {
      keys: { publicJwk: object; standby?: boolean }[];
    };
    expect(saved.keys.map((record) => record.standby)).toEqual([undefined, true]);
    for (const record of saved.keys) {
      expect(Object.keys(record).sort()).toEqual(expect.arrayContaining(['kid', 'publicJwk', 'publishedAt', 'signsFrom']));
      expect(Object.keys(record.publicJwk).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
    }
  });

  it.each([
    [{ directory: '' }, 'directory'],
    [{ directory: 'x', format: 'pem' }, 'format'],
    [{ directory: 'x', modulusLength: 1024 }, 'modulusLength'],
    [{ directory: 'x', sweepAfter: -1 }, 'sweepAfter'],
  ])('throws a TypeError for %j', (options, name) => {
    expect(() => new FileKeyStore(options as never)).toThrow(TypeError);
    expect(() => new FileKeyStore(options as never)).toThrow(name);
  });

  it('names the format found when refusing one, as generateKeyFile does', async () => {
    const message = 'format must be "pkcs8" or "jwk" (a PKCS#8 PEM file or a JWK file), got "pem"';
    expect(() => new FileKeyStore({ directory: 'x', format: 'pem' as never })).toThrow(`FileKeyStore: ${message}`);
    await expect(generateKeyFile('x', { format: 'pem' as never })).rejects.toThrow(`generateKeyFile: ${message}`);
  });
});

describe('FileKeyStore after a crash', () => {
  const options = (store: FileKeyStore, clock = fakeClock()): IssuerOptions => ({
    issuer: ISS,
    audience: AUD,
    product: 'acme',
    keyStore: store,
    now: clock.now,
  });
  const refusal = async (promise: Promise<unknown>): Promise<KeyStoreError> => {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(KeyStoreError);
    return error as KeyStoreError;
  };

  it('refuses to start when schedule.json is missing but key files remain, naming both', async () => {
    const issuer = await createIssuer(options(new FileKeyStore({ directory })));
    const files = issuer.keys().map((key) => `${key.kid}.pem`);
    await unlink(join(directory, 'schedule.json'));
    const error = await refusal(createIssuer(options(new FileKeyStore({ directory }))));
    expect(error.code).toBe('schedule_missing');
    expect(error.message).toContain(join(directory, 'schedule.json'));
    for (const file of files) expect(error.message).toContain(file);
    expect((await readdir(directory)).sort()).toEqual(files.sort());
  });

  it('starts afresh on a directory that holds no key', async () => {
    const issuer = await createIssuer(options(new FileKeyStore({ directory })));
    expect(issuer.keys().map((key) => key.state)).toEqual(['published', 'standby']);
  });

  it('writes the schedule before the first key file, so that a crash after the key leaves a sweepable key, not a lost schedule', async () => {
    const { kid } = await new FileKeyStore({ directory }).generate();
    expect(JSON.parse(await readFile(join(directory, 'schedule.json'), 'utf8'))).toEqual({ keys: [] });
    const issuer = await createIssuer(options(new FileKeyStore({ directory, sweepAfter: 0 })));
    expect(issuer.startReport.swept).toEqual({ compromised: [], unnamed: [kid] });
  });

  it('sweeps at start-up the key files and temporary files no schedule entry names, and reports the keys', async () => {
    await createIssuer(options(new FileKeyStore({ directory })));
    const orphan = await new FileKeyStore({ directory }).generate();
    const temporary = `${orphan.kid}.pem.${crypto.randomUUID()}.tmp`;
    await copyFile(join(directory, `${orphan.kid}.pem`), join(directory, temporary));
    await writeFile(join(directory, `schedule.json.${crypto.randomUUID()}.tmp`), '{');
    const issuer = await createIssuer(options(new FileKeyStore({ directory, sweepAfter: 0 })));
    expect(issuer.startReport.swept).toEqual({ compromised: [], unnamed: [orphan.kid] });
    expect((await readdir(directory)).sort()).toEqual([...issuer.keys().map((key) => `${key.kid}.pem`), 'schedule.json'].sort());
  });

  it('sweeps a temporary file left beside a key the schedule names, and keeps the key', async () => {
    const issuer = await createIssuer(options(new FileKeyStore({ directory })));
    const kid = issuer.keys()[0]?.kid as string;
    await copyFile(join(directory, `${kid}.pem`), join(directory, `${kid}.pem.${crypto.randomUUID()}.tmp`));
    const restarted = await createIssuer(options(new FileKeyStore({ directory, sweepAfter: 0 })));
    expect(restarted.startReport.swept.unnamed).toEqual([]);
    expect((await readdir(directory)).sort()).toEqual([...issuer.keys().map((key) => `${key.kid}.pem`), 'schedule.json'].sort());
  });

  it('leaves an unnamed key file younger than sweepAfter (another instance may be about to save it), and sweeps it once older', async () => {
    await createIssuer(options(new FileKeyStore({ directory })));
    const orphan = await new FileKeyStore({ directory }).generate();
    const issuer = await createIssuer(options(new FileKeyStore({ directory, sweepAfter: 60 })));
    expect(issuer.startReport.swept.unnamed).toEqual([]);
    const old = new Date(Date.now() - 61_000);
    await utimes(join(directory, `${orphan.kid}.pem`), old, old);
    expect((await issuer.tick()).swept.unnamed).toEqual([orphan.kid]);
  });

  it('two instances starting at once on an empty directory both start, and the losing key is swept once it is old enough', async () => {
    await Promise.all([createIssuer(options(new FileKeyStore({ directory }))), createIssuer(options(new FileKeyStore({ directory })))]);
    const files = (await readdir(directory)).filter((name) => name.endsWith('.pem'));
    const saved = JSON.parse(await readFile(join(directory, 'schedule.json'), 'utf8')) as { keys: { kid: string }[] };
    const losers = files.map((name) => name.slice(0, -'.pem'.length)).filter((kid) => !saved.keys.some((record) => record.kid === kid));
    const old = new Date(Date.now() - 61_000);
    for (const name of files) await utimes(join(directory, name), old, old);
    const third = await createIssuer(options(new FileKeyStore({ directory })));
    expect([...third.startReport.swept.unnamed].sort()).toEqual(losers.sort());
    expect((await readdir(directory)).filter((name) => name.endsWith('.pem'))).toHaveLength(files.length - losers.length);
  });

  it('destroys first, at start-up, a compromised key whose destruction a crash interrupted', async () => {
    const clock = fakeClock();
    const store = new FileKeyStore({ directory });
    const issuer = await createIssuer(options(store, clock));
    clock.advance(3600);
    const kid = issuer.keys()[0]?.kid as string;
    // The crash: destroy() never runs after the schedule marked the key.
    store.destroy = async () => {
      throw new Error('killed');
    };
    await expect(issuer.compromised(kid)).rejects.toThrow('killed');
    expect(await readdir(directory)).toContain(`${kid}.pem`);
    const restarted = await createIssuer(options(new FileKeyStore({ directory, sweepAfter: 0 }), clock));
    expect(restarted.startReport.swept).toEqual({ compromised: [kid], unnamed: [] });
    expect(await readdir(directory)).not.toContain(`${kid}.pem`);
    expect(restarted.jwks().document.keys.map((key) => key.kid)).not.toContain(kid);
    const saved = JSON.parse(await readFile(join(directory, 'schedule.json'), 'utf8')) as { keys: { kid: string }[] };
    expect(saved.keys.map((record) => record.kid)).not.toContain(kid);
  });

  it('a crash after a compromise moved signing to the standby, before a new standby was saved: the restart signs with the standby at once and publishes a new one', async () => {
    const clock = fakeClock();
    const store = new FileKeyStore({ directory });
    const issuer = await createIssuer(options(store, clock));
    clock.advance(3600);
    const [signing, standby] = issuer.keys().map((key) => key.kid) as [string, string];
    // The crash: the new standby is never generated, after the schedule moved signing to the standby.
    store.generate = async () => {
      throw new Error('killed');
    };
    await expect(issuer.compromised(signing)).rejects.toThrow('killed');
    const restarted = await createIssuer(options(new FileKeyStore({ directory, sweepAfter: 0 }), clock));
    expect(restarted.startReport.swept).toEqual({ compromised: [signing], unnamed: [] });
    expect(restarted.startReport.published).toHaveLength(1);
    expect(decodeProtectedHeader(await restarted.sign({ tenant: 'ern:acme/tenants/t-1', scopes: ['hub:subscribe'] })).kid).toBe(standby);
    expect(restarted.keys().map((key) => [key.kid, key.state])).toEqual([
      [standby, 'signing'],
      [restarted.startReport.published[0], 'standby'],
    ]);
    expect(await readdir(directory)).not.toContain(`${signing}.pem`);
  });

  it('refuses at createIssuer a damaged key file, naming it', async () => {
    const issuer = await createIssuer(options(new FileKeyStore({ directory })));
    const file = join(directory, `${issuer.keys()[0]?.kid}.pem`);
    const text = await readFile(file, 'utf8');
    await chmod(file, 0o600);
    await writeFile(file, text.slice(0, text.length / 2));
    const error = await refusal(createIssuer(options(new FileKeyStore({ directory }))));
    expect(error.code).toBe('invalid_key_file');
    expect(error.message).toContain(file);
  });

  it.each([
    ['a truncated', (text: string) => text.slice(0, text.length / 2)],
    ['an emptied', () => ''],
  ])('advises restoring %s key file the schedule names, never generating a new key (invalid_key_file)', async (_how, damage) => {
    const issuer = await createIssuer(options(new FileKeyStore({ directory })));
    const file = join(directory, `${issuer.keys()[0]?.kid}.pem`);
    await writeFile(file, damage(await readFile(file, 'utf8')));
    const error = await refusal(createIssuer(options(new FileKeyStore({ directory }))));
    expect(error.code).toBe('invalid_key_file');
    expect(error.message).toContain('restore it from a backup');
    expect(error.message).toContain('remove its entry from schedule.json');
    expect(error.message).not.toContain('keys generate');
  });

  it('refuses at createIssuer a key file swapped for another key', async () => {
    const issuer = await createIssuer(options(new FileKeyStore({ directory })));
    const file = join(directory, `${issuer.keys()[0]?.kid}.pem`);
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string;
    await writeFile(file, other);
    const error = await refusal(createIssuer(options(new FileKeyStore({ directory }))));
    expect(error.code).toBe('key_mismatch');
    expect(error.message).toContain('restore');
    expect(error.message).toContain('remove its record');
  });

  it('refuses at createIssuer a key file the schedule names but the directory lacks', async () => {
    const issuer = await createIssuer(options(new FileKeyStore({ directory })));
    await unlink(join(directory, `${issuer.keys()[0]?.kid}.pem`));
    expect((await refusal(createIssuer(options(new FileKeyStore({ directory }))))).code).toBe('key_not_found');
  });
});

describe('FileKeyStore: a key file missing', () => {
  it('names the directory, the files looked for and the way out (key_not_found)', async () => {
    const store = new FileKeyStore({ directory });
    const { kid } = await store.generate();
    await unlink(join(directory, `${kid}.pem`));
    const error = await new FileKeyStore({ directory }).sign(kid, new Uint8Array(1)).catch((caught: unknown) => caught);
    expect((error as KeyStoreError).code).toBe('key_not_found');
    const { message } = error as KeyStoreError;
    for (const fact of [directory, `${kid}.pem or ${kid}.jwk.json`, 'restore it from a backup', 'remove its entry from schedule.json'])
      expect(message).toContain(fact);
  });
});

describe('FileKeyStore: a directory written by the version without standbys', () => {
  it('loads as it is, gains a standby at start-up (reported), and after an hour a compromise costs no outage', async () => {
    const clock = fakeClock();
    // As that version left it: the signing key's record and its key file, no standby mark anywhere.
    const old = await new FileKeyStore({ directory }).generate();
    const signsFrom = clock.now() - 9 * 3600_000;
    const record = { kid: old.kid, publicJwk: old, publishedAt: signsFrom - 3600_000, signsFrom };
    await writeFile(join(directory, 'schedule.json'), `${JSON.stringify({ keys: [record] }, null, 2)}\n`);
    const issuer = await createIssuer({
      issuer: ISS,
      audience: AUD,
      product: 'acme',
      keyStore: new FileKeyStore({ directory }),
      now: clock.now,
    });
    const [standby] = issuer.startReport.published as [string];
    expect([issuer.startReport.signing, issuer.startReport.standby]).toEqual([old.kid, null]);
    expect(issuer.keys().map((key) => [key.kid, key.state])).toEqual([
      [old.kid, 'signing'],
      [standby, 'standby'],
    ]);
    const saved = JSON.parse(await readFile(join(directory, 'schedule.json'), 'utf8')) as { keys: object[] };
    // The signing key gains the retention it is now held under (24 h tokens plus the 1 h margin).
    const kept = { ...record, retainFor: 90_000 };
    expect(saved.keys).toEqual([kept, expect.objectContaining({ kid: standby, standby: true, publishedAt: clock.now() })]);
    const sign = () => issuer.sign({ tenant: 'ern:acme/tenants/t-1', scopes: ['hub:subscribe'] });
    expect(decodeProtectedHeader(await sign()).kid).toBe(old.kid);
    clock.advance(3600);
    expect((await issuer.tick()).standby).toBe(standby);
    expect((await issuer.compromised(old.kid)).signing).toBe(standby);
    expect(decodeProtectedHeader(await sign()).kid).toBe(standby);
  });
});
