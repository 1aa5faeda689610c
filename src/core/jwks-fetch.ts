/**
 * One bounded JWKS download: a time limit over the whole exchange (kept even by a
 * `fetch` that ignores its `signal`), a size limit that stops reading, redirects followed by hand up
 * to a limit and only to allowed URLs (never from `https:` down to `http:`, never from a public host
 * to a loopback one), and any answer other than 200 with a JSON object holding a `keys` array
 * counted as a failure.
 *
 * @module paygate-auth
 */
import { findDuplicateMember, formatMemberPath } from './duplicate-members.js';
import { isJsonObject } from './json-object.js';
import { isAllowedJwksUrl, isLoopbackHost } from './loopback.js';

/** The `fetch` this package calls: the global one, or one injected. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Limits of one download. */
export interface JwksFetchLimits {
  /** Seconds for the whole exchange, redirects and body included. */
  readonly timeout: number;
  readonly maxBytes: number;
  readonly maxRedirects: number;
}

/** Why a download failed. */
export type JwksFailureReason =
  | 'timeout'
  | 'network'
  | 'status'
  | 'too_large'
  | 'redirects'
  | 'redirect_target'
  | 'invalid_json'
  | 'no_keys';

/** A failed download. `retryAfter` is the server's `Retry-After`, in seconds, when it sent one. */
export class JwksFetchError extends Error {
  override readonly name = 'JwksFetchError';
  readonly reason: JwksFailureReason;
  readonly status: number | undefined;
  readonly retryAfter: number | undefined;

  constructor(reason: JwksFailureReason, message: string, details: { status?: number; retryAfter?: number; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.reason = reason;
    this.status = details.status;
    this.retryAfter = details.retryAfter;
  }
}

const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
const MAX_RETRY_AFTER = 86_400;

const DAY_NAME = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
/** RFC 9110 §5.6.7 HTTP-date: IMF-fixdate, and the obsolete RFC 850 and asctime forms. */
const IMF_FIXDATE = new RegExp(`^${DAY_NAME}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`);
const RFC_850 = new RegExp(`^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`);
const ASCTIME = new RegExp(`^${DAY_NAME} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`);

/** An HTTP-date in milliseconds, or `NaN` (`Date.parse` alone would take almost anything). */
function parseHttpDate(text: string): number {
  if (IMF_FIXDATE.test(text) || RFC_850.test(text)) return Date.parse(text);
  if (ASCTIME.test(text)) return Date.parse(`${text} GMT`);
  return Number.NaN;
}

/** Reads `Retry-After` (delay-seconds or an HTTP-date) as whole seconds from `nowMs`, at most a day. */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text), MAX_RETRY_AFTER);
  const date = parseHttpDate(text);
  if (Number.isNaN(date)) return undefined;
  return Math.min(Math.max(0, Math.ceil((date - nowMs) / 1000)), MAX_RETRY_AFTER);
}

async function discard(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // The body is of no interest; a failure to cancel it changes nothing.
  }
}

async function readLimited(response: Response, maxBytes: number, signal: AbortSignal): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await discard(response);
    throw new JwksFetchError('too_large', `The JWKS is larger than ${maxBytes} bytes.`);
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (signal.aborted) {
      await reader.cancel().catch(() => undefined);
      throw signal.reason;
    }
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new JwksFetchError('too_large', `The JWKS is larger than ${maxBytes} bytes.`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/**
 * Whether a redirect from `current` may go to `target`: an allowed JWKS URL without credentials,
 * not a downgrade from `https:` to `http:`, and not from a public host into the loopback network
 * (a remote endpoint must not make the gateway call its own local services).
 */
function isAllowedRedirect(current: URL, target: URL): boolean {
  if (!isAllowedJwksUrl(target) || target.username !== '' || target.password !== '') return false;
  if (current.protocol === 'https:' && target.protocol !== 'https:') return false;
  return isLoopbackHost(current.hostname) || !isLoopbackHost(target.hostname);
}

function nextUrl(response: Response, current: URL): URL {
  const location = response.headers.get('location');
  let target: URL;
  try {
    target = new URL(location ?? '', current);
  } catch {
    throw new JwksFetchError('redirect_target', 'The JWKS endpoint redirected to an invalid URL.');
  }
  if (location === null || !isAllowedRedirect(current, target)) {
    throw new JwksFetchError('redirect_target', 'The JWKS endpoint redirected to a URL that is not allowed.');
  }
  return target;
}

function parseDocument(text: string): readonly unknown[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (cause) {
    throw new JwksFetchError('invalid_json', 'The JWKS is not JSON.', { cause });
  }
  // A key whose "n" appears twice is one key to this reader and another to the next.
  const repeated = findDuplicateMember(text, document);
  if (repeated !== undefined) {
    throw new JwksFetchError('invalid_json', `The JWKS repeats the member ${formatMemberPath(repeated)}; each member name may appear once.`);
  }
  if (!isJsonObject(document) || !Array.isArray(document.keys)) {
    throw new JwksFetchError('no_keys', 'The JWKS is not an object with a "keys" array.');
  }
  return document.keys;
}

async function exchange(
  url: string,
  fetchImpl: FetchLike,
  limits: JwksFetchLimits,
  signal: AbortSignal,
  nowMs: number,
): Promise<readonly unknown[]> {
  let current = new URL(url);
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
      if (redirects >= limits.maxRedirects) {
        throw new JwksFetchError('redirects', `The JWKS endpoint redirected more than ${limits.maxRedirects} times.`);
      }
      current = nextUrl(response, current);
      continue;
    }
    if (response.status !== 200) {
      await discard(response);
      throw new JwksFetchError('status', `The JWKS endpoint answered ${response.status}.`, {
        status: response.status,
        retryAfter: parseRetryAfter(response.headers.get('retry-after'), nowMs),
      });
    }
    return parseDocument(await readLimited(response, limits.maxBytes, signal));
  }
}

/**
 * Downloads the JWKS at `url` and returns its `keys` array.
 * @param nowMs the verifier's clock, to read an HTTP-date `Retry-After`
 * @throws {JwksFetchError} on any failure.
 */
export async function fetchJwks(url: string, fetchImpl: FetchLike, limits: JwksFetchLimits, nowMs: number): Promise<readonly unknown[]> {
  const controller = new AbortController();
  let expire: (reason: unknown) => void = () => undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    expire = reject;
  });
  const timer = setTimeout(() => {
    controller.abort();
    expire(controller.signal.reason);
  }, limits.timeout * 1000);
  (timer as { unref?: () => void }).unref?.();
  try {
    // The race keeps the limit even when `fetchImpl` or a body stream ignores the signal; the
    // abandoned exchange stops at its next step (it checks the signal) and its outcome is dropped.
    const work = exchange(url, fetchImpl, limits, controller.signal, nowMs);
    work.catch(() => undefined);
    expired.catch(() => undefined);
    return await Promise.race([work, expired]);
  } catch (error) {
    if (error instanceof JwksFetchError) throw error;
    if (controller.signal.aborted) {
      throw new JwksFetchError('timeout', `The JWKS endpoint did not answer within ${limits.timeout} s.`, { cause: error });
    }
    throw new JwksFetchError('network', 'The JWKS endpoint could not be reached.', { cause: error });
  } finally {
    clearTimeout(timer);
  }
}
