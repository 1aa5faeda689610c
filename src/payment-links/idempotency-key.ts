/**
 * The `Idempotency-Key` header and the fingerprint of a request body.
 *
 * A key is 1 to 255 visible ASCII characters without `"`, `,` or `\` (a UUID is a good key); it
 * may be sent bare or as a quoted string (`"…"`, the IETF draft's form). The fingerprint is the
 * SHA-256 of the body's canonical JSON (members sorted), so the same body sent with its members
 * in another order or other whitespace is the same request; any other difference is not.
 *
 * @module paygate-auth/payment-links
 */
import { PaymentLinkError } from './errors.js';
import type { HeadersLike } from './handler-request.js';
import { headerValues } from './headers.js';

/** Longest key accepted, in characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

const KEY = /^[\x21\x23-\x2B\x2D-\x5B\x5D-\x7E]{1,255}$/;

/**
 * The request's idempotency key, or `null` when it sends none.
 * @throws {PaymentLinkError} `invalid_idempotency_key` for an empty, malformed or repeated header.
 */
export function readIdempotencyKey(headers: HeadersLike): string | null {
  const values = headerValues(headers, 'idempotency-key');
  if (values.length === 0) return null;
  if (values.length > 1) throw new PaymentLinkError('invalid_idempotency_key', 'The request carries more than one Idempotency-Key header.');
  let key = (values[0] ?? '').trim();
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) key = key.slice(1, -1);
  if (!KEY.test(key)) {
    throw new PaymentLinkError(
      'invalid_idempotency_key',
      `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters without '"', ',' or '\\' (a UUID, say).`,
    );
  }
  return key;
}

/** JSON with object members sorted by name, recursively. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const members = Object.keys(value)
      .sort()
      .map((name) => `${JSON.stringify(name)}:${canonicalJson((value as Record<string, unknown>)[name])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** SHA-256 (hex) of the canonical JSON of `body`. */
export async function fingerprint(body: unknown): Promise<string> {
  const subtle = (globalThis as { crypto?: { subtle?: { digest(algorithm: string, data: Uint8Array): Promise<ArrayBuffer> } } }).crypto?.subtle;
  if (subtle === undefined) throw new TypeError('paygate-auth/payment-links needs globalThis.crypto.subtle');
  const digest = await subtle.digest('SHA-256', new TextEncoder().encode(canonicalJson(body)));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}
