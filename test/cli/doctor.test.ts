import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDoctorCommand } from '../../src/cli/doctor.js';
import { EXIT, runCli } from '../../src/cli/run-cli.js';
import { type AuthErrorCode, IssuerRegistry, createVerifier, isAuthError, scopeFailure } from '../../src/index.js';
import { type TestIssuer, createTestIssuer, generateTestKey } from '../../src/testing/index.js';
import { captureIo } from './cli-io.js';

const ISS = 'https://auth.acme.example';
const AUD = 'https://payments.example';
const NOW = Date.UTC(2030, 0, 1, 12, 0, 0);
const NOW_S = NOW / 1000;
const ENTRY = { issuer: ISS, jwksUri: 'https://auth.acme.example/.well-known/jwks.json', products: ['acme'] };

let issuer: TestIssuer;
let directory: string;
let entryFile: string;
let jwksFile: string;
const doctor = createDoctorCommand();

beforeAll(async () => {
  issuer = await createTestIssuer({ issuer: ISS, audience: AUD, product: 'acme', now: () => NOW, tenantName: 'Acme Clinic' });
  directory = await mkdtemp(join(tmpdir(), 'paygate-doctor-'));
  entryFile = join(directory, 'entry.json');
  jwksFile = join(directory, 'jwks.json');
  await writeFile(entryFile, JSON.stringify(ENTRY));
  await writeFile(jwksFile, JSON.stringify(issuer.jwks));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function runDoctor(token: string, extra: readonly string[] = ['--jwks', jwksFile]) {
  const io = captureIo();
  const code = await runCli(['doctor', token, '--entry', entryFile, ...extra, '--audience', AUD, '--now', String(NOW_S)], io, [doctor]);
  return { code, out: io.out(), err: io.err() };
}

/** What the gateway's verifier answers for `token`, independently of the doctor. */
async function gatewayAnswer(token: string, jwks: unknown = issuer.jwks): Promise<AuthErrorCode | 'accepted'> {
  const verifier = createVerifier({
    registry: new IssuerRegistry([ENTRY]),
    audience: AUD,
    now: () => NOW,
    fetch: async () => (jwks === null ? new Response('', { status: 503 }) : Response.json(jwks)),
  });
  try {
    const auth = await verifier.verify(token);
    return scopeFailure(auth)?.code ?? 'accepted';
  } catch (error) {
    if (isAuthError(error)) return error.code;
    throw error;
  }
}

function firstFailure(out: string): string {
  return out.split('\n').find((line) => line.startsWith('✗')) ?? '';
}

interface Case {
  readonly code: AuthErrorCode;
  readonly token: () => Promise<string>;
  /** The failing line's check name and compared values. */
  readonly shows: readonly string[];
  readonly jwks?: 'missing';
}

const CASES: readonly Case[] = [
  { code: 'token_too_large', token: () => issuer.token({ tenant_name: 'x'.repeat(9000) }), shows: ['✗ size', 'bytes > 8192 allowed'] },
  { code: 'malformed_token', token: async () => 'eyJhbGciOiJSUzI1NiJ9.e30', shows: ['✗ format', '2 dot-separated segments, not 3'] },
  { code: 'unsupported_algorithm', token: () => issuer.token({}, { alg: 'HS256' }), shows: ['✗ header alg', '"HS256", but the gateway accepts only "RS256"'] },
  { code: 'missing_kid', token: () => issuer.token({}, { kid: undefined }), shows: ['✗ header kid', 'absent: the header must name its key in "kid"'] },
  { code: 'invalid_typ', token: () => issuer.token({}, { typ: 'JOSE' }), shows: ['✗ header typ', '"JOSE", expected "JWT"'] },
  { code: 'unsupported_crit', token: () => issuer.token({}, { crit: ['exp'] }), shows: ['✗ header crit', '["exp"]'] },
  {
    code: 'unknown_issuer',
    token: () => issuer.token({ iss: `${ISS}/`, sub: `${ISS}/` }),
    shows: ['✗ iss', `"${ISS}/" ≠ registered "${ISS}"`, 'only by case or a trailing "/"'],
  },
  { code: 'unknown_key', token: () => issuer.token({}, { kid: 'retired-2029' }), shows: ['✗ kid', '"retired-2029" is not among the kids published (test-key)'] },
  {
    code: 'invalid_signature',
    token: async () => issuer.token({}, {}, { key: await generateTestKey({ kid: 'test-key' }) }),
    shows: ['✗ signature', 'RS256 does not verify with the published key "test-key"'],
  },
  { code: 'invalid_claim', token: () => issuer.token({ tenant_ern: 'acme/tenants/t-1' }), shows: ['✗ tenant_ern', '"acme/tenants/t-1"', 'expected "ern:<product>/tenants/<tenant-id>"'] },
  {
    code: 'token_expired',
    token: () => issuer.token({ iat: NOW_S - 7200, expt: NOW_S - 3600 }),
    shows: ['✗ expiry', 'expt 2030-01-01T11:00:00Z (1 h ago) has passed, 1 h ago (now 2030-01-01T12:00:00Z, tolerance 30 s)'],
  },
  {
    code: 'token_not_yet_valid',
    token: () => issuer.token({ nbf: NOW_S + 3600, expt: NOW_S + 7200 }),
    shows: ['✗ nbf', 'not valid for another 1 h'],
  },
  {
    code: 'token_lifetime_exceeded',
    token: () => issuer.token({ expt: NOW }),
    shows: ['✗ lifetime', '> maximum 86400 s (1 d); expt looks like milliseconds: write seconds'],
  },
  { code: 'audience_mismatch', token: () => issuer.token({ aud: 'https://payments.test' }), shows: ['✗ aud', '"https://payments.test" does not name the gateway; expected "https://payments.example"'] },
  { code: 'subject_mismatch', token: () => issuer.token({ sub: 'client-42' }), shows: ['✗ sub', `"client-42" ≠ iss "${ISS}"`] },
  {
    code: 'tenant_not_allowed',
    token: () => issuer.token({ tenant_ern: 'ern:globex/tenants/t-1' }),
    shows: ['✗ tenant_ern', 'product "globex" of "ern:globex/tenants/t-1" is not among the issuer\'s products (acme)'],
  },
  { code: 'jwks_unavailable', token: () => issuer.token(), shows: ['✗ jwks', 'could not load', 'cannot read the file (ENOENT)'], jwks: 'missing' },
  {
    code: 'insufficient_scope',
    token: () => issuer.token({ scope: 'pay:refundEverything' }),
    shows: ['✗ scopes', 'no known scope (needs at least one of pay:processPayments, pay:chargeToken, pay:manageIntegration, hub:subscribe); unknown, granting nothing: pay:refundEverything'],
  },
];

describe('paygate-auth doctor', () => {
  it('accepts a valid token, printing every check, and agrees with the verifier', async () => {
    const token = await issuer.token({ user_ern: 'ern:acme/tenants/t-1/users/u-9' });
    const { code, out } = await runDoctor(token);
    expect(code).toBe(EXIT.ok);
    expect(await gatewayAnswer(token)).toBe('accepted');
    const names = out.split('\n').filter((line) => /^[✓✗–] /.test(line)).map((line) => line.slice(2, 14).trim());
    expect(names).toEqual([
      'size', 'format', 'header alg', 'header kid', 'header typ', 'header crit', 'iss', 'jwks', 'kid', 'signature',
      'exp', 'expt', 'iat', 'nbf', 'expiry', 'not before', 'lifetime', 'aud', 'sub', 'tenant_ern', 'scope', 'tenant_name', 'user_ern', 'scopes',
    ]);
    expect(out).not.toContain('✗');
    expect(out).toContain(`✓ expt         ${NOW_S + 300} = 2030-01-01T12:05:00Z (in 5 min)`);
    expect(out).toContain("Accepted. The gateway's verifier (createVerifier) accepts it too.");
  });

  it.each(CASES)('stops at the failing check for a $code token, with the values compared, as the verifier does', async (testCase) => {
    const token = await testCase.token();
    const extra = ['--jwks', testCase.jwks === 'missing' ? join(directory, 'missing.json') : jwksFile];
    const { code, out } = await runDoctor(token, extra);
    expect(await gatewayAnswer(token, testCase.jwks === 'missing' ? null : issuer.jwks)).toBe(testCase.code);
    expect(code).toBe(EXIT.failed);
    const failing = firstFailure(out);
    expect(failing.endsWith(`→ ${testCase.code}`)).toBe(true);
    for (const text of testCase.shows) expect(failing).toContain(text);
    expect(out.split('\n').filter((line) => line.startsWith('✗'))).toHaveLength(1);
    expect(out).toContain(`Rejected: ${testCase.code}. The gateway's verifier (createVerifier) answers ${testCase.code} too.`);
    expect(out).not.toContain(token);
  });

  it('refuses a JWKS that repeats a member name, as the verifier does', async () => {
    const text = JSON.stringify(issuer.jwks).replace('"n":', '"n":"AQAB","n":');
    const file = join(directory, 'repeated.json');
    await writeFile(file, text);
    const token = await issuer.token();
    const { code, out } = await runDoctor(token, ['--jwks', file]);
    expect(code).toBe(EXIT.failed);
    expect(firstFailure(out)).toMatch(/^✗ jwks .*repeats the member keys\[0\]\.n .*→ jwks_unavailable$/);
    const verifier = createVerifier({ registry: new IssuerRegistry([ENTRY]), audience: AUD, now: () => NOW, fetch: async () => new Response(text) });
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'jwks_unavailable' });
  });

  it('shows each time claim as a date and says when one looks like milliseconds', async () => {
    const { out } = await runDoctor(await issuer.token({ expt: NOW }));
    expect(out).toContain(`✓ expt         ${NOW} = +061972-08-08T00:00:00Z (in 21893584 d 12 h; looks like milliseconds`);
    expect(out).toContain('looks like milliseconds: read as seconds/1000 it is 2030-01-01T12:00:00Z');
  });

  it('never prints the token, only its fingerprint', async () => {
    const token = await issuer.token();
    const { out } = await runDoctor(token);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    expect(out).toMatch(/token sha256:[0-9a-f]{12} \(\d+ characters\)/);
    for (const part of [payload, signature]) expect(out).not.toContain(part);
    expect(out).not.toContain(`${header}.`);
  });

  it('reads the token from standard input, "Bearer " included', async () => {
    const token = await issuer.token();
    const command = createDoctorCommand({ readStdin: async () => `Bearer ${token}\n`, stdinIsTerminal: false });
    const io = captureIo();
    const code = await runCli(['doctor', '-', '--entry', entryFile, '--jwks', jwksFile, '--audience', AUD, '--now', String(NOW_S)], io, [command]);
    expect(code).toBe(EXIT.ok);
  });

  it("downloads the JWKS from the entry's URL when no --jwks is given", async () => {
    const served = await createTestIssuer({ issuer: ISS, audience: AUD, product: 'acme', now: () => NOW });
    const server = await served.listen();
    try {
      const file = join(directory, 'loopback-entry.json');
      await writeFile(file, JSON.stringify({ ...ENTRY, jwksUri: server.url }));
      const io = captureIo();
      const code = await runCli(['doctor', await served.token(), '--entry', file, '--audience', AUD, '--now', String(NOW_S)], io, [doctor]);
      expect(io.out()).toContain(`✓ jwks         ${server.url}: 1 key(s), kids test-key`);
      expect(code).toBe(EXIT.ok);
    } finally {
      await served.close();
    }
  });

  it('builds the entry from --issuer, --product and --jwks', async () => {
    const io = captureIo();
    const args = ['doctor', await issuer.token(), '--issuer', ISS, '--product', 'acme', '--jwks', jwksFile, '--audience', AUD, '--now', String(NOW_S)];
    expect(await runCli(args, io, [doctor])).toBe(EXIT.ok);
  });

  it.each([
    [['--entry', 'x.json'], '--audience is required'],
    [['--audience', AUD, '--issuer', ISS, '--jwks', 'j.json'], '--product is required without --entry'],
    [['--audience', AUD, '--entry', 'x.json', '--product', 'acme'], '--product cannot be combined with --entry'],
    [['--audience', AUD, '--bogus'], "Unknown option '--bogus'"],
  ])('exits 2 on a usage mistake: %j', async (args, message) => {
    const io = captureIo();
    expect(await runCli(['doctor', 'a.b.c', ...args], io, [doctor])).toBe(EXIT.usage);
    expect(io.err()).toContain(message);
  });

  it('refuses a registry entry the gateway would not accept, naming the field', async () => {
    const file = join(directory, 'bad-entry.json');
    await writeFile(file, JSON.stringify({ ...ENTRY, jwksUri: 'http://auth.acme.example/jwks.json' }));
    const io = captureIo();
    expect(await runCli(['doctor', 'a.b.c', '--entry', file, '--audience', AUD], io, [doctor])).toBe(EXIT.usage);
    expect(io.err()).toContain('jwksUri must use https:');
  });
});
