import { beforeAll, describe, expect, test } from 'vitest';
import { MIN_MODULUS_BITS, RSA_ALGORITHMS } from '../../src/index.js';
import { rejectReason, selectUsableKeys } from '../../src/core/jwk.js';
import { type PublishedJwk, generateTestKey } from '../../src/testing/index.js';

const RS256: ReadonlySet<string> = new Set(['RS256']);

let good: PublishedJwk;
let other: PublishedJwk;
let small: PublishedJwk;

beforeAll(async () => {
  [good, other, small] = await Promise.all([
    generateTestKey({ kid: 'k-1' }).then((key) => key.publicJwk),
    generateTestKey({ kid: 'k-1' }).then((key) => key.publicJwk),
    generateTestKey({ kid: 'k-small', modulusLength: 1024 }).then((key) => key.publicJwk),
  ]);
});

/** `good` with `changes` applied; `undefined` removes a member. */
function variant(changes: Record<string, unknown>): Record<string, unknown> {
  const jwk: Record<string, unknown> = { ...good };
  for (const [member, value] of Object.entries(changes)) {
    if (value === undefined) delete jwk[member];
    else jwk[member] = value;
  }
  return jwk;
}

describe('the key rules: rejectReason', () => {
  test('a published RS256 signing key of 2048 bits is usable', () => {
    expect(rejectReason(good, RS256)).toBeNull();
  });

  test('a key without use or alg is usable (both are optional)', () => {
    expect(rejectReason(variant({ use: undefined, alg: undefined }), RS256)).toBeNull();
  });

  test.each([
    ['an EC key (key-type confusion)', { kty: 'EC' }],
    ['a symmetric "oct" key (HS256 with a published secret would let anyone sign)', { kty: 'oct', k: 'c2VjcmV0' }],
    ['kty in lower case (kty is case-sensitive)', { kty: 'rsa' }],
    ['no kty at all', { kty: undefined }],
  ])('ignores %s', (_name, changes) => {
    expect(rejectReason(variant(changes), RS256)).toBe('kty is not RSA');
  });

  test('ignores a key published for encryption (use "enc": one key must not serve two purposes)', () => {
    expect(rejectReason(variant({ use: 'enc' }), RS256)).toBe('use is not sig');
  });

  test.each([
    ['RS512', 'RS512'],
    ['PS256', 'PS256'],
    ['HS256 (algorithm substitution: the public key as an HMAC secret)', 'HS256'],
    ['none', 'none'],
  ])('ignores a key whose alg is %s when only RS256 is accepted (algorithm substitution), naming both', (_name, alg) => {
    expect(rejectReason(variant({ alg }), RS256)).toBe(`published for alg "${alg}", not one accepted ("RS256")`);
  });

  test('ignores a key whose alg is not a string', () => {
    expect(rejectReason(variant({ alg: 256 }), RS256)).toBe('alg is not a string');
  });

  test('quotes a published alg escaped and cut: it is JWKS text', () => {
    const reason = rejectReason(variant({ alg: `R\u001b[2J${'S'.repeat(200)}` }), RS256) ?? '';
    expect(reason).toContain('"R\\u001b[2J');
    expect(reason).not.toContain('\u001b');
    expect(reason.length).toBeLessThan(160);
  });

  test('accepts a key whose alg is one the verifier was configured to accept', () => {
    expect(rejectReason(variant({ alg: 'PS256' }), new Set(RSA_ALGORITHMS))).toBeNull();
  });

  test.each([
    ['missing', undefined],
    ['empty', ''],
    ['not a string', 7],
    ['longer than 256 characters', 'k'.repeat(257)],
  ])('ignores a key whose kid is %s (no token can name it, so none may fall back to it), saying so', (name, kid) => {
    expect(rejectReason(variant({ kid }), RS256)).toBe(`kid is ${name}`);
  });

  test('ignores a key whose key_ops exclude verify', () => {
    expect(rejectReason(variant({ key_ops: ['encrypt'] }), RS256)).toBe('key_ops excludes verify');
  });

  test.each([
    ['the string "sign"', 'sign'],
    ['the string "verify"', 'verify'],
    ['an object', { verify: true }],
    ['null', null],
  ])('ignores a key whose key_ops is %s, not an array (a malformed key_ops states no permitted use)', (_name, keyOps) => {
    expect(rejectReason(variant({ key_ops: keyOps }), RS256)).toBe('key_ops is not an array');
  });

  test.each(['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth'])(
    'ignores a key that publishes the private member "%s" (a leaked private key lets anyone sign)',
    (member) => {
      expect(rejectReason(variant({ [member]: 'AQAB' }), RS256)).toBe('private key material is published');
    },
  );

  test(`ignores a 1024-bit key (a modulus under ${MIN_MODULUS_BITS} bits is factorable: forged tokens)`, () => {
    expect(rejectReason(small, RS256)).toBe('modulus of 1024 bits, under 2048');
  });

  test('ignores a 1024-bit modulus padded with zero bytes to a 2048-bit encoding (the value counts, not its length)', () => {
    const n = Buffer.concat([Buffer.alloc(1), Buffer.from(small.n as string, 'base64url')]);
    expect(rejectReason(variant({ n: Buffer.concat([Buffer.alloc(128), n]).toString('base64url') }), RS256)).toBe(
      'modulus of 1024 bits, under 2048',
    );
  });

  test('ignores an even modulus (no RSA modulus is: two odd primes make it)', () => {
    const modulus = Buffer.from(good.n as string, 'base64url');
    modulus[modulus.length - 1] = (modulus[modulus.length - 1] as number) & 0xfe;
    expect(rejectReason(variant({ n: modulus.toString('base64url') }), RS256)).toBe('modulus is even');
  });

  test('ignores a modulus over 8192 bits (bounds the cost of one verification)', () => {
    expect(rejectReason(variant({ n: Buffer.alloc(1025, 0xff).toString('base64url') }), RS256)).toBe('modulus of 8200 bits, over 8192');
  });

  test.each([
    ['2047 bits, one under the minimum, is ignored (attack: a weaker key slipped in)', 256, 0x7f, 'modulus of 2047 bits, under 2048'],
    ['2048 bits, the minimum, is usable', 256, 0x80, null],
    ['8192 bits, the maximum, is usable', 1024, 0xff, null],
    [
      '8193 bits, one over the maximum, is ignored (attack: a key that makes each verification costly)',
      1025,
      0x01,
      'modulus of 8193 bits, over 8192',
    ],
  ])('a modulus of %s', (_name, bytes, first, reason) => {
    const modulus = Buffer.alloc(bytes, 0xff);
    modulus[0] = first;
    expect(rejectReason(variant({ n: modulus.toString('base64url') }), RS256)).toBe(reason);
  });

  test.each([
    ['n padded with "="', () => ({ n: `${good.n as string}=` })],
    ['n in standard base64', () => ({ n: `${good.n as string}+/` })],
    ['n not a string', () => ({ n: 12 })],
    ['e not a string', () => ({ e: 65537 })],
  ])('ignores a key with %s', (_name, changes) => {
    expect(rejectReason(variant(changes()), RS256)).toMatch(/is not base64url$/);
  });

  test.each([
    ['1 (every signature equals its padded message: anyone can forge)', 'AQ'],
    ['2 (even: not an RSA exponent)', 'Ag'],
    ['65536 (even)', 'AQAA'],
    ['empty', ''],
    ['over 2^32', 'AQAAAAE'],
  ])('ignores a key whose exponent is %s', (_name, e) => {
    expect(rejectReason(variant({ e }), RS256)).toBe('exponent is not an odd number from 3 to 2^32');
  });

  test('accepts the exponent 3', () => {
    expect(rejectReason(variant({ e: 'Aw' }), RS256)).toBeNull();
  });

  test('accepts the exponent 2^32 - 1, the largest of 32 bits (2^32 + 1, of 33 bits, is ignored above)', () => {
    expect(rejectReason(variant({ e: Buffer.from([0xff, 0xff, 0xff, 0xff]).toString('base64url') }), RS256)).toBeNull();
  });

  test('accepts a kid of exactly 256 characters (a token can name it; 257 is ignored above)', () => {
    expect(rejectReason(variant({ kid: 'k'.repeat(256) }), RS256)).toBeNull();
  });

  test.each([
    ['null', null],
    ['an array', []],
    ['a string', 'key'],
  ])('ignores an entry that is %s', (_name, entry) => {
    expect(rejectReason(entry, RS256)).toBe('not an object');
  });
});

describe('selectUsableKeys: the rest of the set still counts', () => {
  test('keeps the usable keys and counts the ignored ones', () => {
    const selection = selectUsableKeys([good, variant({ kid: 'k-enc', use: 'enc' }), small, null], RS256);
    expect([...selection.keys.keys()]).toEqual(['k-1']);
    expect(selection.ignored).toBe(3);
  });

  test('keeps only the members verification reads, frozen', () => {
    const key = selectUsableKeys([variant({ x5c: ['MIIB'], ext: true })], RS256).keys.get('k-1');
    expect(key).toEqual({ kty: 'RSA', kid: 'k-1', n: good.n, e: good.e, alg: 'RS256', use: 'sig' });
    expect(Object.isFrozen(key)).toBe(true);
  });

  test('ignores both keys when two different keys share a kid (an added entry cannot take over a kid)', () => {
    const selection = selectUsableKeys([good, other], RS256);
    expect(selection.keys.size).toBe(0);
    expect(selection.ignored).toBe(2);
  });

  test('ignores every key of an ambiguous kid, however many follow', () => {
    const selection = selectUsableKeys([good, other, good], RS256);
    expect(selection.keys.has('k-1')).toBe(false);
    expect(selection.ignored).toBe(3);
  });

  test('keeps one copy when the same key is listed twice under its kid', () => {
    const selection = selectUsableKeys([good, { ...good }], RS256);
    expect([...selection.keys.keys()]).toEqual(['k-1']);
    expect(selection.ignored).toBe(1);
  });

  test('says which entry broke which rule, naming a kid a token could carry', () => {
    const selection = selectUsableKeys([good, variant({ kid: 'k-enc', use: 'enc' }), small, variant({ kid: 7 })], RS256);
    expect(selection.reasons).toEqual([
      { kid: 'k-enc', reason: 'use is not sig' },
      { kid: 'k-small', reason: 'modulus of 1024 bits, under 2048' },
      { reason: 'kid is not a string' },
    ]);
  });

  test('names both keys of an ambiguous kid, and a key listed twice', () => {
    expect(selectUsableKeys([good, other], RS256).reasons).toEqual([
      { kid: 'k-1', reason: 'another key has the same kid' },
      { kid: 'k-1', reason: 'another key has the same kid' },
    ]);
    expect(selectUsableKeys([good, { ...good }], RS256).reasons).toEqual([{ kid: 'k-1', reason: 'the same key is listed twice' }]);
  });

  test('describes at most 20 ignored entries and counts the rest (a hostile JWKS cannot grow a report)', () => {
    const selection = selectUsableKeys(
      Array.from({ length: 1000 }, () => small),
      RS256,
    );
    expect(selection.ignored).toBe(1000);
    expect(selection.reasons).toHaveLength(20);
  });

  test.each([
    [20, 20],
    [21, 20],
  ])('of %i ignored entries, %i are described and all are counted', (count, described) => {
    const selection = selectUsableKeys(
      Array.from({ length: count }, () => small),
      RS256,
    );
    expect([selection.ignored, selection.reasons.length]).toEqual([count, described]);
  });

  test('an ignored entry does not make its kid ambiguous: the usable key under that kid stays', () => {
    const selection = selectUsableKeys([variant({ use: 'enc', n: other.n }), good], RS256);
    expect(selection.keys.get('k-1')?.n).toBe(good.n);
  });
});
