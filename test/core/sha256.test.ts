/**
 * SHA-256 for the package's fingerprints and digests: Node's hash where node:crypto is reachable,
 * WebCrypto elsewhere, both giving the standard digest.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hex, sha256, sha256Hex } from '../../src/core/sha256.js';

/** FIPS 180-2's example: SHA-256 of "abc". */
const ABC = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';

afterEach(() => {
  vi.restoreAllMocks();
  vi.resetModules();
});

describe('sha256', () => {
  it('gives the standard digest of text, hashed as UTF-8', async () => {
    expect(await sha256Hex('abc')).toBe(ABC);
  });

  it('gives the same digest for the same bytes', async () => {
    expect(hex(await sha256(new TextEncoder().encode('abc')))).toBe(ABC);
  });

  it('hashes text beyond ASCII as its UTF-8 bytes', async () => {
    expect(await sha256Hex('é')).toBe(await sha256Hex(new Uint8Array([0xc3, 0xa9])));
  });

  it('hashes with WebCrypto, to the same digest, where node:crypto is not reachable', async () => {
    const lookup = vi.spyOn(process, 'getBuiltinModule').mockReturnValue(undefined as never);
    const fresh = await import('../../src/core/sha256.js');
    expect(await fresh.sha256Hex('abc')).toBe(ABC);
    expect(lookup).toHaveBeenCalledWith('node:crypto');
  });
});

describe('hex', () => {
  it('writes each byte as two lower-case digits', () => {
    expect(hex(new Uint8Array([0, 15, 255]))).toBe('000fff');
  });
});
