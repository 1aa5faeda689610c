import { chmod, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { exportJWK, importPKCS8 } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { keysGenerateCommand } from '../../src/cli/keys-generate.js';
import { runCli } from '../../src/cli/run-cli.js';
import { tokenSignCommand } from '../../src/cli/token-sign.js';
import { IssuerRegistry, type VerifierEvent, createVerifier } from '../../src/index.js';
import { FileKeyStore, type Issuer, createIssuer } from '../../src/issuer/index.js';
import { fakeClock } from '../support/jwks-clock.js';
import { captureIo } from '../cli/cli-io.js';
import { useFreshRsaKeys } from '../support/key-pool.js';

// Private key material is what these tests follow: fresh keys from the platform, not the run's pool.
useFreshRsaKeys();

const ISS = 'https://auth.acme.example';
const AUD = 'https://payments.example';
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi'] as const;

let root: string;
/** Every private value and PEM line written to disk, and everything the code showed. */
const secrets: string[] = [];
const shown: string[] = [];
const consoleCalls: unknown[][] = [];

/** The private members' values of every key file in `directory`, and its PEM body lines. */
async function collectSecrets(directory: string): Promise<void> {
  for (const name of await readdir(directory)) {
    if (name === 'schedule.json') continue;
    const text = await readFile(join(directory, name), 'utf8');
    const isPem = text.startsWith('-----');
    const jwk = isPem
      ? await exportJWK(await importPKCS8(text, 'RS256', { extractable: true }))
      : (JSON.parse(text) as Record<string, string>);
    for (const member of PRIVATE_MEMBERS) secrets.push(String((jwk as Record<string, unknown>)[member]));
    if (isPem) secrets.push(...text.split('\n').filter((line) => line.length >= 40 && !line.startsWith('-----')));
  }
}

function scan(text: string): string[] {
  return secrets.filter((secret) => text.includes(secret));
}

async function exercise(issuer: Issuer, directory: string, clock: ReturnType<typeof fakeClock>): Promise<void> {
  const events: VerifierEvent[] = [];
  const verifier = createVerifier({
    registry: new IssuerRegistry([{ issuer: ISS, jwksUri: 'https://auth.acme.example/jwks.json', products: ['acme'] }]),
    audience: AUD,
    now: clock.now,
    fetch: async () => Response.json(issuer.jwks().document),
    onEvent: (event) => events.push(event),
  });
  shown.push(JSON.stringify(issuer.jwks()), JSON.stringify(issuer.keys()), inspect(issuer, { depth: Infinity, showHidden: true }));
  const errors: unknown[] = [];
  errors.push(await issuer.sign({ tenant: 'ern:acme/tenants/t-1', scopes: ['pay:processPayments'] }).catch((error: unknown) => error));
  clock.advance(3600);
  const token = await issuer.sign({ tenant: 'ern:acme/tenants/t-1', scopes: ['pay:processPayments'] });
  await verifier.verify(token);
  await verifier.verify(`${token.slice(0, -4)}AAAA`).catch((error: unknown) => errors.push(error));
  errors.push(await issuer.sign({ tenant: 'ern:globex/tenants/t-1', scopes: ['pay:processPayments'] }).catch((error: unknown) => error));
  errors.push(await issuer.compromised('nope').catch((error: unknown) => error));
  const [kid] = issuer.jwks().document.keys.map((key) => key.kid);
  const file = (await readdir(directory)).find((name) => name.startsWith(kid as string)) as string;
  await chmod(join(directory, file), 0o644);
  errors.push(await new FileKeyStore({ directory }).sign(kid as string, new Uint8Array(1)).catch((error: unknown) => error));
  await chmod(join(directory, file), 0o600);
  const original = await readFile(join(directory, file), 'utf8');
  await writeFile(join(directory, file), original.slice(0, original.length / 2));
  errors.push(await new FileKeyStore({ directory }).sign(kid as string, new Uint8Array(1)).catch((error: unknown) => error));
  await writeFile(join(directory, file), original);
  await issuer.compromised(kid as string);
  shown.push(JSON.stringify(issuer.jwks()), JSON.stringify(events));
  for (const error of errors) {
    expect(error).toBeInstanceOf(Error);
    shown.push(inspect(error, { depth: Infinity, showHidden: true }), String((error as Error).stack));
  }
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'paygate-secrets-'));
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void consoleCalls.push(args));
  }
  for (const format of ['pkcs8', 'jwk'] as const) {
    const directory = join(root, format);
    const clock = fakeClock();
    const issuer = await createIssuer({
      issuer: ISS,
      audience: AUD,
      product: 'acme',
      keyStore: new FileKeyStore({ directory, format }),
      now: clock.now,
    });
    await collectSecrets(directory);
    await exercise(issuer, directory, clock);
    await collectSecrets(directory);
  }
  for (const format of ['pkcs8', 'jwk']) {
    const io = captureIo();
    const out = join(root, `cli-${format}`, 'private.key');
    await runCli(['keys', 'generate', '--out', out, '--format', format, '--jwks', join(root, `cli-${format}.jwks.json`)], io, [
      keysGenerateCommand,
    ]);
    await collectSecrets(join(root, `cli-${format}`));
    const sign = captureIo();
    await runCli(
      ['token', 'sign', '--key', out, '--issuer', ISS, '--audience', AUD, '--tenant', 'ern:acme/tenants/t-1', '--scope', 'pay:nope'],
      sign,
      [tokenSignCommand],
    );
    shown.push(io.out(), io.err(), sign.out(), sign.err(), await readFile(join(root, `cli-${format}.jwks.json`), 'utf8'));
  }
});

afterAll(async () => {
  vi.restoreAllMocks();
  await rm(root, { recursive: true, force: true });
});

describe('private keys never leave the key files', () => {
  it('collected the private values of every key written (the scan has something to find)', () => {
    expect(secrets.length).toBeGreaterThan(40);
    expect(secrets.every((secret) => secret.length >= 40)).toBe(true);
  });

  it('appear in no JWKS, schedule view, inspected object, error, event or command output', () => {
    expect(shown.length).toBeGreaterThan(20);
    for (const text of shown) expect(scan(text)).toEqual([]);
  });

  it('are never written to the console', () => {
    expect(consoleCalls).toEqual([]);
  });

  it('leave no private member in any JWKS served', () => {
    const documents = shown
      .filter((text) => text.startsWith('{"document"') || text.startsWith('{\n  "keys"'))
      .map((text) => JSON.parse(text) as Record<string, unknown>);
    expect(documents.length).toBeGreaterThan(3);
    for (const document of documents) {
      const keys = ((document.document as { keys?: unknown[] } | undefined)?.keys ?? (document.keys as unknown[])) as Record<
        string,
        unknown
      >[];
      for (const key of keys) for (const member of PRIVATE_MEMBERS) expect(key).not.toHaveProperty(member);
    }
  });

  it('have no PEM text in anything shown', () => {
    for (const text of shown) expect(text).not.toMatch(/PRIVATE KEY-----/);
  });
});
