/**
 * EMSA-PKCS1-v1_5 (RFC 8017 §9.2), for verifying RS256/RS384/RS512 by comparison: the signature
 * is opened with the raw RSA public operation, and the result must equal, byte for byte, the
 * encoding of the message's digest. Nothing of the opened signature is parsed, so none of the
 * parsing flaws that let forgeries through (garbage after the digest, a short padding string, an
 * odd DigestInfo) can arise: RFC 8017 §8.2.2 verifies exactly this way.
 *
 * @module paygate-auth
 */

/** The hashes of RSASSA-PKCS1-v1_5 that JWS uses. */
export type Pkcs1Hash = 'sha256' | 'sha384' | 'sha512';

/** The DER of each hash's DigestInfo up to the digest itself (RFC 8017 §9.2, note 1). */
const DIGEST_INFO_PREFIX: Readonly<Record<Pkcs1Hash, readonly number[]>> = {
  sha256: [0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20],
  sha384: [0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02, 0x05, 0x00, 0x04, 0x30],
  sha512: [0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04, 0x40],
};

/** Bytes of each hash's digest. */
const DIGEST_BYTES: Readonly<Record<Pkcs1Hash, number>> = { sha256: 32, sha384: 48, sha512: 64 };

/**
 * The EMSA-PKCS1-v1_5 encoding for one modulus length and hash, `0x00 0x01 0xFF… 0x00
 * DigestInfo(digest)`: everything but the digest is the same for every message, so it is built
 * once per key and hash, and {@link Pkcs1Encoding.ofBinary} writes each message's digest into it.
 */
export class Pkcs1Encoding {
  readonly #bytes: Uint8Array;
  readonly #digestStart: number;

  /**
   * @throws {RangeError} when the modulus is too short to hold the encoding (RFC 8017: "intended
   *   encoded message length too short").
   */
  constructor(hash: Pkcs1Hash, modulusBytes: number) {
    const info = DIGEST_INFO_PREFIX[hash];
    const padding = modulusBytes - 3 - info.length - DIGEST_BYTES[hash];
    if (padding < 8) throw new RangeError(`A ${modulusBytes * 8}-bit modulus cannot hold an EMSA-PKCS1-v1_5 ${hash} encoding.`);
    this.#bytes = new Uint8Array(modulusBytes);
    this.#bytes[1] = 0x01;
    this.#bytes.fill(0xff, 2, 2 + padding);
    this.#bytes.set(info, 3 + padding);
    this.#digestStart = modulusBytes - DIGEST_BYTES[hash];
  }

  /** A copy of the encoding (with whichever digest was written last), for a thread that writes its own. */
  copy(): Uint8Array {
    return this.#bytes.slice();
  }

  /**
   * The encoding of `digest`, given as a binary string of one character per byte (`crypto.hash`'s
   * `'binary'` output: a short string costs the garbage collector less than a buffer with memory
   * of its own). Always the same array, rewritten by each call, so it must be used before the
   * next (a synchronous comparison).
   * @throws {RangeError} when `digest` is not of the hash's length.
   */
  ofBinary(digest: string): Uint8Array {
    const bytes = this.#bytes;
    const start = this.#digestStart;
    if (digest.length !== bytes.length - start) throw new RangeError('The digest is not of the hash\'s length.');
    for (let index = 0; index < digest.length; index += 1) bytes[start + index] = digest.charCodeAt(index);
    return bytes;
  }
}
