import fc from 'fast-check';
import { describe, expect, test, vi } from 'vitest';
import { decodeCanonicalBase64Url, encodeBase64Url } from '../../src/core/base64url.js';

describe('decodeCanonicalBase64Url: the one canonical spelling of some bytes, and nothing else', () => {
  test('every byte string round-trips through its canonical spelling', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const text = encodeBase64Url(bytes);
        expect(text).toBe(Buffer.from(bytes).toString('base64url'));
        expect(Buffer.from(decodeCanonicalBase64Url(text) ?? [])).toEqual(Buffer.from(bytes));
      }),
    );
  });

  test.each([
    ['non-zero trailing bits (2 of them)', 'QUJ'],
    ['non-zero trailing bits (4 of them)', 'QR'],
    ['padding', 'QQ=='],
    ['the standard alphabet "+"', 'a+8'],
    ['the standard alphabet "/"', 'a/8'],
    ['white space', 'QU JD'],
    ['a trailing newline', 'QUJD\n'],
    ['a length that cannot encode whole bytes', 'QUJDR'],
    ['a character outside ASCII', 'QUJ\u00e9'],
    ['a character above U+00FF', 'QUJ\u0141'],
    ['a dot', 'QU.D'],
  ])('%s is refused', (_name, text) => {
    expect(decodeCanonicalBase64Url(text)).toBeUndefined();
  });

  test('the empty string is the spelling of no bytes', () => {
    expect(decodeCanonicalBase64Url('')?.byteLength).toBe(0);
  });
});

describe('utf8Text: the same text on every runtime', () => {
  /** `utf8Text` as a runtime without Node's `Buffer` (Deno, workerd) loads it. */
  async function webUtf8Text(): Promise<(bytes: Uint8Array) => string> {
    vi.resetModules();
    vi.stubGlobal('Buffer', undefined);
    try {
      return (await import('../../src/core/base64url.js')).utf8Text;
    } finally {
      vi.unstubAllGlobals();
      vi.resetModules();
    }
  }

  test('without Buffer, a leading byte order mark is kept as Node keeps it (a header behind one is not JSON anywhere)', async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]);
    expect(Buffer.from(bytes).toString('utf8')).toBe('\ufeff{}');
    expect((await webUtf8Text())(bytes)).toBe('\ufeff{}');
  });
});
