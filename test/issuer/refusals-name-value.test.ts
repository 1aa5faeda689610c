/**
 * Each refusal of paygate-auth/issuer names the value it found (`got …`, quoted as the package
 * quotes values), so a misconfigured issuer is fixed from the message alone.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FileKeyStore,
  InMemoryKeyStore,
  type IssuerError,
  type SigningKey,
  createIssuer,
  generateKeyFile,
  readPrivateKeyFile,
  signToken,
} from '../../src/issuer/index.js';

const ISS = 'https://auth.acme.example';
const AUD = 'https://payments.example';
const INPUT = { tenant: 'ern:acme/tenants/t-1', scopes: ['pay:processPayments'] };
let directory: string;
let key: SigningKey;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'paygate-refusals-'));
  await generateKeyFile(join(directory, 'key.pem'));
  key = await readPrivateKeyFile(join(directory, 'key.pem'));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function messageOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Error);
  return (error as Error).message;
}

const issuerOptions = { issuer: ISS, audience: AUD, product: 'acme' };

describe('signToken refusals name the value found', () => {
  it('names options that are not an object', async () => {
    expect(await messageOf(signToken(INPUT, 'options' as never))).toContain('got "options"');
  });

  it('names an audience that is neither text nor a list', async () => {
    expect(await messageOf(signToken(INPUT, { key, issuer: ISS, audience: 7 as never }))).toContain('got 7');
    expect(await messageOf(signToken(INPUT, { key, issuer: ISS, audience: [] }))).toContain('got an empty array');
    expect(await messageOf(signToken(INPUT, { key, issuer: ISS, audience: ' a ' }))).toContain('got " a "');
  });

  it('names a now that is no function', async () => {
    expect(await messageOf(signToken(INPUT, { key, issuer: ISS, audience: AUD, now: 5 as never }))).toContain('got 5');
  });

  it('names the kid of a key without one', async () => {
    expect(await messageOf(signToken(INPUT, { key: { ...key, kid: '' }, issuer: ISS, audience: AUD }))).toContain('got kid ""');
  });

  it('names a product that is no name', async () => {
    const message = await messageOf(signToken(INPUT, { key, issuer: ISS, audience: AUD, product: ['acme', 'a b'] }));
    expect(message).toContain('got "a b" at [1]');
  });

  it('names input that is not an object', async () => {
    const error = await signToken('ern:acme/tenants/t-1' as never, { key, issuer: ISS, audience: AUD }).catch((caught) => caught);
    expect([(error as IssuerError).code, (error as IssuerError).message]).toEqual([
      'unknown_field',
      expect.stringContaining('got "ern:acme/tenants/t-1"'),
    ]);
  });

  it('names scopes that are not a list', async () => {
    const error = await signToken({ ...INPUT, scopes: 3 as never }, { key, issuer: ISS, audience: AUD }).catch((caught) => caught);
    expect([(error as IssuerError).code, (error as IssuerError).message]).toEqual(['invalid_scope', expect.stringContaining('got 3')]);
  });
});

describe('createIssuer refusals name the value found', () => {
  it('names an audience item that is not https', async () => {
    const message = await messageOf(
      createIssuer({ ...issuerOptions, audience: [AUD, 'http://x.example'], keyStore: new InMemoryKeyStore() }),
    );
    expect(message).toContain('got "http://x.example"');
  });

  it('names an audience item that is not text', async () => {
    const message = await messageOf(createIssuer({ ...issuerOptions, audience: [AUD, 4] as never, keyStore: new InMemoryKeyStore() }));
    expect(message).toContain('got 4 at [1]');
  });

  it('names a keyStore that is none, and a method it lacks', async () => {
    expect(await messageOf(createIssuer({ ...issuerOptions, keyStore: 'keys' as never }))).toContain('got "keys"');
    const partial = { ...new InMemoryKeyStore(), generate: async () => undefined, sign: 1 };
    expect(await messageOf(createIssuer({ ...issuerOptions, keyStore: partial as never }))).toMatch(/sign must be a function.*got 1/);
  });

  it('names a publishLead not shorter than the interval', async () => {
    const message = await messageOf(
      createIssuer({ ...issuerOptions, keyStore: new InMemoryKeyStore(), rotation: { interval: 86_400, publishLead: 86_400 } }),
    );
    expect(message).toContain('got 86400 s');
  });
});

describe('key-file refusals name the value found', () => {
  it('generateKeyFile names a file that is no path', async () => {
    expect(await messageOf(generateKeyFile('' as never))).toContain('got ""');
    expect(await messageOf(generateKeyFile(undefined as never))).toContain('got undefined');
  });

  it('generateKeyFile names a modulusLength it refuses', async () => {
    expect(await messageOf(generateKeyFile(join(directory, 'k2.pem'), { modulusLength: 1024 as never }))).toContain('got 1024');
  });

  it('readPrivateKeyFile names a kid that is no text', async () => {
    expect(await messageOf(readPrivateKeyFile(join(directory, 'key.pem'), { kid: 12 as never }))).toContain('got 12');
  });

  it('FileKeyStore names a directory that is no path', () => {
    expect(() => new FileKeyStore({ directory: 3 as never })).toThrow(/directory must be .*got 3/);
  });
});
