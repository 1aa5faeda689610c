/**
 * Identifiers of payment links: UUIDs, and the unguessable code of the pay-page URL.
 */
import { encodeBase64Url, quote } from '../internal/index.js';

/** Random bytes in a link code: 192 bits, above the 128 the contract requires. */
export const LINK_CODE_BYTES = 24;

/** Where ids come from; replace it for deterministic tests, never with a weaker source in production. */
export interface IdGenerator {
  /** A new UUID (the link's `id`, a new shopper's id); anything else fails the request. */
  uuid(): string;
  /** A new link code for `payment_url`: base64url, at least 128 random bits (22 characters). */
  linkCode(): string;
}

/** The members of Web Crypto used here. */
interface RandomSource {
  getRandomValues<T extends Uint8Array>(array: T): T;
  randomUUID(): string;
}

function webCrypto(): RandomSource {
  const crypto = (globalThis as { crypto?: RandomSource }).crypto;
  if (crypto === undefined || typeof crypto.getRandomValues !== 'function' || typeof crypto.randomUUID !== 'function') {
    throw new TypeError('paygate-auth/payment-links needs globalThis.crypto (getRandomValues, randomUUID)');
  }
  return crypto;
}

/** Link codes drawn from the CSPRNG at once: one call per this many codes, as Node draws its UUIDs. */
const CODES_PER_DRAW = 64;

/** Random bytes drawn and not yet used (each byte is used once), and where the unused ones start. */
let drawn = new Uint8Array(0);
let unused = 0;

/**
 * A random code: {@link LINK_CODE_BYTES} bytes from the platform's CSPRNG, base64url (32
 * characters). The bytes are drawn for {@link CODES_PER_DRAW} codes at once (a draw per code was
 * 5 % of a link's CPU in `npm run bench:fleet:links`), each byte used for one code only, then zeroed.
 */
export function randomLinkCode(): string {
  if (unused + LINK_CODE_BYTES > drawn.length) {
    drawn = webCrypto().getRandomValues(new Uint8Array(LINK_CODE_BYTES * CODES_PER_DRAW));
    unused = 0;
  }
  const bytes = drawn.subarray(unused, unused + LINK_CODE_BYTES);
  unused += LINK_CODE_BYTES;
  const code = encodeBase64Url(bytes);
  bytes.fill(0);
  return code;
}

/** The default {@link IdGenerator}: `crypto.randomUUID()` and {@link randomLinkCode}. */
export const randomIds: IdGenerator = Object.freeze({
  uuid: () => webCrypto().randomUUID(),
  linkCode: randomLinkCode,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `true` for a UUID in its canonical 8-4-4-4-12 hexadecimal form. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

/** What {@link IdGenerator.linkCode} must return: base64url, 22 characters (128 bits) or more. */
const LINK_CODE = /^[A-Za-z0-9_-]{22,}$/;

function badId(call: string, rule: string, value: unknown): TypeError {
  const found = typeof value === 'string' ? quote(value) : String(value);
  return new TypeError(`createPaymentLinkHandler: ${call} must return ${rule}, got ${found}: fix the ids given`);
}

/**
 * `ids.uuid()`, checked: a link's id that is no UUID could never be read back (`GET` and a replay
 * take UUIDs only).
 * @throws {TypeError} naming the call and the value it returned.
 */
export function newUuid(ids: IdGenerator): string {
  const value: unknown = ids.uuid();
  if (!isUuid(value)) throw badId('ids.uuid()', 'a UUID', value);
  return value;
}

/**
 * `ids.linkCode()`, checked: the last segment of `payment_url`, so URL-safe, and long enough to hold
 * 128 random bits.
 * @throws {TypeError} naming the call and the value it returned.
 */
export function newLinkCode(ids: IdGenerator): string {
  const value: unknown = ids.linkCode();
  if (typeof value !== 'string' || !LINK_CODE.test(value)) {
    throw badId('ids.linkCode()', 'at least 22 base64url characters (128 bits)', value);
  }
  return value;
}
