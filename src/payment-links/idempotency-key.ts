/**
 * The `Idempotency-Key` header and the fingerprint of a request body.
 *
 * A key is 1 to 255 visible ASCII characters without `"`, `,` or `\` (a UUID is a good key); it
 * may be sent bare or as a quoted string (`"…"`, the IETF draft's form). The fingerprint is the
 * SHA-256 of the body's canonical JSON (members sorted, members whose value is `null` left out, as
 * the field rules count `null` as absent), so the same body sent with its members in another
 * order, other whitespace, or an optional member as `null` rather than left out, is the same
 * request; any other difference is not.
 */
import { quote, quoteList, sha256Hex } from '../internal/index.js';
import { PaymentLinkError } from './errors.js';
import type { HeadersLike } from './handler-request.js';
import { headerValues } from './headers.js';

/** Longest key accepted, in characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** One character of a key: visible ASCII but `"`, `,` and `\`. */
const KEY_CHARACTER = '[\\x21\\x23-\\x2B\\x2D-\\x5B\\x5D-\\x7E]';

/** A key as sent, bare or quoted, as a regular expression's source (anchored). */
export const IDEMPOTENCY_KEY_PATTERN = `^(?:${KEY_CHARACTER}{1,${MAX_IDEMPOTENCY_KEY_LENGTH}}|"${KEY_CHARACTER}{1,${MAX_IDEMPOTENCY_KEY_LENGTH}}")$`;

const KEY = new RegExp(`^${KEY_CHARACTER}{1,${MAX_IDEMPOTENCY_KEY_LENGTH}}$`);

/** `value` without the spaces and tabs around it: HTTP's white space, not JavaScript's (`trim()` takes U+00A0 too). */
function withoutOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value[start] === ' ' || value[start] === '\t')) start += 1;
  while (end > start && (value[end - 1] === ' ' || value[end - 1] === '\t')) end -= 1;
  return value.slice(start, end);
}

/**
 * The request's idempotency key, or `null` when it sends none.
 * @throws {PaymentLinkError} `invalid_idempotency_key` for an empty, malformed or repeated header.
 */
export function readIdempotencyKey(headers: HeadersLike): string | null {
  const values = headerValues(headers, 'idempotency-key');
  if (values.length === 0) return null;
  if (values.length > 1) {
    throw new PaymentLinkError(
      'invalid_idempotency_key',
      `The request carries more than one Idempotency-Key header, got ${quoteList(values)}; send one key per request.`,
    );
  }
  let key = withoutOws(values[0] ?? '');
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) key = key.slice(1, -1);
  if (!KEY.test(key)) {
    throw new PaymentLinkError(
      'invalid_idempotency_key',
      `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters without '"', ',' or '\\' (a UUID, say), ` +
        `got ${quote(key)} (${key.length} characters).`,
    );
  }
  return key;
}

/** Text written as it is by {@link canonicalJson} (punctuation and member names). */
class Literal {
  constructor(readonly text: string) {}
}

const COMMA = new Literal(',');
const CLOSE_ARRAY = new Literal(']');
const CLOSE_OBJECT = new Literal('}');

/**
 * JSON with object members sorted by name, at every depth. Walks an explicit stack, not the call
 * stack: a body nested thousands of levels deep (it fits in a few KiB) is fingerprinted like any other.
 */
export function canonicalJson(value: unknown): string {
  return canonicalText(value, false);
}

/**
 * {@link canonicalJson}, leaving out the object members whose value is `null` when `dropNull`
 * (array elements stay as they are).
 */
function canonicalText(value: unknown, dropNull: boolean): string {
  const out: string[] = [];
  const work: unknown[] = [value];
  while (work.length > 0) {
    const next = work.pop();
    if (next instanceof Literal) {
      out.push(next.text);
    } else if (Array.isArray(next)) {
      out.push('[');
      work.push(CLOSE_ARRAY);
      for (let index = next.length - 1; index >= 0; index--) {
        work.push(next[index]);
        if (index > 0) work.push(COMMA);
      }
    } else if (typeof next === 'object' && next !== null) {
      out.push('{');
      work.push(CLOSE_OBJECT);
      const object = next as Record<string, unknown>;
      const all = Object.keys(object).sort();
      const names = dropNull ? all.filter((name) => object[name] !== null) : all;
      for (let index = names.length - 1; index >= 0; index--) {
        const name = names[index] as string;
        work.push(object[name], new Literal(`${JSON.stringify(name)}:`));
        if (index > 0) work.push(COMMA);
      }
    } else {
      out.push(JSON.stringify(next) ?? 'null');
    }
  }
  return out.join('');
}

/**
 * SHA-256 (hex) of the canonical JSON of `body`, its `null` members left out: the field rules
 * count `null` as absent, so a retry that sends an optional field as `null` is the same request.
 */
export function fingerprint(body: unknown): Promise<string> {
  return sha256Hex(canonicalText(body, true));
}
