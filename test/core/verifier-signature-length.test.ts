import { describe, expect, test } from 'vitest';
import { outcome, useFixture } from '../support/fixture.js';

const fx = useFixture();

/** A token of the issuer whose signature segment is `bytes` bytes of 0x5a, canonically encoded. */
async function withSignatureOf(bytes: number): Promise<string> {
  const token = await fx.issuer.token();
  return `${token.slice(0, token.lastIndexOf('.') + 1)}${Buffer.alloc(bytes, 0x5a).toString('base64url')}`;
}

describe('a signature is checked against the modulus length before any engine sees it', () => {
  test.each([
    ['one byte short', 255],
    ['one byte long', 257],
    ['65,535 bytes', 65_535],
    ['65,536 bytes (one past a 16-bit length)', 65_536],
    ['65,537 bytes', 65_537],
    ['600,000 bytes', 600_000],
  ])('a signature %s is invalid_signature, one at a time and many at once, on every engine', async (_name, bytes) => {
    const token = await withSignatureOf(bytes);
    for (const crypto of ['node', 'webcrypto'] as const) {
      const verifier = fx.verifier({ crypto, maxTokenBytes: 1_048_576, cache: false });
      expect(await outcome(verifier.verify(token))).toBe('invalid_signature');
      const valid = await fx.issuer.token();
      // Several in flight together, a valid token among them: every one settles with its own answer.
      const answers = await Promise.all([token, valid, token, token, valid, token].map((one) => outcome(verifier.verify(one))));
      expect(answers).toEqual(['invalid_signature', 'ok', 'invalid_signature', 'invalid_signature', 'ok', 'invalid_signature']);
    }
  });
});
