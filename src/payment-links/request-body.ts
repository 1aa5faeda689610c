/**
 * The JSON body of a request: media type (415), size (413), syntax and repeated member names (400)
 * are decided here, before any field is looked at.
 */
import { type MemberPath, findDuplicateMember, formatMemberPath, describeValue, quote, quoteList } from '../internal/index.js';
import { PaymentLinkError } from './errors.js';
import type { HandlerRequest } from './handler-request.js';
import { headerValues } from './headers.js';

/** The default body limit: 64 KiB. */
export const DEFAULT_MAX_BODY_BYTES = 65_536;

const decoder = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

function unsupported(message: string): PaymentLinkError {
  return new PaymentLinkError('unsupported_media_type', message);
}

/** The 413 of a body over `maxBytes`; `found` says what was seen of it ("got 70000 bytes"). */
function tooLarge(maxBytes: number, found: string): PaymentLinkError {
  return new PaymentLinkError('payload_too_large', `The body is larger than ${maxBytes} bytes, ${found}; send a smaller body.`);
}

/**
 * Checks `Content-Type`: `application/json`, with `charset=utf-8` or no charset. Any other type,
 * charset or a missing header is 415.
 */
export function checkJsonContentType(request: HandlerRequest): void {
  const values = headerValues(request.headers, 'content-type');
  if (values.length === 0) throw unsupported('The body must be sent as Content-Type: application/json; the request has no Content-Type.');
  if (values.length > 1) {
    throw unsupported(`The request carries more than one Content-Type header, got ${quoteList(values)}; send one: application/json.`);
  }
  const [mediaType = '', ...parameters] = (values[0] ?? '').split(';').map((part) => part.trim());
  if (mediaType.toLowerCase() !== 'application/json') {
    throw unsupported(`The body must be sent as Content-Type: application/json, got ${quote(mediaType)}.`);
  }
  for (const parameter of parameters) {
    const [name = '', value = ''] = parameter.split('=').map((part) => part.trim());
    const charset = value.replace(/^"|"$/g, '');
    if (name.toLowerCase() === 'charset' && charset.toLowerCase() !== 'utf-8') {
      throw unsupported(`A JSON body must be encoded as UTF-8 (charset=utf-8), got charset ${quote(charset)}.`);
    }
  }
}

/**
 * Refuses a body sent with a `Content-Encoding` other than `identity` (RFC 9110 §8.4): the handler
 * reads the bytes as sent and decodes none, so a gzip body would be read as its compressed bytes,
 * and bytes labelled gzip that are plain JSON would be taken as JSON that a proxy or a log honouring
 * the label reads otherwise. Applied to a raw body only: a framework that parsed the body has
 * decoded it already.
 */
function checkContentEncoding(request: HandlerRequest): void {
  const values = headerValues(request.headers, 'content-encoding');
  const codings = values.flatMap((value) => value.split(',')).map((coding) => coding.trim());
  if (codings.every((coding) => coding === '' || coding.toLowerCase() === 'identity')) return;
  throw unsupported(
    `The body must be sent without Content-Encoding (or as identity), got ${quoteList(values)}; send the JSON uncompressed.`,
  );
}

/** Refuses early a body whose declared `Content-Length` is over the limit. */
function checkDeclaredLength(request: HandlerRequest, maxBytes: number): void {
  const [declared] = headerValues(request.headers, 'content-length');
  const length = declared?.trim();
  if (length !== undefined && /^\d+$/.test(length) && Number(length) > maxBytes) {
    throw tooLarge(maxBytes, `got Content-Length ${quote(length)}`);
  }
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}

function chunkBytes(chunk: unknown): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk;
  if (typeof chunk === 'string') return encoder.encode(chunk);
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  throw new TypeError(`The request body stream yielded a chunk that is neither bytes nor text, got ${describeValue(chunk)}`);
}

/**
 * The next chunk of a request body. A stream that fails (the client closed or reset the
 * connection while sending) is a client fault: 400, not a rejection taken for the server's.
 */
async function nextChunk(iterator: AsyncIterator<unknown>): Promise<IteratorResult<unknown>> {
  try {
    return await iterator.next();
  } catch (error) {
    throw new PaymentLinkError('invalid_json', 'The body was cut short: the connection failed while it was sent; send it again.', {
      cause: error,
    });
  }
}

/**
 * Reads a stream up to `maxBytes`; on the first byte beyond it stops reading (the rest is left
 * unread, never buffered) and throws 413.
 */
async function readStream(stream: AsyncIterable<unknown>, maxBytes: number): Promise<Uint8Array> {
  const iterator = stream[Symbol.asyncIterator]();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const next = await nextChunk(iterator);
    if (next.done === true) break;
    const bytes = chunkBytes(next.value);
    total += bytes.byteLength;
    if (total > maxBytes) throw tooLarge(maxBytes, `got more than ${maxBytes} bytes (the rest was not read)`);
    chunks.push(bytes);
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/** Whether `body` is raw (absent, text, bytes or a stream), not a value a framework parsed already. */
function isRaw(body: unknown): boolean {
  return (
    body === undefined ||
    body === null ||
    typeof body === 'string' ||
    body instanceof Uint8Array ||
    body instanceof ArrayBuffer ||
    isAsyncIterable(body)
  );
}

/** The raw body as bytes, or `undefined` when `body` is an already parsed value. */
async function rawBytes(body: unknown, maxBytes: number): Promise<Uint8Array | undefined> {
  if (body === undefined || body === null) return new Uint8Array(0);
  if (typeof body === 'string') {
    // Every UTF-16 code unit takes at least one UTF-8 byte: a longer string is over the limit.
    if (body.length > maxBytes) throw tooLarge(maxBytes, `got at least ${body.length} bytes`);
    return encoder.encode(body);
  }
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (isAsyncIterable(body)) return readStream(body, maxBytes);
  return undefined;
}

/** Whether a decoder refuses `bytes` from `start` to `end`, a character cut short at `end` aside. */
function refuses(bytes: Uint8Array, start: number, end: number): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(start, end), { stream: true });
    return false;
  } catch {
    return true;
  }
}

/** Bytes fed to one decoder at a time while looking for a fault. */
const FAULT_CHUNK = 4096;

/**
 * Where `bytes` stop being UTF-8, for the refusal: the first byte a decoder refuses, or the end of
 * the body when only the end cuts a character short. One decoder reads the chunks in turn up to the
 * first it refuses; within that chunk (from the start of the character it began in) the fault is
 * found by halving: linear in the body, on the refusal path only.
 */
function utf8Fault(bytes: Uint8Array): string {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let chunk = 0;
  for (; chunk < bytes.byteLength; chunk += FAULT_CHUNK) {
    try {
      decoder.decode(bytes.subarray(chunk, chunk + FAULT_CHUNK), { stream: true });
    } catch {
      break;
    }
  }
  if (chunk >= bytes.byteLength) return `a character is cut short by the end of the body, at byte ${bytes.byteLength}`;
  // The character the chunk begins in starts at most 3 bytes before it: at the first byte from
  // there that is no continuation byte (whose top two bits are 1 then 0), the prefix being UTF-8.
  let start = Math.max(0, chunk - 3);
  while (start < chunk && ((bytes[start] ?? 0) & 0xc0) === 0x80) start += 1;
  let low = start;
  let high = Math.min(chunk + FAULT_CHUNK, bytes.byteLength);
  while (high - low > 1) {
    const middle = (low + high) >>> 1;
    if (refuses(bytes, start, middle)) high = middle;
    else low = middle;
  }
  const at = high - 1;
  return `at byte ${at} (0x${(bytes[at] ?? 0).toString(16).padStart(2, '0')})`;
}

function parseJson(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch (error) {
    throw new PaymentLinkError('invalid_json', `The body is not valid UTF-8, ${utf8Fault(bytes)}; send it encoded as UTF-8.`, {
      cause: error,
    });
  }
  if (text.trim() === '') throw new PaymentLinkError('invalid_json', 'The body is empty; send a JSON object.');
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    // The parser's own message is not repeated: it quotes the body as it is, unescaped.
    throw new PaymentLinkError('invalid_json', `The body is not valid JSON, got ${quote(text)}; send one JSON object.`, {
      cause: error,
    });
  }
  const duplicate = findDuplicateMember(text, value);
  if (duplicate !== undefined) throw repeatedField(duplicate);
  return value;
}

/**
 * A body that repeats a member name: `JSON.parse` would keep the last value, another reader (a
 * proxy, a log) may keep the first, so neither is taken.
 */
function repeatedField(path: MemberPath): PaymentLinkError {
  // Cut however deep the member and long its names: `payment_details.line_items[0].amount`.
  const field = formatMemberPath(path);
  return new PaymentLinkError('validation_failed', `The body repeats the field ${field}; send each field once.`, {
    errors: [{ field, code: 'duplicate_field', message: 'The field appears more than once; send it once.' }],
  });
}

/**
 * The request's JSON body.
 * @throws {PaymentLinkError} `unsupported_media_type` (415: also a raw body with a `Content-Encoding`
 * other than `identity`), `payload_too_large` (413), `invalid_json`
 * (400: also a body stream that fails before its end) or `validation_failed` (400) with a
 * `duplicate_field` error naming a repeated member. A body already parsed by the framework (not
 * bytes, text or a stream) cannot be checked for repeated members: the parser has already dropped
 * them.
 */
export async function readJsonBody(request: HandlerRequest, maxBytes: number): Promise<unknown> {
  checkJsonContentType(request);
  checkDeclaredLength(request, maxBytes);
  if (isRaw(request.body)) checkContentEncoding(request);
  const bytes = await rawBytes(request.body, maxBytes);
  if (bytes === undefined) return request.body;
  if (bytes.byteLength > maxBytes) throw tooLarge(maxBytes, `got ${bytes.byteLength} bytes`);
  return parseJson(bytes);
}
