import { generateKeyPairSync } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyStoreError, generateKeyFile, readPrivateKeyFile } from '../../src/issuer/index.js';
import { useFreshRsaKeys } from '../support/key-pool.js';

// Key generation is what these tests are about: fresh keys from the platform, not the run's pool.
useFreshRsaKeys();

let directory: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'paygate-key-file-'));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  const error: unknown = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return error instanceof KeyStoreError ? error.code : undefined;
}

describe('generateKeyFile', () => {
  it.each(['pkcs8', 'jwk'] as const)(
    'writes a %s private key with mode 0600 into a new 0700 directory and resolves the public JWK',
    async (format) => {
      const file = join(directory, `new-${format}`, 'key');
      const jwk = await generateKeyFile(file, { format });
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect((await stat(join(directory, `new-${format}`))).mode & 0o777).toBe(0o700);
      expect(Object.keys(jwk).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
      expect(jwk.kid).toBe(await calculateJwkThumbprint({ kty: 'RSA', n: jwk.n, e: jwk.e }, 'sha256'));
      expect((await readPrivateKeyFile(file)).kid).toBe(jwk.kid);
    },
  );

  it('never overwrites a file (key_exists)', async () => {
    const file = join(directory, 'kept');
    await writeFile(file, 'before', { mode: 0o600 });
    expect(await codeOf(generateKeyFile(file))).toBe('key_exists');
    expect(await readFile(file, 'utf8')).toBe('before');
  });

  it('removes the temporary file a write killed halfway left beside the key, once a minute old', async () => {
    const folder = join(directory, 'swept');
    await mkdir(folder, { mode: 0o700 });
    const left = join(folder, 'key.1b4e28ba-2fa1-11d2-883f-0016d3cca427.tmp');
    const young = join(folder, 'key.6fa459ea-ee8a-3ca4-894e-db77e160355e.tmp');
    const other = join(folder, 'other.1b4e28ba-2fa1-11d2-883f-0016d3cca427.tmp');
    for (const file of [left, young, other]) await writeFile(file, 'private key', { mode: 0o600 });
    const old = new Date(Date.now() - 2 * 60_000);
    await Promise.all([utimes(left, old, old), utimes(other, old, old)]);
    await generateKeyFile(join(folder, 'key'));
    expect((await readdir(folder)).sort()).toEqual([
      'key',
      'key.6fa459ea-ee8a-3ca4-894e-db77e160355e.tmp',
      'other.1b4e28ba-2fa1-11d2-883f-0016d3cca427.tmp',
    ]);
  });

  it('refuses a modulus length the gateway does not take, naming the option', async () => {
    await expect(generateKeyFile(join(directory, 'small'), { modulusLength: 1024 as 2048 })).rejects.toThrow(/modulusLength/);
  });
});

describe('readPrivateKeyFile', () => {
  it('takes the kid given over the thumbprint', async () => {
    const file = join(directory, 'named');
    await generateKeyFile(file);
    expect((await readPrivateKeyFile(file, { kid: 'k-1' })).kid).toBe('k-1');
  });

  it("takes a JWK file's own kid", async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const file = join(directory, 'own-kid.jwk.json');
    await writeFile(file, JSON.stringify({ ...privateKey.export({ format: 'jwk' }), kid: 'own' }), { mode: 0o600 });
    expect((await readPrivateKeyFile(file)).kid).toBe('own');
  });

  it.each([
    ['a blank line and spaces before it', (pem: string) => `\n  ${pem}`],
    ['CRLF line ends and a trailing blank line', (pem: string) => `${pem.replaceAll('\n', '\r\n')}\r\n\r\n`],
    [
      'the "Bag Attributes" openssl pkcs12 writes before it, and text after it',
      (pem: string) => `Bag Attributes\n    localKeyID: 01 02\nKey Attributes: <No Attributes>\n${pem}trailing note\n`,
    ],
  ])('reads a PKCS#8 PEM with %s, as the kid of the key alone', async (_name, wrap) => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    const file = join(directory, `wrapped-${Math.random().toString(36).slice(2)}.pem`);
    await writeFile(file, wrap(pem), { mode: 0o600 });
    const { n, e } = publicKey.export({ format: 'jwk' });
    expect((await readPrivateKeyFile(file)).kid).toBe(await calculateJwkThumbprint({ kty: 'RSA', n: n as string, e: e as string }));
  });

  it('refuses a PEM file holding two PRIVATE KEY blocks, naming them, rather than taking the first', async () => {
    const pem = () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    const file = join(directory, 'two-keys.pem');
    await writeFile(file, `${pem()}${pem()}`, { mode: 0o600 });
    const error = await readPrivateKeyFile(file).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'invalid_key_file' });
    expect((error as Error).message).toContain('several "PRIVATE KEY" blocks');
  });

  it('refuses a file that others may read (insecure_key_file)', async () => {
    const file = join(directory, 'loose');
    await generateKeyFile(file);
    await chmod(file, 0o644);
    expect(await codeOf(readPrivateKeyFile(file))).toBe('insecure_key_file');
  });

  it('refuses a directory as one (EISDIR), never advising chmod 600 for it', async () => {
    const folder = join(directory, 'keys-folder');
    await mkdir(folder, { mode: 0o755 });
    await chmod(folder, 0o755);
    const error: unknown = await readPrivateKeyFile(folder).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'EISDIR' });
    expect((error as Error).message).not.toContain('chmod');
  });

  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  it.each([
    [
      'a PKCS#1 PEM',
      rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }) as string,
      ['"RSA PRIVATE KEY"', 'openssl pkcs8 -topk8 -nocrypt'],
    ],
    ['a public key PEM', rsa.publicKey.export({ type: 'spki', format: 'pem' }) as string, ['"PUBLIC KEY"', 'not the private key']],
    ['an EC PKCS#8 PEM', ec.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, ['"PRIVATE KEY"', 'not an RSA key']],
    ['a public JWK', JSON.stringify(rsa.publicKey.export({ format: 'jwk' })), ['public JWK (no "d")', 'not the private key']],
    [
      'a JWKS (the file keys generate wrote with --jwks)',
      JSON.stringify({ keys: [rsa.publicKey.export({ format: 'jwk' })] }),
      ['a JWKS ("keys")', 'not the private key', 'with --out'],
    ],
    ['an EC private JWK', JSON.stringify(ec.privateKey.export({ format: 'jwk' })), ['kty is "EC"', 'not "RSA"']],
  ])('refuses %s as invalid_key_file, saying what it holds and what to do, never its content', async (_kind, text, facts) => {
    const file = join(directory, `wrong-kind-${facts[0]?.replace(/\W/g, '')}`);
    await writeFile(file, text, { mode: 0o600 });
    const error: unknown = await readPrivateKeyFile(file).catch((caught: unknown) => caught);
    expect((error as KeyStoreError).code).toBe('invalid_key_file');
    for (const fact of facts) expect((error as KeyStoreError).message).toContain(fact);
    const body = text.split('\n').find((line) => line.length > 40) ?? text.slice(20, 60);
    expect((error as KeyStoreError).message).not.toContain(body);
  });

  const privateJwk = rsa.privateKey.export({ format: 'jwk' });
  it.each([
    ['alg "RS384"', { alg: 'RS384' }, 'alg "RS384"'],
    ['alg "PS256"', { alg: 'PS256' }, 'alg "PS256"'],
    ['use "enc"', { use: 'enc' }, 'use "enc"'],
  ])(
    'refuses a private JWK labelled %s as invalid_key_file, naming the label, never relabelling it RS256',
    async (_label, members, found) => {
      const file = join(directory, `labelled-${Object.values(members)[0]}.jwk.json`);
      await writeFile(file, JSON.stringify({ ...privateJwk, ...members }), { mode: 0o600 });
      const error: unknown = await readPrivateKeyFile(file).catch((caught: unknown) => caught);
      expect((error as KeyStoreError).code).toBe('invalid_key_file');
      expect((error as KeyStoreError).message).toContain(found);
      expect((error as KeyStoreError).message).not.toContain(privateJwk.d as string);
    },
  );

  it('reads a private JWK labelled alg "RS256" and use "sig", as generateKeyFile writes it', async () => {
    const file = join(directory, 'labelled-rs256.jwk.json');
    await writeFile(file, JSON.stringify({ ...privateJwk, alg: 'RS256', use: 'sig' }), { mode: 0o600 });
    expect((await readPrivateKeyFile(file)).kid).toMatch(/^[\w-]{43}$/);
  });

  it('refuses a file over 64 KiB (invalid_key_file), naming the limit, even when a key starts it', async () => {
    const pem = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const file = join(directory, 'padded.pem');
    await writeFile(file, `${pem}${'\n'.repeat(70_000)}`, { mode: 0o600 });
    const error: unknown = await readPrivateKeyFile(file).catch((caught: unknown) => caught);
    expect((error as KeyStoreError).code).toBe('invalid_key_file');
    expect((error as KeyStoreError).message).toContain('more than 65536 bytes');
  });

  it('reads a key file of exactly 64 KiB', async () => {
    const pem = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const file = join(directory, 'at-limit.pem');
    await writeFile(file, `${pem}${'\n'.repeat(65_536 - Buffer.byteLength(pem))}`, { mode: 0o600 });
    expect((await readPrivateKeyFile(file)).kid).toMatch(/^[\w-]{43}$/);
  });

  it('refuses a key under 2048 bits (weak_key)', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const file = join(directory, 'weak.pem');
    await writeFile(file, privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, { mode: 0o600 });
    expect(await codeOf(readPrivateKeyFile(file))).toBe('weak_key');
  });

  it('refuses a file that is not a private key, without its content in the message (invalid_key_file)', async () => {
    const file = join(directory, 'not-a-key.pem');
    await writeFile(file, 'hello secret world', { mode: 0o600 });
    const error: unknown = await readPrivateKeyFile(file).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(KeyStoreError);
    expect((error as KeyStoreError).code).toBe('invalid_key_file');
    expect((error as KeyStoreError).message).not.toContain('hello secret world');
  });

  it('names a key file whose name holds a line break and an escape as one escaped line (attack: a --key path forging lines)', async () => {
    const file = join(directory, 'x\n\u001b[2Jall done.pem');
    await writeFile(file, 'no key', { mode: 0o600 });
    const error: unknown = await readPrivateKeyFile(file).catch((caught: unknown) => caught);
    expect((error as KeyStoreError).code).toBe('invalid_key_file');
    expect((error as KeyStoreError).message).toContain('x\\u000a\\u001b[2Jall done.pem"');
    expect((error as KeyStoreError).message).not.toMatch(/[\n\u001b]/);
  });
});
