/**
 * One bounded JWKS download: no special-purpose address asked for or (on Node) connected to
 * (`jwks-address.ts`), a time limit over the whole exchange (`AbortSignal.timeout`, kept even by
 * a `fetch` that ignores its signal), a size limit that stops reading, no redirect followed unless
 * allowed, and then only within the same origin (as jose, which follows none), and any answer
 * other than 200 with a JSON content type and a JSON object holding a `keys` array of at most
 * `maxKeys` entries counted as a failure.
 */
import { findDuplicateMember, formatMemberPath } from './duplicate-members.js';
import { type JwksAddressRefusal, describeRefusal, screenJwksAddress, screenJwksHost } from './jwks-address.js';
import { DECODERS, contentCodings, nodeJwksFetch } from './jwks-node-fetch.js';
import { kindOf, quote } from './hint-text.js';
import { isJsonObject } from './json-object.js';

/** The `fetch` this package calls: the global one, or one injected. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Limits of one download. */
export interface JwksFetchLimits {
  /** Seconds for the whole exchange, redirects and body included. */
  readonly timeout: number;
  readonly maxBytes: number;
  /** Most entries the `keys` array may hold, usable or not (`jwksMaxKeys`); more is `too_many_keys`. */
  readonly maxKeys: number;
  /** Redirects followed, each within the origin of the URL asked for; 0 follows none. */
  readonly maxRedirects: number;
  /** Hosts exempt from the address rules (`jwksAllowedHosts`), as URLs name them. */
  readonly allowedHosts: ReadonlySet<string>;
}

/** A good download: the `keys` array, and the `Cache-Control` max-age when the server sent a usable one. */
export interface JwksDocument {
  readonly keys: readonly unknown[];
  /**
   * Seconds from `max-age`, less the response's `Age`; 0 for `no-store` or `no-cache`; `undefined`
   * when absent or malformed.
   */
  readonly maxAge: number | undefined;
}

/** Why a download failed (`address`: its host is, or resolved to, a special-purpose address). */
export type JwksFailureReason =
  | 'address'
  | 'timeout'
  | 'network'
  | 'status'
  | 'too_large'
  | 'redirects'
  | 'redirect_target'
  | 'content_type'
  | 'content_encoding'
  | 'invalid_json'
  | 'no_keys'
  | 'too_many_keys';

/** A failed download. `retryAfter` is the server's `Retry-After`, in seconds, when it sent one. */
export class JwksFetchError extends Error {
  override readonly name = 'JwksFetchError';
  readonly reason: JwksFailureReason;
  readonly status: number | undefined;
  readonly retryAfter: number | undefined;
  /** The host refused, and why (`reason` `address` only). */
  readonly address: JwksAddressRefusal | undefined;

  constructor(
    reason: JwksFailureReason,
    message: string,
    details: { status?: number; retryAfter?: number; cause?: unknown; address?: JwksAddressRefusal } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.reason = reason;
    this.status = details.status;
    this.retryAfter = details.retryAfter;
    this.address = details.address;
  }
}

function addressRefused(refusal: JwksAddressRefusal): JwksFetchError {
  return new JwksFetchError('address', describeRefusal(refusal), { address: refusal });
}

/**
 * The `fetch` of a download from `url` when none is injected: on Node, one whose connections
 * refuse a special-purpose address the host resolves to; elsewhere `globalThis.fetch`, looked up
 * now (so interceptors that patch it are honoured).
 */
function defaultFetch(limits: JwksFetchLimits): FetchLike {
  const screened = nodeJwksFetch((url, address) => {
    const refusal = screenJwksAddress(url, address, limits.allowedHosts);
    return refusal === undefined ? undefined : addressRefused(refusal);
  });
  return screened ?? ((input, init) => globalThis.fetch(input, init));
}

const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
/**
 * The statuses whose `Retry-After` is read: 429 (too many requests) and 503 (unavailable), which
 * say when to come back. On another failure (a 404, a 500) it is no such promise, and would hold
 * back every download, unknown-kid refetches included, for up to a day.
 */
const RETRY_AFTER_STATUSES: ReadonlySet<number> = new Set([429, 503]);
const MAX_RETRY_AFTER = 86_400;

/**
 * Reads `Retry-After` as whole seconds from `nowMs`, at most a day: delay-seconds, or an HTTP-date
 * (`Date.parse` of a text ending in `GMT`); anything else is ignored.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  const seconds = deltaSeconds(text);
  if (seconds !== undefined) return Math.min(seconds, MAX_RETRY_AFTER);
  const date = text.endsWith(' GMT') ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(date)) return undefined;
  return Math.min(Math.max(0, Math.ceil((date - nowMs) / 1000)), MAX_RETRY_AFTER);
}

/** Longest `Cache-Control` value read; the rest is ignored. */
const MAX_CACHE_CONTROL_CHARS = 1024;

/**
 * Reads the max-age a `Cache-Control` value allows, in seconds: 0 when it says `no-store` or
 * `no-cache` (wherever it stands), else its `max-age` (whole seconds, optionally quoted; leading
 * zeros count for nothing, so `0000000001` is 1). A value with no usable directive, two different
 * max-ages, or a malformed one gives `undefined`. One pass over at most the first 1024
 * characters, no regular expression: the header is hostile input.
 */
export function parseCacheControlMaxAge(value: string | null): number | undefined {
  if (value === null) return undefined;
  let maxAge: number | undefined;
  // A malformed or conflicting max-age is ignored, but the scan goes on: a `no-store` or
  // `no-cache` anywhere in the value wins, whatever stands before it.
  let unusable = false;
  for (const part of value.slice(0, MAX_CACHE_CONTROL_CHARS).split(',')) {
    const directive = part.trim().toLowerCase();
    if (directive === 'no-store' || directive === 'no-cache') return 0;
    if (unusable || !directive.startsWith('max-age=')) continue;
    const seconds = maxAgeSeconds(directive.slice('max-age='.length));
    if (seconds === undefined || (maxAge !== undefined && maxAge !== seconds)) unusable = true;
    maxAge = seconds;
  }
  return unusable ? undefined : maxAge;
}

/** The seconds of a `max-age` value (whole seconds, optionally quoted), or `undefined` when malformed. */
function maxAgeSeconds(value: string): number | undefined {
  let digits = value;
  if (digits.length >= 2 && digits.startsWith('"') && digits.endsWith('"')) digits = digits.slice(1, -1);
  return deltaSeconds(digits);
}

/** Whole seconds written as digits only (RFC 9111 delta-seconds), or `undefined` when malformed. */
function deltaSeconds(digits: string): number | undefined {
  if (digits === '' || ![...digits].every((char) => char >= '0' && char <= '9')) return undefined;
  // More than nine significant digits are beyond any bound this package accepts: the exact
  // figure does not matter. Leading zeros are not significant.
  let first = 0;
  while (first < digits.length - 1 && digits[first] === '0') first += 1;
  return digits.length - first > 9 ? Number.MAX_SAFE_INTEGER : Number(digits.slice(first));
}

/** Longest `Age` value read; the rest is ignored. */
const MAX_AGE_CHARS = 64;

/**
 * The seconds a served `max-age` leaves for this copy: the max-age less the response's `Age` (the
 * seconds a cache such as a CDN has held it, RFC 9111 §4.2.3), at least 0. An `Age` that is not
 * whole seconds is ignored; of a list, the first member counts (RFC 9111 §5.1).
 */
function freshnessLeft(maxAge: number | undefined, age: string | null): number | undefined {
  if (maxAge === undefined || age === null) return maxAge;
  const held = deltaSeconds((age.slice(0, MAX_AGE_CHARS).split(',', 1)[0] as string).trim());
  return held === undefined ? maxAge : Math.max(0, maxAge - held);
}

async function discard(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // The body is of no interest; a failure to cancel it changes nothing.
  }
}

/** The content codings a download decodes (the default `fetch` on Node, and `fetch` itself, decode these). */
const CODINGS: readonly string[] = Object.keys(DECODERS);

/**
 * The one content coding of `contentEncoding` (`undefined` for none or `identity`); a coding not
 * in {@link CODINGS}, or more than one, is a `content_encoding` failure naming what was served.
 */
function contentCoding(contentEncoding: string | null): string | undefined {
  const codings = contentCodings(contentEncoding);
  const [coding] = codings;
  if (coding === undefined) return undefined;
  if (codings.length === 1 && CODINGS.includes(coding)) return coding;
  if (contentEncoding === null) return undefined;
  throw new JwksFetchError(
    'content_encoding',
    `The JWKS is served with Content-Encoding ${quote(contentEncoding)}, not one of none, gzip, deflate or br: serve it uncompressed or with one of those.`,
  );
}

/** `true` when `error`, or what caused it, is zlib's (or Brotli's) refusal of a compressed body. */
function isDecodingError(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (code.startsWith('Z_') || code.startsWith('ERR__ERROR_'))) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The `too_large` failure: the limit, what was `found`, and what to do. */
function tooLarge(maxBytes: number, found: string): JwksFetchError {
  return new JwksFetchError(
    'too_large',
    `The JWKS is larger than ${maxBytes} bytes (jwksMaxBytes), ${found}: publish only the keys in use, or raise jwksMaxBytes.`,
  );
}

/**
 * The body as text, decoded bytes counted: reading stops past `maxBytes`, however small the
 * compressed body was (a compression bomb is `too_large` after at most `maxBytes` decoded bytes).
 * At the time limit the body is cancelled at once, even while a read waits on a body that has
 * stalled and from a `fetch` that ignores its signal: an endpoint that sends headers and then
 * nothing cannot keep one connection open per download.
 */
async function readLimited(response: Response, maxBytes: number, signal: AbortSignal, coding: string | undefined): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await discard(response);
    throw tooLarge(maxBytes, `got a Content-Length of ${declared}`);
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const cancel = () => {
    reader.cancel(signal.reason).catch(() => undefined);
  };
  signal.addEventListener('abort', cancel, { once: true });
  try {
    return await readChunks(reader, maxBytes, signal, coding);
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

async function readChunks(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  maxBytes: number,
  signal: AbortSignal,
  coding: string | undefined,
): Promise<string> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch (cause) {
      if (coding === undefined || !isDecodingError(cause)) throw cause;
      throw new JwksFetchError(
        'content_encoding',
        `The JWKS body is not valid ${coding} data, though its Content-Encoding says ${quote(coding)}: check how the server compresses it, or serve it uncompressed.`,
        { cause },
      );
    }
    const { done, value } = chunk;
    // Checked before `done`: a body cancelled at the time limit reads as ended, but is cut short.
    if (signal.aborted) {
      await reader.cancel().catch(() => undefined);
      throw signal.reason;
    }
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(maxBytes, `got more: reading stopped at ${total} bytes${coding === undefined ? '' : ' decoded'}`);
    }
    chunks.push(value);
  }
  return new Blob(chunks).text();
}

/** What a redirect's `Location` names, for messages: resolved, credentials left out, quoted (it is the endpoint's text). */
function redirectTarget(location: string | null, target: URL | undefined): string {
  if (location === null) return 'it has no Location';
  if (target === undefined) return `its Location ${quote(location)} is not a valid URL`;
  const shown = new URL(target.href);
  shown.username = '';
  shown.password = '';
  return `it leads to ${quote(shown.href)}`;
}

/** The `status` failure's message: the status found, the one expected, and what to check. */
function statusMessage(status: number): string {
  const next =
    status >= 400 && status < 500 && status !== 408 && status !== 429
      ? 'is the jwksUri the URL the key set is served at, and readable without credentials?'
      : 'the download is tried again after the back-off.';
  return `The JWKS endpoint answered ${status}, not 200: ${next}`;
}

const MOVED = "If the JWKS has moved, register its new URL as the issuer's jwksUri.";

/**
 * Where a redirect from `current` leads, when `limits` allow one: never off the origin first asked
 * for (scheme, host and port), so a redirect cannot send the gateway to another host, a loopback
 * service or a link-local address, nor down from `https:`.
 */
function nextUrl(response: Response, current: URL, origin: string, redirects: number, limits: JwksFetchLimits): URL {
  const location = response.headers.get('location');
  let target: URL | undefined;
  try {
    target = location === null ? undefined : new URL(location, current);
  } catch {
    target = undefined;
  }
  const leads = redirectTarget(location, target);
  if (redirects >= limits.maxRedirects) {
    const why =
      limits.maxRedirects === 0 ? 'redirects are not followed (jwksMaxRedirects is 0)' : `more than ${limits.maxRedirects} redirects`;
    throw new JwksFetchError('redirects', `The JWKS endpoint answered ${response.status}, a redirect: ${why}; ${leads}. ${MOVED}`, {
      status: response.status,
    });
  }
  if (target === undefined || target.origin !== origin || target.username !== '' || target.password !== '') {
    const rule = `redirects are followed only within the origin ${quote(origin)}, without credentials`;
    throw new JwksFetchError('redirect_target', `The JWKS endpoint answered ${response.status}, a redirect: ${leads}; ${rule}. ${MOVED}`, {
      status: response.status,
    });
  }
  return target;
}

/** `true` when `contentType` declares JSON (`application/json` or `application/jwk-set+json`). */
function isJsonType(contentType: string | null): boolean {
  const type = (contentType ?? '').split(';', 1)[0] as string;
  return ['application/json', 'application/jwk-set+json'].includes(type.trim().toLowerCase());
}

/** The `content_type` failure, naming the type served (the endpoint's text, quoted) and the types read. */
function notJson(contentType: string | null): JwksFetchError {
  const served = contentType === null ? 'with no Content-Type' : `as ${quote(contentType)}`;
  return new JwksFetchError(
    'content_type',
    `The JWKS is served ${served}, not as application/json or application/jwk-set+json: is the jwksUri the key set itself, not a page?`,
  );
}

/**
 * The `keys` of the JWKS `text`, when it is a JSON object holding a `keys` array of at most
 * `maxKeys` entries. The count is checked before any entry is read: each usable key costs an
 * import, so a set of thousands would hold the event loop for seconds at every download.
 */
function parseDocument(text: string, maxKeys: number): readonly unknown[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (cause) {
    // The parser's own message is not repeated: it quotes the body as it is, unescaped.
    const found = text.trim() === '' ? `got an empty body (${text.length} characters)` : `got ${quote(text)}`;
    throw new JwksFetchError('invalid_json', `The JWKS is not JSON, ${found}: is the jwksUri the key set itself, not a page?`, {
      cause,
    });
  }
  // A key whose "n" appears twice is one key to this reader and another to the next.
  const repeated = findDuplicateMember(text);
  if (repeated !== undefined) {
    throw new JwksFetchError(
      'invalid_json',
      `The JWKS repeats the member ${formatMemberPath(repeated)}; each member name may appear once.`,
    );
  }
  if (!isJsonObject(document) || !Array.isArray(document.keys)) {
    const found = isJsonObject(document) ? `an object whose "keys" is ${kindOf(document.keys)}` : kindOf(document);
    throw new JwksFetchError(
      'no_keys',
      `The JWKS is not an object with a "keys" array, got ${found}: is the jwksUri the key set itself, not one key or a discovery document?`,
    );
  }
  if (document.keys.length > maxKeys) {
    throw new JwksFetchError(
      'too_many_keys',
      `The JWKS "keys" array holds at most ${maxKeys} entries here (jwksMaxKeys), got ${document.keys.length}: publish only the keys in use (the current and the next), or raise jwksMaxKeys.`,
    );
  }
  return document.keys;
}

async function exchange(
  url: string,
  fetchImpl: FetchLike,
  limits: JwksFetchLimits,
  signal: AbortSignal,
  nowMs: number,
): Promise<JwksDocument> {
  let current = new URL(url);
  const origin = current.origin;
  // Redirects stay on this origin, so on this host: one check covers them.
  const refusal = screenJwksHost(current, limits.allowedHosts);
  if (refusal !== undefined) throw addressRefused(refusal);
  for (let redirects = 0; ; redirects += 1) {
    const response = await fetchImpl(current.href, {
      redirect: 'manual',
      signal,
      headers: { accept: 'application/jwk-set+json, application/json' },
    });
    if (signal.aborted) {
      // A `fetch` that ignores its signal answered after the time limit: the download is over.
      await discard(response);
      throw signal.reason;
    }
    if (REDIRECTS.has(response.status)) {
      await discard(response);
      current = nextUrl(response, current, origin, redirects, limits);
      continue;
    }
    if (response.status !== 200) {
      await discard(response);
      throw new JwksFetchError('status', statusMessage(response.status), {
        status: response.status,
        retryAfter: RETRY_AFTER_STATUSES.has(response.status) ? parseRetryAfter(response.headers.get('retry-after'), nowMs) : undefined,
      });
    }
    const contentType = response.headers.get('content-type');
    if (!isJsonType(contentType)) {
      await discard(response);
      throw notJson(contentType);
    }
    let coding: string | undefined;
    try {
      coding = contentCoding(response.headers.get('content-encoding'));
    } catch (error) {
      await discard(response);
      throw error;
    }
    const keys = parseDocument(await readLimited(response, limits.maxBytes, signal, coding), limits.maxKeys);
    const maxAge = freshnessLeft(parseCacheControlMaxAge(response.headers.get('cache-control')), response.headers.get('age'));
    return { keys, maxAge };
  }
}

/**
 * Downloads the JWKS at `url` and returns its `keys` array and its `Cache-Control` max-age.
 * @param fetchImpl the `fetch` injected, if any (else the default: see {@link defaultFetch})
 * @param nowMs the verifier's clock, to read an HTTP-date `Retry-After`
 * @throws {JwksFetchError} on any failure.
 */
export async function fetchJwks(
  url: string,
  fetchImpl: FetchLike | undefined,
  limits: JwksFetchLimits,
  nowMs: number,
): Promise<JwksDocument> {
  const signal = AbortSignal.timeout(limits.timeout * 1000);
  try {
    // The race keeps the limit even when `fetchImpl` or a body stream ignores the signal; the
    // abandoned exchange stops at its next step (it checks the signal) and its outcome is dropped.
    const work = exchange(url, fetchImpl ?? defaultFetch(limits), limits, signal, nowMs);
    const expired = new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    work.catch(() => undefined);
    expired.catch(() => undefined);
    return await Promise.race([work, expired]);
  } catch (error) {
    if (error instanceof JwksFetchError) throw error;
    if (signal.aborted) {
      throw new JwksFetchError('timeout', `The JWKS endpoint did not answer within ${limits.timeout} s.`, {
        cause: error,
      });
    }
    throw new JwksFetchError('network', 'The JWKS endpoint could not be reached.', { cause: error });
  }
}
