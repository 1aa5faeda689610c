import { describe, expect, test } from 'vitest';
import { signRawToken } from '../../src/testing/index.js';
import { outcome, useFixture } from '../support/fixture.js';

const fx = useFixture();
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** `segment` with its last character replaced by the one of value `value`. */
function withLast(segment: string, value: number): string {
  return `${segment.slice(0, -1)}${ALPHABET[value]}`;
}

/** Bits after the last byte in the last character of an unpadded segment (0, 2 or 4). */
function trailingBits(segment: string): number {
  return [0, -1, 4, 2][segment.length % 4] as number;
}

/**
 * A validly signed token whose header and payload segments both end in a partial group (so both
 * have trailing bits), found by padding the header and the claims.
 */
async function tokenWithTrailingBits(): Promise<string> {
  for (let headerPad = 0; headerPad < 3; headerPad += 1) {
    for (let claimPad = 0; claimPad < 3; claimPad += 1) {
      const header = { alg: 'RS256', typ: 'JWT', kid: fx.issuer.signingKey.kid, pad: 'x'.repeat(headerPad) };
      const token = await signRawToken(fx.issuer.signingKey, header, fx.issuer.claims({ pad: 'y'.repeat(claimPad) }));
      const [encodedHeader = '', encodedPayload = ''] = token.split('.');
      if (trailingBits(encodedHeader) > 0 && trailingBits(encodedPayload) > 0) return token;
    }
  }
  throw new Error('no padding gave both segments trailing bits');
}

describe('canonical base64url only: a token has exactly one accepted spelling', () => {
  test('a 2048-bit signature has 16 spellings of its last character, and only the canonical one verifies', async () => {
    const token = await fx.issuer.token();
    const verifier = fx.verifier({ cache: false });
    const signature = token.slice(token.lastIndexOf('.') + 1);
    expect(trailingBits(signature)).toBe(4);
    const base = ALPHABET.indexOf(signature.slice(-1)) & ~0b1111;
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, bits) => outcome(verifier.verify(`${token.slice(0, -1)}${ALPHABET[base | bits]}`))),
    );
    expect(answers.filter((answer) => answer === 'ok')).toHaveLength(1);
    expect(answers.filter((answer) => answer === 'malformed_token')).toHaveLength(15);
    expect(answers[ALPHABET.indexOf(signature.slice(-1)) & 0b1111]).toBe('ok');
  });

  test.each([0, 1, 2])(
    'non-zero trailing bits in segment %i (header, payload, signature) are malformed_token (attack: a second spelling that sidesteps anything keyed on the token)',
    async (index) => {
      const token = await tokenWithTrailingBits();
      const verifier = fx.verifier({ cache: false });
      expect(await outcome(verifier.verify(token))).toBe('ok');
      const segments = token.split('.');
      const segment = segments[index] as string;
      segments[index] = withLast(segment, ALPHABET.indexOf(segment.slice(-1)) | 1);
      expect(await outcome(verifier.verify(segments.join('.')))).toBe('malformed_token');
    },
  );

  test.each([
    ['"+" for "-"', '-', '+'],
    ['"/" for "_"', '_', '/'],
  ])(
    'the standard base64 alphabet (%s) in a signature is malformed_token, though it decodes to the same bytes',
    async (_name, from, to) => {
      const verifier = fx.verifier({ cache: false });
      for (let attempt = 0; attempt < 20; attempt += 1) {
        const token = await fx.issuer.token({ attempt });
        const dot = token.lastIndexOf('.');
        const at = token.indexOf(from, dot);
        if (at < 0) continue;
        expect(await outcome(verifier.verify(`${token.slice(0, at)}${to}${token.slice(at + 1)}`))).toBe('malformed_token');
        return;
      }
      throw new Error(`no signature held ${from}`);
    },
  );

  test('a cached token does not make a second spelling of it acceptable', async () => {
    const token = await fx.issuer.token();
    const verifier = fx.verifier({ cacheAdmission: 'first-use' });
    expect(await outcome(verifier.verify(token))).toBe('ok');
    const last = ALPHABET.indexOf(token.slice(-1));
    expect(await outcome(verifier.verify(withLast(token, last ^ 1)))).toBe('malformed_token');
  });
});
