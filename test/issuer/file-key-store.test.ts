import { chmod, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileKeyStore, KeyStoreError, createIssuer } from '../../src/issuer/index.js';
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
  it.each([['pkcs8', '.pem'], ['jwk', '.jwk.json']] as const)('writes %s private keys with mode 0600 in a 0700 directory', async (format, suffix) => {
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

  it('destroys a key for good', async () => {
    const store = new FileKeyStore({ directory });
    const { kid } = await store.generate();
    await store.destroy(kid);
    expect(await readdir(directory)).toEqual([]);
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

  it('saves the schedule whole, as JSON, without private members', async () => {
    const store = new FileKeyStore({ directory });
    await createIssuer({ issuer: ISS, audience: AUD, product: 'acme', keyStore: store });
    const saved = JSON.parse(await readFile(join(directory, 'schedule.json'), 'utf8')) as { keys: { publicJwk: object }[] };
    expect(saved.keys).toHaveLength(1);
    expect(Object.keys(saved.keys[0]?.publicJwk ?? {}).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
  });

  it.each([[{ directory: '' }, 'directory'], [{ directory: 'x', format: 'pem' }, 'format'], [{ directory: 'x', modulusLength: 1024 }, 'modulusLength']])(
    'throws a TypeError for %j',
    (options, name) => {
      expect(() => new FileKeyStore(options as never)).toThrow(TypeError);
      expect(() => new FileKeyStore(options as never)).toThrow(name);
    },
  );
});
