/**
 * Identifiers of payment links: UUIDs, and the unguessable code of the pay-page URL.
 */

/** Random bytes in a link code: 192 bits, above the 128 the contract requires. */
export const LINK_CODE_BYTES = 24;

/** Where ids come from; replace it for deterministic tests, never with a weaker source in production. */
export interface IdGenerator {
  /** A new UUID (the link's `id`, a new shopper's id). */
  uuid(): string;
  /** A new link code for `payment_url`: URL-safe, at least 128 random bits. */
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

/** A random code: {@link LINK_CODE_BYTES} bytes from the platform's CSPRNG, base64url (32 characters). */
export function randomLinkCode(): string {
  const bytes = webCrypto().getRandomValues(new Uint8Array(LINK_CODE_BYTES));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
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
