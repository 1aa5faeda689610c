/**
 * base64url (RFC 4648 §5, no padding) decoding, with Node's `Buffer` as a fast path and a portable
 * decoder elsewhere. {@link decodeBase64Url} and {@link decodeBase64UrlText} only decode (callers
 * check the alphabet first); {@link screenBase64Url} with the `Checked` decoders checks it while
 * decoding, which spares a token a scan of every character.
 *
 * @module paygate-auth
 */

interface NodeBytes extends Uint8Array {
  write(text: string, offset: number, length: number, encoding: 'base64url' | 'latin1'): number;
  toString(): string;
  toString(encoding: 'utf8', start: number, end: number): string;
  // Node's per-encoding methods behind write() and toString(), without their argument handling.
  base64urlWrite?(text: string, offset: number, length: number): number;
  latin1Write?(text: string, offset: number, length: number): number;
  utf8Slice?(start: number, end: number): string;
}
interface BufferStatic {
  from(value: string, encoding: 'latin1'): Uint8Array;
  byteLength(value: string, encoding: 'utf8'): number;
  allocUnsafe(size: number): NodeBytes;
  allocUnsafeSlow(size: number): NodeBytes;
}

const NodeBuffer = (globalThis as { Buffer?: BufferStatic }).Buffer;
/**
 * `true` where Buffers have `base64urlWrite`, `latin1Write` and `utf8Slice` (Node): on a path run
 * for every token, calling them directly saves write()'s and toString()'s encoding dispatch.
 */
const DIRECT = ((probe) =>
  probe !== undefined &&
  typeof probe.base64urlWrite === 'function' &&
  typeof probe.latin1Write === 'function' &&
  typeof probe.utf8Slice === 'function')(NodeBuffer?.allocUnsafe(0));
const utf8 = new TextDecoder();
/** Reused for text segments, which are decoded and turned into a string at once (never kept). */
let scratch: NodeBytes | undefined;
/** Size of {@link scratch}; a longer segment gets a buffer of its own. */
const SCRATCH_BYTES = 16_384;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const LOOKUP = new Uint8Array(128).fill(255);
for (let index = 0; index < ALPHABET.length; index += 1) LOOKUP[ALPHABET.charCodeAt(index)] = index;

/** Only base64url characters, no padding, and a length that can encode whole bytes. */
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** `true` when `text` is unpadded base64url of whole bytes. */
export function isBase64Url(text: string): boolean {
  return text.length % 4 !== 1 && BASE64URL.test(text);
}

function decodePortable(text: string): Uint8Array {
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let value = 0;
  let offset = 0;
  for (let index = 0; index < text.length; index += 1) {
    value = (value << 6) | (LOOKUP[text.charCodeAt(index)] as number);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[offset] = (value >> bits) & 0xff;
      offset += 1;
    }
  }
  return out;
}

/** Room for `size` bytes of text that is turned into a string at once: {@link scratch} when it fits. */
function textBytes(buffers: BufferStatic, size: number): NodeBytes {
  if (size > SCRATCH_BYTES) return buffers.allocUnsafe(size);
  scratch ??= buffers.allocUnsafeSlow(SCRATCH_BYTES);
  return scratch;
}

/** Bytes that `length` base64url characters (no padding) encode. */
function decodedLength(length: number): number {
  return Math.floor((length * 3) / 4);
}

/**
 * `true` where Node's decoder writes fewer bytes than a text's length promises whenever the text
 * holds an ASCII character outside its alphabet (it skips such characters, or stops at `=`).
 * Its alphabet is base64url's plus `+` and `/`, which {@link screenBase64Url} excludes; and it
 * reads a character above U+00FF by its low byte, so the screen admits ASCII only. Probed once
 * here, for every ASCII character, in each position of a 4-character group.
 */
const DECODER_FINDS_STRAYS = ((): boolean => {
  if (!DIRECT || NodeBuffer === undefined) return false;
  const out = NodeBuffer.allocUnsafe(8);
  for (let code = 0; code < 128; code += 1) {
    const character = String.fromCharCode(code);
    if (LOOKUP[code] !== 255 || character === '+' || character === '/') continue;
    for (let position = 0; position < 4; position += 1) {
      const text = `${'AAAA'.slice(0, position)}${character}${'AAAAAAA'.slice(position)}`;
      if (out.base64urlWrite!(text, 0, 8) >= 6) return false;
    }
  }
  return true;
})();

/**
 * A first, cheap look at `text` (a token, dots and all): `false` when it certainly holds a
 * character outside base64url and `.`. `true` means the `Checked` decoders will find any that
 * remain in a segment (they answer `undefined`). Where Node's decoder can find them, the screen
 * is two memchr-like searches and a length count; elsewhere it passes everything and the
 * decoders match each segment against the alphabet.
 */
export function screenBase64Url(text: string): boolean {
  if (!DECODER_FINDS_STRAYS) return true;
  return (NodeBuffer as BufferStatic).byteLength(text, 'utf8') === text.length && !text.includes('+') && !text.includes('/');
}

/**
 * The bytes of one segment of a text that passed {@link screenBase64Url}; `undefined` when the
 * segment is not unpadded base64url of whole bytes.
 */
export function decodeBase64UrlChecked(segment: string): Uint8Array | undefined {
  if (segment.length % 4 === 1) return undefined;
  if (!DECODER_FINDS_STRAYS) return BASE64URL.test(segment) ? decodeBase64Url(segment) : undefined;
  const out = (NodeBuffer as BufferStatic).allocUnsafe(decodedLength(segment.length));
  return out.base64urlWrite!(segment, 0, out.length) === out.length ? out : undefined;
}

/**
 * The UTF-8 text of one segment of a text that passed {@link screenBase64Url}; `undefined` when
 * the segment is not unpadded base64url of whole bytes.
 */
export function decodeBase64UrlTextChecked(segment: string): string | undefined {
  if (segment.length % 4 === 1) return undefined;
  if (!DECODER_FINDS_STRAYS) return BASE64URL.test(segment) ? decodeBase64UrlText(segment) : undefined;
  const size = decodedLength(segment.length);
  const bytes = textBytes(NodeBuffer as BufferStatic, size);
  return bytes.base64urlWrite!(segment, 0, size) === size ? bytes.utf8Slice!(0, size) : undefined;
}

/** Decodes base64url to bytes. The input must already satisfy {@link isBase64Url}. */
export function decodeBase64Url(text: string): Uint8Array {
  if (!NodeBuffer) return decodePortable(text);
  // allocUnsafe + write: half the cost of Buffer.from(text, 'base64url'), which measures first.
  const out = NodeBuffer.allocUnsafe(decodedLength(text.length));
  const written = DIRECT ? out.base64urlWrite!(text, 0, out.length) : out.write(text, 0, out.length, 'base64url');
  return written === out.length ? out : out.subarray(0, written);
}

/** Decodes base64url to a UTF-8 string. The input must already satisfy {@link isBase64Url}. */
export function decodeBase64UrlText(text: string): string {
  if (!NodeBuffer) return utf8.decode(decodePortable(text));
  const size = decodedLength(text.length);
  const bytes = textBytes(NodeBuffer, size);
  if (DIRECT) return bytes.utf8Slice!(0, bytes.base64urlWrite!(text, 0, size));
  return bytes.toString('utf8', 0, bytes.write(text, 0, size, 'base64url'));
}

/** The bytes of an ASCII string (the JWS signing input), or of its first `length` characters. */
export function asciiBytes(text: string, length = text.length): Uint8Array {
  if (NodeBuffer) {
    const out = NodeBuffer.allocUnsafe(length);
    if (DIRECT) out.latin1Write!(text, 0, length);
    else out.write(text, 0, length, 'latin1');
    return out;
  }
  const out = new Uint8Array(length);
  for (let index = 0; index < length; index += 1) out[index] = text.charCodeAt(index);
  return out;
}

/** Encodes bytes as unpadded base64url. */
export function encodeBase64Url(bytes: Uint8Array): string {
  let out = '';
  let index = 0;
  for (; index + 2 < bytes.length; index += 3) {
    const n = ((bytes[index] as number) << 16) | ((bytes[index + 1] as number) << 8) | (bytes[index + 2] as number);
    out += ALPHABET[(n >> 18) & 63]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  const rest = bytes.length - index;
  if (rest === 1) {
    const n = (bytes[index] as number) << 16;
    out += ALPHABET[(n >> 18) & 63]! + ALPHABET[(n >> 12) & 63]!;
  } else if (rest === 2) {
    const n = ((bytes[index] as number) << 16) | ((bytes[index + 1] as number) << 8);
    out += ALPHABET[(n >> 18) & 63]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]!;
  }
  return out;
}
