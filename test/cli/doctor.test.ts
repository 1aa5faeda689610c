import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDoctorCommand } from '../../src/cli/doctor.js';
import { readProcessStdin } from '../../src/cli/token-input.js';
import { EXIT, runCli } from '../../src/cli/run-cli.js';
import { AUTH_ERROR_CODES, type AuthErrorCode, IssuerRegistry, type RuleName, createVerifier, isAuthError } from '../../src/index.js';
import { scopeFailure } from '../../src/internal/index.js';
import { type TestIssuer, createTestIssuer, generateTestKey, signRawToken } from '../../src/testing/index.js';
import { LOADED_MARGIN_MS } from '../support/loaded-machine.js';
import { type TcpProxy, startProxy } from '../postgres/tcp-proxy.js';
import { stubResolver } from '../support/resolver-stub.js';
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
  issuer = await createTestIssuer({
    issuer: ISS,
    audience: AUD,
    product: 'acme',
    now: () => NOW,
    tenantName: 'Acme Clinic',
  });
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

/** What the gateway's verifier answers for `token`, and the rule that failed, independently of the doctor. */
async function gatewayAnswer(token: string, jwks: unknown = issuer.jwks): Promise<{ code: AuthErrorCode | 'accepted'; rule?: RuleName }> {
  const verifier = createVerifier({
    registry: new IssuerRegistry([ENTRY]),
    audience: AUD,
    now: () => NOW,
    fetch: async () =>
      typeof jwks === 'string' ? new Response(jwks, { headers: { 'content-type': 'application/json' } }) : Response.json(jwks),
  });
  try {
    const auth = await verifier.verify(token);
    const denied = scopeFailure(auth);
    return denied === null ? { code: 'accepted' } : { code: denied.code, rule: 'scopes' };
  } catch (error) {
    if (isAuthError(error)) return { code: error.code, rule: error.facts?.rule };
    throw error;
  }
}

function firstFailure(out: string): string {
  return out.split('\n').find((line) => line.startsWith('✗')) ?? '';
}

/** The doctor's verdict: the code and rule of its "Rejected" line, or accepted. */
function verdict(out: string): { code: string; rule?: string } {
  const rejected = /^Rejected: (\w+) \(rule (\w+)\)/m.exec(out);
  return rejected === null ? { code: out.includes('Accepted.') ? 'accepted' : 'none' } : { code: rejected[1] as string, rule: rejected[2] };
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** `token` with segment `index` respelled: its last character's unused bits set (non-canonical base64url). */
function respelled(token: string, index: number): string {
  const segments = token.split('.');
  const segment = segments[index] as string;
  segments[index] = `${segment.slice(0, -1)}${ALPHABET[ALPHABET.indexOf(segment.slice(-1)) | 1]}`;
  return segments.join('.');
}

/** A validly signed token whose three segments all have unused trailing bits. */
async function tokenWithTrailingBits(): Promise<string> {
  for (let headerPad = 0; headerPad < 3; headerPad += 1) {
    for (let claimPad = 0; claimPad < 3; claimPad += 1) {
      const header = { alg: 'RS256', typ: 'JWT', kid: issuer.signingKey.kid, pad: 'x'.repeat(headerPad) };
      const token = await signRawToken(issuer.signingKey, header, issuer.claims({ pad: 'y'.repeat(claimPad) }));
      if (token.split('.').every((segment) => segment.length % 4 >= 2)) return token;
    }
  }
  throw new Error('no padding gave every segment trailing bits');
}

/** A token signed over exact JSON texts (a member repeated, say). */
async function signedText(header: string, payload: string): Promise<string> {
  return signRawToken(issuer.signingKey, new TextEncoder().encode(header), new TextEncoder().encode(payload));
}

interface Case {
  readonly name: string;
  readonly token: () => Promise<string>;
  /** The JWKS document's text, when not the issuer's. */
  readonly jwks?: string;
}

const CODES: readonly Case[] = [
  { name: 'token_too_large', token: () => issuer.token({ tenant_name: 'x'.repeat(9000) }) },
  { name: 'malformed_token', token: async () => 'eyJhbGciOiJSUzI1NiJ9.e30' },
  { name: 'unsupported_algorithm', token: () => issuer.token({}, { alg: 'HS256' }) },
  { name: 'missing_kid', token: () => issuer.token({}, { kid: undefined }) },
  { name: 'invalid_typ', token: () => issuer.token({}, { typ: 'JOSE' }) },
  { name: 'unsupported_crit', token: () => issuer.token({}, { crit: ['exp'] }) },
  { name: 'unknown_issuer', token: () => issuer.token({ iss: `${ISS}/`, sub: `${ISS}/` }) },
  { name: 'unknown_key', token: () => issuer.token({}, { kid: 'retired-2029' }) },
  {
    name: 'invalid_signature',
    token: async () => issuer.token({}, {}, { key: await generateTestKey({ kid: 'test-key' }) }),
  },
  { name: 'invalid_claim', token: () => issuer.token({ tenant_ern: 'acme/tenants/t-1' }) },
  { name: 'token_expired', token: () => issuer.token({ iat: NOW_S - 7200, expt: NOW_S - 3600 }) },
  { name: 'token_not_yet_valid', token: () => issuer.token({ nbf: NOW_S + 3600, expt: NOW_S + 7200 }) },
  { name: 'token_lifetime_exceeded', token: () => issuer.token({ expt: NOW }) },
  { name: 'audience_mismatch', token: () => issuer.token({ aud: 'https://payments.test' }) },
  { name: 'subject_mismatch', token: () => issuer.token({ sub: 'client-42' }) },
  { name: 'tenant_not_allowed', token: () => issuer.token({ tenant_ern: 'ern:globex/tenants/t-1' }) },
  { name: 'jwks_unavailable', token: () => issuer.token(), jwks: '{"keys":' },
  { name: 'insufficient_scope', token: () => issuer.token({ scope: 'pay:refundEverything' }) },
  { name: 'missing expiry', token: () => issuer.token({ expt: undefined, exp: undefined }) },
  {
    name: 'a JWKS that repeats a member',
    token: () => issuer.token(),
    jwks: JSON.stringify({ keys: [{ kid: 'test-key', kid2: 1 }] }).replace('"kid2"', '"kid"'),
  },
];

/** The five tokens the doctor's own rules once accepted where the verifier answers malformed_token. */
const DISAGREEMENTS: readonly Case[] = [
  { name: 'non-canonical base64url in the header', token: async () => respelled(await tokenWithTrailingBits(), 0) },
  { name: 'non-canonical base64url in the payload', token: async () => respelled(await tokenWithTrailingBits(), 1) },
  { name: 'non-canonical base64url in the signature', token: async () => respelled(await tokenWithTrailingBits(), 2) },
  {
    name: 'aud twice in the payload',
    token: () =>
      signedText(
        JSON.stringify({ alg: 'RS256', kid: 'test-key' }),
        JSON.stringify(issuer.claims({ aud: 'https://x.test' }))
          .replace('"aud":', `"aud":"https://x.test","aud":`)
          .replace('"https://x.test","aud":"https://x.test"', `"https://x.test","aud":${JSON.stringify(AUD)}`),
      ),
  },
  {
    name: 'kid twice in the header',
    token: () => signedText('{"alg":"RS256","kid":"other","kid":"test-key"}', JSON.stringify(issuer.claims())),
  },
];

describe('paygate-auth doctor', () => {
  it('accepts a valid token, printing every rule the verifier ran', async () => {
    const token = await issuer.token({ user_ern: 'ern:acme/tenants/t-1/users/u-9' });
    const { code, out } = await runDoctor(token);
    expect(code).toBe(EXIT.ok);
    expect((await gatewayAnswer(token)).code).toBe('accepted');
    const names = out
      .split('\n')
      .filter((line) => /^[✓✗] /.test(line))
      .map((line) => line.slice(2, 14).trim());
    expect(names).toEqual([
      'size',
      'format',
      'header alg',
      'header kid',
      'header typ',
      'header crit',
      'iss',
      'jwks',
      'kid',
      'signature',
      'expt',
      'iat',
      'expiry',
      'not before',
      'lifetime',
      'aud',
      'sub',
      'tenant_ern',
      'scope',
      'tenant_name',
      'user_ern',
      'scopes',
    ]);
    expect(out).not.toContain('✗');
    expect(out).toContain(`✓ expt         ${NOW_S + 300} = 2030-01-01T12:05:00Z (in 5 min)`);
    expect(out).toContain("Accepted. The gateway's verifier (createVerifier) accepts it too.");
  });

  it.each([...CODES, ...DISAGREEMENTS])("gives createVerifier's verdict and failing rule for $name", async (testCase) => {
    const token = await testCase.token();
    let extra = ['--jwks', jwksFile];
    if (testCase.jwks !== undefined) {
      const file = join(directory, `jwks-${testCase.name.replace(/\W+/g, '-')}.json`);
      await writeFile(file, testCase.jwks);
      extra = ['--jwks', file];
    }
    const { code, out } = await runDoctor(token, extra);
    const expected = await gatewayAnswer(token, testCase.jwks ?? issuer.jwks);
    expect(expected.code).not.toBe('accepted');
    expect(verdict(out)).toEqual(expected);
    expect(code).toBe(EXIT.failed);
    expect(firstFailure(out).endsWith(`→ ${expected.code}`)).toBe(true);
    expect(out.split('\n').filter((line) => line.startsWith('✗'))).toHaveLength(1);
    expect(out).not.toContain(token);
  });

  it('covers every rejection code of the verifier in its table', () => {
    const codes = new Set(CODES.map((testCase) => testCase.name));
    for (const code of Object.keys(AUTH_ERROR_CODES)) {
      if (['missing_token', 'invalid_request', 'issuer_suspended', 'key_revoked'].includes(code)) continue;
      expect(codes, code).toContain(code);
    }
  });

  it.each<[string, () => Promise<string>, readonly string[]]>([
    [
      "the audience near miss, as the verifier's hint says it",
      () => issuer.token({ aud: `${AUD}/` }),
      ['✗ aud', `"${AUD}/" differs from "${AUD}" only by a trailing slash`],
    ],
    [
      'the issuer near miss',
      () => issuer.token({ iss: `${ISS}/`, sub: `${ISS}/` }),
      ['✗ iss', `the registered issuer is "${ISS}". "${ISS}" differs from it only by a trailing slash`],
    ],
    ["the kids held against the token's", () => issuer.token({}, { kid: 'retired-2029' }), ['✗ kid', '"retired-2029"', 'are "test-key"']],
    ['an expiry in milliseconds', () => issuer.token({ expt: NOW }), ['✗ lifetime', 'looks like milliseconds']],
    [
      'an expiry not after the start, naming both',
      () => issuer.token({ iat: NOW_S - 10, nbf: NOW_S + 20, expt: NOW_S - 20 }),
      ['✗ lifetime', '"expt" is 2030-01-01T11:59:40Z', 'not after "nbf"', 'valid at no moment'],
    ],
    ['a missing expiry, naming expt and exp', () => issuer.token({ expt: undefined, exp: undefined }), ['✗ expiry', '"expt"', '"exp"']],
  ])('shows %s on the failing line', async (_name, token, shows) => {
    const failing = firstFailure((await runDoctor(await token())).out);
    for (const text of shows) expect(failing).toContain(text);
  });

  it('refuses a JWKS that repeats a member name, naming it, as the verifier does', async () => {
    const text = JSON.stringify(issuer.jwks).replace('"n":', '"n":"AQAB","n":');
    const file = join(directory, 'repeated.json');
    await writeFile(file, text);
    const { code, out } = await runDoctor(await issuer.token(), ['--jwks', file]);
    expect(code).toBe(EXIT.failed);
    expect(firstFailure(out)).toMatch(/^✗ jwks .*repeats the member keys\[0\]\.n.*→ jwks_unavailable$/);
  });

  it.each([
    ['--entry', () => ['--entry', entryFile]],
    ['--issuer and --product', () => ['--issuer', ISS, '--product', 'acme']],
  ])('names the --jwks file, not a URL, when it holds no JWKS (with %s)', async (_form, gateway) => {
    const file = join(directory, 'not-a-jwks.txt');
    await writeFile(file, 'eyJhbGciOi.not.json');
    const io = captureIo();
    const args = ['doctor', await issuer.token(), ...gateway(), '--jwks', file, '--audience', AUD, '--now', String(NOW_S)];
    expect(await runCli(args, io, [doctor])).toBe(EXIT.failed);
    const failing = firstFailure(io.out());
    expect(failing).toMatch(/^✗ jwks .*→ jwks_unavailable$/);
    expect(failing).toContain(JSON.stringify(file));
    expect(failing).not.toMatch(/\.well-known|\.invalid/);
  });

  it('names the key rule each ignored JWKS entry broke: a set of one 1024-bit key holds no usable key', async () => {
    const weak = await generateTestKey({ kid: 'test-key', modulusLength: 1024 });
    const file = join(directory, 'weak.json');
    await writeFile(file, JSON.stringify({ keys: [weak.publicJwk] }));
    const { code, out } = await runDoctor(await issuer.token(), ['--jwks', file]);
    expect(code).toBe(EXIT.failed);
    expect(firstFailure(out)).toMatch(/^✗ jwks .*: 0 usable key\(s\); 1 entry ignored: "test-key" modulus of 1024 bits, under 2048$/);
  });

  it('escapes what a JWKS says: a kid holding terminal escapes and bidi controls is printed as escapes', async () => {
    const kid = 'k\u001b]0;pwned\u0007\u202e\u009b2J';
    const hostile = await createTestIssuer({ issuer: ISS, audience: AUD, product: 'acme', now: () => NOW, kid });
    const file = join(directory, 'hostile-kid.json');
    await writeFile(file, JSON.stringify(hostile.jwks));
    const { code, out } = await runDoctor(await hostile.token(), ['--jwks', file]);
    expect(code).toBe(EXIT.ok);
    expect(out).toContain('"k\\u001b]0;pwned\\u0007\\u202e\\u009b2J"');
    expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
  });

  it('escapes what a token says on the failing line', async () => {
    const { out } = await runDoctor(await issuer.token({ aud: `https://x.test/\u001b[2J\u2028${'/'.repeat(4000)}` }));
    expect(firstFailure(out)).toContain('\\u001b[2J\\u2028');
    expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/);
  });

  it("downloads the JWKS with the verifier's fetcher: reading stops at 256 KiB, whatever the body", async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 65_536;
        controller.enqueue(new Uint8Array(65_536).fill(0x20));
      },
    });
    const command = createDoctorCommand({
      fetch: async () => new Response(endless, { headers: { 'content-type': 'application/json' } }),
    });
    const io = captureIo();
    const code = await runCli(['doctor', await issuer.token(), '--entry', entryFile, '--audience', AUD, '--now', String(NOW_S)], io, [
      command,
    ]);
    expect(code).toBe(EXIT.failed);
    expect(firstFailure(io.out())).toContain('larger than 262144 bytes');
    expect(pulled).toBeLessThan(1024 * 1024);
  });

  it('follows no redirect for the JWKS, and says so, as the verifier does', async () => {
    const command = createDoctorCommand({
      fetch: async () => new Response(null, { status: 302, headers: { location: 'https://auth.acme.example/other.json' } }),
    });
    const io = captureIo();
    const code = await runCli(['doctor', await issuer.token(), '--entry', entryFile, '--audience', AUD, '--now', String(NOW_S)], io, [
      command,
    ]);
    expect(code).toBe(EXIT.failed);
    expect(firstFailure(io.out())).toMatch(/^✗ jwks .*a redirect: redirects are not followed.*→ jwks_unavailable$/);
  });

  it('refuses a plain-http --jwks off loopback, as the registry does', async () => {
    const io = captureIo();
    expect(
      await runCli(
        ['doctor', await issuer.token(), '--entry', entryFile, '--jwks', 'http://jwks.example/keys.json', '--audience', AUD],
        io,
        [doctor],
      ),
    ).toBe(EXIT.usage);
    expect(io.err()).toContain('jwksUri must use https:');
  });

  it('shows each time claim as a date and says when one looks like milliseconds', async () => {
    const { out } = await runDoctor(await issuer.token({ expt: NOW }));
    expect(out).toContain(`✓ expt         ${NOW} = +061972-08-08T00:00:00Z (in 21893584 d 12 h; looks like milliseconds`);
    expect(out).toContain('looks like milliseconds: read as seconds/1000 it is 2030-01-01T12:00:00Z');
  });

  it('refuses a --jwks file it cannot read as a usage mistake', async () => {
    const io = captureIo();
    expect(
      await runCli(
        ['doctor', await issuer.token(), '--entry', entryFile, '--jwks', join(directory, 'missing.json'), '--audience', AUD],
        io,
        [doctor],
      ),
    ).toBe(EXIT.usage);
    expect(io.err()).toContain('cannot read --jwks');
  });

  it('refuses a --token-file over 1 MiB as a usage mistake (exit 2), naming the file and the limit', async () => {
    const big = join(directory, 'big-token.txt');
    await writeFile(big, 'a'.repeat(1_048_577));
    const io = captureIo();
    const code = await runCli(['doctor', '--token-file', big, '--entry', entryFile, '--jwks', jwksFile, '--audience', AUD], io, [doctor]);
    expect(code).toBe(EXIT.usage);
    expect(io.err()).toContain(`--token-file "${big}" holds more than 1048576 bytes`);
    expect(io.out()).toBe('');
  });

  it('reads standard input no further than 1 MiB (an endless pipe is refused, not read whole)', async () => {
    let pulled = 0;
    async function* endless() {
      for (;;) {
        pulled += 1;
        yield Buffer.alloc(65_536, 0x61);
      }
    }
    const error: unknown = await readProcessStdin(endless()).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'usage' });
    expect((error as Error).message).toContain('standard input holds more than 1048576 bytes');
    expect(pulled).toBe(17);
  });

  it.each([
    ['empty', '', 'empty (0 bytes)'],
    ['not JSON', '{"issuer":', 'not JSON'],
  ])('refuses an --entry file that is %s (exit 2), saying what it holds and what to give', async (_case, text, found) => {
    const file = join(directory, `entry-${found.length}.json`);
    await writeFile(file, text);
    const io = captureIo();
    const code = await runCli(['doctor', 'x.y.z', '--entry', file, '--audience', AUD], io, [doctor]);
    expect(code).toBe(EXIT.usage);
    expect(io.err()).toContain(`--entry "${file}": ${found}; give one registry entry`);
  });

  it('names standard input, read for want of a token argument, when it holds no token (exit 2)', async () => {
    const command = createDoctorCommand({ readStdin: async () => '', stdinIsTerminal: false });
    const io = captureIo();
    const code = await runCli(['doctor', '--entry', entryFile, '--jwks', jwksFile, '--audience', AUD], io, [command]);
    expect(code).toBe(EXIT.usage);
    expect(io.err()).toContain('standard input (read as no token argument was given) holds no token (empty)');
  });

  it('names the --token-file that holds no token (exit 2)', async () => {
    const empty = join(directory, 'empty-token.txt');
    await writeFile(empty, '  \n');
    const io = captureIo();
    const code = await runCli(['doctor', '--token-file', empty, '--entry', entryFile, '--jwks', jwksFile, '--audience', AUD], io, [doctor]);
    expect(code).toBe(EXIT.usage);
    expect(io.err()).toContain(`--token-file "${empty}" holds no token (empty)`);
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
    const code = await runCli(['doctor', '-', '--entry', entryFile, '--jwks', jwksFile, '--audience', AUD, '--now', String(NOW_S)], io, [
      command,
    ]);
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
      expect(io.out()).toContain(`✓ jwks         "${server.url}": 1 usable key(s), kids "test-key"`);
      expect(code).toBe(EXIT.ok);
    } finally {
      await served.close();
    }
  });

  it('builds the entry from --issuer, --product and --jwks', async () => {
    const io = captureIo();
    const args = [
      'doctor',
      await issuer.token(),
      '--issuer',
      ISS,
      '--product',
      'acme',
      '--jwks',
      jwksFile,
      '--audience',
      AUD,
      '--now',
      String(NOW_S),
    ];
    expect(await runCli(args, io, [doctor])).toBe(EXIT.ok);
  });

  it.each([
    [['--entry', 'x.json'], '--audience is required'],
    [['--audience', AUD, '--issuer', ISS, '--jwks', 'j.json'], '--product is required without --entry'],
    [['--audience', AUD, '--entry', 'x.json', '--product', 'acme'], '--product cannot be combined with --entry'],
    [['--audience', AUD, '--bogus'], 'unknown option "--bogus"'],
    [
      ['--audience', AUD, '--issuer', ISS, '--product', 'acme', '--jwks', 'j.json', '--now', '99999999999999'],
      '--now must be an ISO 8601 date or seconds since the epoch, got "99999999999999"',
    ],
  ])('exits 2 on a usage mistake: %j', async (args, message) => {
    const io = captureIo();
    expect(await runCli(['doctor', 'a.b.c', ...args], io, [doctor])).toBe(EXIT.usage);
    expect(io.err()).toContain(message);
  });

  it.each([
    ['--audience', ['--entry', 'x.json'], '--audience https://'],
    ['--product', ['--audience', AUD, '--issuer', ISS, '--jwks', 'j.json'], '--product acme'],
  ])('takes doctor without %s as a usage mistake, naming none found and an example', async (option, args, example) => {
    const io = captureIo();
    expect(await runCli(['doctor', 'a.b.c', ...args], io, [doctor])).toBe(EXIT.usage);
    expect(io.err()).toContain(`${option} is required`);
    expect(io.err()).toContain('got none');
    expect(io.err()).toContain(example);
  });

  it('refuses a registry entry the gateway would not accept, naming the field', async () => {
    const file = join(directory, 'bad-entry.json');
    await writeFile(file, JSON.stringify({ ...ENTRY, jwksUri: 'http://auth.acme.example/jwks.json' }));
    const io = captureIo();
    expect(await runCli(['doctor', 'a.b.c', '--entry', file, '--audience', AUD], io, [doctor])).toBe(EXIT.usage);
    expect(io.err()).toContain('jwksUri must use https:');
  });
});

describe('doctor screens the JWKS address as the gateway does', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  async function doctorWith(jwks: string, extra: readonly string[] = [], command = doctor) {
    const io = captureIo();
    const code = await runCli(
      ['doctor', await issuer.token(), '--entry', entryFile, '--jwks', jwks, ...extra, '--audience', AUD, '--now', String(NOW_S)],
      io,
      [command],
    );
    return { code, out: io.out(), err: io.err() };
  }

  it('refuses a --jwks at the cloud metadata address, naming the host, the rule and --allow-jwks-host (exit 2)', async () => {
    const { code, err } = await doctorWith('https://169.254.169.254/latest/meta-data/');
    expect(code).toBe(EXIT.usage);
    expect(err).toContain('"169.254.169.254" is a cloud metadata service (169.254.169.254/32; rule metadata)');
    expect(err).toContain('--allow-jwks-host "169.254.169.254"');
  });

  it('a --jwks name that resolves to a private address is a ✗ jwks line naming the address and the rule (resolver stub)', async () => {
    stubResolver().set('jwks.rebind.example', ['10.0.0.7']);
    const { code, out } = await doctorWith('https://jwks.rebind.example/jwks.json');
    expect(code).toBe(EXIT.failed);
    expect(firstFailure(out)).toMatch(
      /^✗ jwks .*"jwks\.rebind\.example" resolves to "10\.0\.0\.7", a private address \(10\.0\.0\.0\/8; rule private\).*→ jwks_unavailable$/,
    );
  });

  it('--allow-jwks-host lets a named host through, to the registry and to the download', async () => {
    const served = createDoctorCommand({ fetch: async () => Response.json(issuer.jwks) });
    const { code, out } = await doctorWith('https://10.0.0.7/jwks.json', ['--allow-jwks-host', '10.0.0.7'], served);
    expect(code).toBe(EXIT.ok);
    expect(out).toContain('Accepted.');
  });

  it('refuses an --allow-jwks-host that is not a bare host (exit 2)', async () => {
    const { code, err } = await doctorWith('https://10.0.0.7/jwks.json', ['--allow-jwks-host', 'https://10.0.0.7/']);
    expect(code).toBe(EXIT.usage);
    expect(err).toContain('paygate-auth doctor: --allow-jwks-host must be a bare host name or IP address');
    expect(err).toContain('got "https://10.0.0.7/"');
    expect(err).not.toContain('paygate-auth doctor: paygate-auth:');
  });
});

describe('doctor when the JWKS host goes silent (it takes the connection, then answers nothing)', () => {
  let jwksServer: Server;
  let proxy: TcpProxy;

  beforeAll(async () => {
    jwksServer = createServer((_request, response) => response.end(JSON.stringify(issuer.jwks)));
    await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
    proxy = await startProxy((jwksServer.address() as { port: number }).port);
    proxy.silence();
  });

  afterAll(async () => {
    await proxy.close();
    await new Promise((resolve) => jwksServer.close(resolve));
  });

  it('fails (exit 1) within --jwks-timeout, its ✗ line naming the host, the bound and the option', async () => {
    const started = performance.now();
    const { code, out } = await runDoctor(await issuer.token(), [
      '--jwks',
      `http://127.0.0.1:${proxy.port}/keys.json`,
      '--jwks-timeout',
      '1',
    ]);
    const elapsed = performance.now() - started;
    expect(code).toBe(EXIT.failed);
    const failure = firstFailure(out);
    expect(failure).toContain(`127.0.0.1:${proxy.port}`);
    expect(failure).toContain('within 1 s');
    expect(failure).toContain('--jwks-timeout');
    expect(failure).toMatch(/→ jwks_unavailable$/);
    // The bound is 1 s; the margin keeps it below the gateway's default of 5 s, which must not be what ended it.
    expect(elapsed).toBeLessThan(1000 + LOADED_MARGIN_MS);
  });

  it.each(['0', '121', '1.5'])('refuses --jwks-timeout %s naming the range 1 to 120 and the text given', async (value) => {
    const { code, err } = await runDoctor(await issuer.token(), [
      '--jwks',
      `http://127.0.0.1:${proxy.port}/keys.json`,
      '--jwks-timeout',
      value,
    ]);
    expect(code).toBe(EXIT.usage);
    expect(err).toContain(`--jwks-timeout must be a whole number of seconds from 1 to 120, got "${value}"`);
  });
});
