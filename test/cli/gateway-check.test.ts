/**
 * The gateway's check as lines (what `doctor` and the `issuers` pre-check run): for every code the
 * verifier can answer for a token, the ✗ line names the value the token (or the JWKS) had and the
 * value the gateway expected, from the verifier's own facts; the doctor prints the same line.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDoctorCommand } from '../../src/cli/doctor.js';
import { checkRegistry, gatewayCheck } from '../../src/cli/gateway-check.js';
import { runCli } from '../../src/cli/run-cli.js';
import { AUTH_ERROR_CODES, type AuthErrorCode, type Verifier } from '../../src/index.js';
import { type TestIssuer, type TestKey, createTestIssuer, generateTestKey } from '../../src/testing/index.js';
import { captureIo } from './cli-io.js';

const ISS = 'https://auth.acme.example';
const AUD = 'https://payments.example';
const NOW = Date.UTC(2030, 0, 1, 12, 0, 0);
const NOW_S = NOW / 1000;
const ENTRY = { issuer: ISS, jwksUri: 'https://auth.acme.example/.well-known/jwks.json', products: ['acme'] };

let issuer: TestIssuer;
let weak: TestKey;
let stranger: TestKey;
let directory: string;
let entryFile: string;

beforeAll(async () => {
  issuer = await createTestIssuer({ issuer: ISS, audience: AUD, product: 'acme', now: () => NOW });
  weak = await generateTestKey({ kid: 'test-key', modulusLength: 1024 });
  stranger = await generateTestKey({ kid: 'test-key' });
  directory = await mkdtemp(join(tmpdir(), 'paygate-gateway-check-'));
  entryFile = join(directory, 'entry.json');
  await writeFile(entryFile, JSON.stringify(ENTRY));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** A fact the ✗ line must hold: a text, or one made from the token. */
type Fact = string | ((token: string) => string);

interface Case {
  readonly name: string;
  readonly code: AuthErrorCode;
  readonly token: () => Promise<string>;
  /** The JWKS document (its text when a string), when not the issuer's. */
  readonly jwks?: () => unknown;
  /** An operator's call on the gateway's verifier before the check (not a doctor option). */
  readonly prepare?: (verifier: Verifier) => void;
  /** What the token (or its JWKS) had. */
  readonly found: readonly Fact[];
  /** What the gateway expected. */
  readonly expected: readonly Fact[];
}

const CASES: readonly Case[] = [
  {
    name: 'a token over maxTokenBytes',
    code: 'token_too_large',
    token: () => issuer.token({ tenant_name: 'x'.repeat(9000) }),
    found: [(token) => `at least ${token.length} bytes`],
    expected: ['maxTokenBytes is 8192'],
  },
  {
    name: 'two segments',
    code: 'malformed_token',
    token: async () => 'eyJhbGciOiJSUzI1NiJ9.e30',
    found: ['2 segments'],
    expected: ['a signed JWT has three'],
  },
  {
    name: 'alg RS512',
    code: 'unsupported_algorithm',
    token: () => issuer.token({}, { alg: 'RS512' }),
    found: ['"alg" is "RS512"'],
    expected: ['accepts "RS256"'],
  },
  {
    name: 'no kid',
    code: 'missing_kid',
    token: () => issuer.token({}, { kid: undefined }),
    found: ['"kid" is missing'],
    expected: ['1 to 256 characters'],
  },
  {
    name: 'typ JOSE',
    code: 'invalid_typ',
    token: () => issuer.token({}, { typ: 'JOSE' }),
    found: ['"typ" is "JOSE"'],
    expected: ['"JWT", "at+jwt"'],
  },
  {
    name: 'crit ["exp"]',
    code: 'unsupported_crit',
    token: () => issuer.token({}, { crit: ['exp'] }),
    found: ['"crit" names "exp"'],
    expected: ['no critical header parameter'],
  },
  {
    name: 'an iss with a trailing slash',
    code: 'unknown_issuer',
    token: () => issuer.token({ iss: `${ISS}/`, sub: `${ISS}/` }),
    found: [`"iss" is "${ISS}/"`],
    expected: [`the registered issuer is "${ISS}"`, 'differs from it only by a trailing slash'],
  },
  {
    name: 'a suspended issuer',
    code: 'issuer_suspended',
    token: () => issuer.token(),
    prepare: (verifier) => verifier.suspendIssuer(ISS),
    found: [`"${ISS}" is suspended`],
    expected: ['until resumeIssuer()'],
  },
  {
    name: 'a kid the JWKS does not list',
    code: 'unknown_key',
    token: () => issuer.token({}, { kid: 'retired-2029' }),
    found: ['"kid" is "retired-2029"'],
    expected: [`the usable keys held for "${ISS}"`, 'are "test-key"'],
  },
  {
    name: 'a kid whose key is 1024 bits',
    code: 'unknown_key',
    token: () => issuer.token(),
    jwks: () => ({ keys: [weak.publicJwk] }),
    found: ['"kid" is "test-key"', 'lists it, but it was ignored'],
    expected: ['modulus of 1024 bits, under 2048', 'are none'],
  },
  {
    name: 'a kid whose key is published for RS384, the token signed RS256',
    code: 'unknown_key',
    token: () => issuer.token(),
    jwks: () => ({ keys: [{ ...issuer.jwks.keys[0], alg: 'RS384' }] }),
    found: ['"kid" is "test-key"', 'published for alg "RS384"'],
    expected: ['not one accepted ("RS256")'],
  },
  {
    name: 'a revoked key',
    code: 'key_revoked',
    token: () => issuer.token(),
    prepare: (verifier) => verifier.revokeKey(ISS, 'test-key'),
    found: ['The key "test-key"'],
    expected: ['revoked with revokeKey()'],
  },
  {
    name: 'a token signed with another key under the same kid',
    code: 'invalid_signature',
    token: () => issuer.token({}, {}, { key: stranger }),
    found: ['The "RS256" signature'],
    expected: [`the key "test-key" of "${ISS}"`],
  },
  {
    name: 'expt as a string',
    code: 'invalid_claim',
    token: () => issuer.token({ expt: '300' }),
    found: ['"expt" is the string "300"'],
    expected: ['a NumericDate (seconds since the epoch'],
  },
  {
    name: 'no expiry',
    code: 'invalid_claim',
    token: () => issuer.token({ expt: undefined, exp: undefined }),
    found: ['carries neither "expt"', 'nor "exp"'],
    expected: ['one is required'],
  },
  {
    name: 'a tenant_ern of another shape',
    code: 'invalid_claim',
    token: () => issuer.token({ tenant_ern: 'ern:acme/tenant/t-1' }),
    found: ['"tenant_ern" is "ern:acme/tenant/t-1"'],
    expected: ['the shape "ern:<product>/tenants/<tenant-id>"', 'its parts after the product do not match'],
  },
  {
    name: 'a tenant_ern whose tenant id holds a space',
    code: 'invalid_claim',
    token: () => issuer.token({ tenant_ern: 'ern:acme/tenants/t 1' }),
    found: ['"tenant_ern" is "ern:acme/tenants/t 1"'],
    expected: ['"ern:<product>/tenants/<tenant-id>"', 'its <tenant-id> is not'],
  },
  {
    name: 'a user_ern of another shape',
    code: 'invalid_claim',
    token: () => issuer.token({ user_ern: 'ern:acme/tenants/t-1/user/u-9' }),
    found: ['"user_ern" is "ern:acme/tenants/t-1/user/u-9"'],
    expected: ['"ern:<product>/tenants/<tenant-id>/users/<user-id>"', '"//users/<user-id>"'],
  },
  {
    name: "a user_ern of another product than its tenant's",
    code: 'invalid_claim',
    token: () => issuer.token({ user_ern: 'ern:globex/tenants/users/u-9' }),
    found: ['"user_ern" is "ern:globex/tenants/users/u-9"'],
    expected: ['other than its tenant\'s, "acme"'],
  },
  {
    name: 'a scope with two spaces',
    code: 'invalid_claim',
    token: () => issuer.token({ scope: 'pay:processPayments  hub:subscribe' }),
    found: ['"scope" is the string "pay:processPayments  hub:subscribe"'],
    expected: ['scope tokens separated by single spaces'],
  },
  {
    name: 'an iss that is a number',
    code: 'invalid_claim',
    token: () => issuer.token({ iss: 7, sub: ISS }),
    found: ['"iss" is 7'],
    expected: ['it must be a string'],
  },
  {
    name: 'an expiry an hour ago',
    code: 'token_expired',
    token: () => issuer.token({ iat: NOW_S - 7200, expt: NOW_S - 3600 }),
    found: [`"expt" is 2030-01-01T11:00:00Z (${NOW_S - 3600})`, '3600 s before'],
    expected: ["this verifier's clock, 2030-01-01T12:00:00Z", 'clock tolerance 30 s'],
  },
  {
    name: 'an nbf an hour ahead',
    code: 'token_not_yet_valid',
    token: () => issuer.token({ nbf: NOW_S + 3600, expt: NOW_S + 7200 }),
    found: [`"nbf" is 2030-01-01T13:00:00Z (${NOW_S + 3600})`, '3600 s ahead'],
    expected: ["this verifier's clock, 2030-01-01T12:00:00Z", 'clock tolerance 30 s'],
  },
  {
    name: 'a lifetime of two days',
    code: 'token_lifetime_exceeded',
    token: () => issuer.token({ iat: NOW_S, expt: NOW_S + 172_800 }),
    found: ['is 172800 s (from 2030-01-01T12:00:00Z to 2030-01-03T12:00:00Z)'],
    expected: ['at most 86400 s is allowed'],
  },
  {
    name: 'another audience',
    code: 'audience_mismatch',
    token: () => issuer.token({ aud: 'https://payments.test' }),
    found: ['"aud" is "https://payments.test"'],
    expected: [`expects "${AUD}"`],
  },
  {
    name: 'a sub other than the iss',
    code: 'subject_mismatch',
    token: () => issuer.token({ sub: 'client-42' }),
    found: ['"sub" is "client-42"'],
    expected: [`must be exactly its "iss", "${ISS}"`],
  },
  {
    name: "another product's tenant",
    code: 'tenant_not_allowed',
    token: () => issuer.token({ tenant_ern: 'ern:globex/tenants/t-1' }),
    found: ['product "globex"'],
    expected: ['registered for "acme"'],
  },
  {
    name: 'a JWKS that is not JSON',
    code: 'jwks_unavailable',
    token: () => issuer.token(),
    jwks: () => '{"keys":',
    found: ['which failed (', 'not JSON'],
    expected: [`loaded from "${ENTRY.jwksUri}"`],
  },
  {
    name: 'no known scope',
    code: 'insufficient_scope',
    token: () => issuer.token({ scope: 'pay:refundEverything' }),
    found: ['grants "pay:refundEverything"'],
    expected: ['needs one of "pay:processPayments"'],
  },
];

/** The ✗ line among `text`'s lines. */
function failingLine(text: string): string {
  const failing = text.split('\n').filter((line) => line.startsWith('✗ ') && !line.startsWith('✗ jwks         "'));
  expect(failing).toHaveLength(1);
  return failing[0] as string;
}

function factsOf(testCase: Case, token: string): string[] {
  return [...testCase.found, ...testCase.expected].map((fact) => (typeof fact === 'string' ? fact : fact(token)));
}

function jwksBody(testCase: Case): Response {
  const document = testCase.jwks?.() ?? issuer.jwks;
  return typeof document === 'string'
    ? new Response(document, { headers: { 'content-type': 'application/json' } })
    : Response.json(document);
}

describe("gatewayCheck: the ✗ line names the value found and the value expected, from the verifier's facts", () => {
  it.each(CASES)('$code: $name', async (testCase) => {
    const token = await testCase.token();
    const lines: string[] = [];
    const check = gatewayCheck(
      {
        registry: checkRegistry([ENTRY]),
        audience: [AUD],
        now: NOW,
        fetch: async () => jwksBody(testCase),
        where: () => 'jwks.json',
      },
      (text) => lines.push(text),
    );
    testCase.prepare?.(check.verifier);
    const rejection = await check.check(token);
    expect(rejection?.error.code).toBe(testCase.code);
    const failing = failingLine(lines.join(''));
    expect(failing.endsWith(`  → ${testCase.code}`)).toBe(true);
    for (const fact of factsOf(testCase, token)) {
      expect(failing).toContain(fact);
      // The line is the verifier's own hint: the same facts reach logs and events.
      expect(rejection?.error.hint).toContain(fact);
    }
  });

  it('covers every code the verifier (and the scope policy) can answer for a token', () => {
    const covered = new Set(CASES.map((testCase) => testCase.code));
    const tokenless = new Set(['missing_token', 'invalid_request']);
    for (const code of Object.keys(AUTH_ERROR_CODES)) if (!tokenless.has(code)) expect(covered, code).toContain(code);
  });
});

describe('doctor prints the same ✗ line', () => {
  const doctor = createDoctorCommand();

  it.each(CASES.filter((testCase) => testCase.prepare === undefined))('$code: $name', async (testCase) => {
    const token = await testCase.token();
    const jwks = testCase.jwks?.() ?? issuer.jwks;
    const jwksFile = join(directory, `jwks-${testCase.name.replace(/\W+/g, '-')}.json`);
    await writeFile(jwksFile, typeof jwks === 'string' ? jwks : JSON.stringify(jwks));
    const io = captureIo();
    await runCli(['doctor', token, '--entry', entryFile, '--jwks', jwksFile, '--audience', AUD, '--now', String(NOW_S)], io, [doctor]);
    const failing = failingLine(io.out());
    expect(failing.endsWith(`  → ${testCase.code}`)).toBe(true);
    // The same facts; a --jwks file is named in place of the URL its answer stands in for.
    const where = (fact: string) => (fact === `loaded from "${ENTRY.jwksUri}"` ? `read from the file ${JSON.stringify(jwksFile)}` : fact);
    for (const fact of factsOf(testCase, token)) expect(failing).toContain(where(fact));
  });
});
