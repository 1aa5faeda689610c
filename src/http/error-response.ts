/**
 * Failures as HTTP responses: one builder for the RFC 6750 `WWW-Authenticate` challenge and the
 * RFC 9457 `application/problem+json` body. Neither ever carries the token or key material.
 */
import { AUTH_ERROR_CODES, type AuthError, type AuthErrorCode, ConfigurationError, isAuthError } from '../core/errors.js';
import { capHint } from '../core/hint-text.js';
import { booleanOption, describe, optionNames, rejectUnknownOptions } from '../core/options.js';
import { isScopeToken } from '../core/scopes.js';

/** The members of {@link ErrorResponseOptions}: any other is refused, naming the nearest. */
const ERROR_RESPONSE_OPTION_NAMES = optionNames<ErrorResponseOptions>({ realm: true, exposeHints: true });

/**
 * An RFC 9457 problem, with this package's stable `code` (and the `claim` at fault, if one; the
 * error's `hint` only with `exposeHints`).
 */
export interface ProblemDetails {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  /**
   * The failure's stable code: an {@link AuthError}'s, `configuration_error` for a
   * {@link ConfigurationError}, `internal_error` for anything else (these two answered 500).
   */
  readonly code: AuthErrorCode | 'configuration_error' | 'internal_error';
  readonly claim?: string;
  /** What was compared (see `AuthError.hint`); present only when `exposeHints` is on. */
  readonly hint?: string;
}

/** A response, framework-neutral: adapters copy it to their framework. */
export interface ErrorResponse {
  readonly status: number;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: ProblemDetails;
}

/** Options of {@link toErrorResponse}. */
export interface ErrorResponseOptions {
  /**
   * The `realm` of every challenge.
   * @default 'paygate'
   */
  readonly realm?: string | undefined;
  /**
   * Put the error's `hint` (what was compared: the audiences expected against the token's, the
   * kids held against the token's…) in the body as `hint`. Hints quote what the client sent and
   * public configuration, never a token or key material; still, they tell any caller how this
   * service is configured, so turn this on where callers are your own integrators (development,
   * staging, a partner sandbox). Hints always reach `verify_failure` events and the error itself.
   * @default false
   */
  readonly exposeHints?: boolean | undefined;
}

/** The default challenge realm. */
export const DEFAULT_REALM = 'paygate';

/** The base of every problem `type` URI. */
export const PROBLEM_TYPE_BASE = 'urn:paygate-auth:problem:';

/** RFC 6750 §3: realm and error_description are quoted strings of %x20-21 / %x23-5B / %x5D-7E. */
const QUOTABLE = /^[\x20\x21\x23-\x5B\x5D-\x7E]*$/;

/**
 * Checks a realm option.
 * @throws {TypeError} when it cannot stand in a quoted challenge parameter.
 */
export function checkRealm(realm: unknown, owner = 'realm'): string {
  if (realm === undefined) return DEFAULT_REALM;
  if (typeof realm !== 'string' || realm === '' || !QUOTABLE.test(realm)) {
    throw new TypeError(`${owner} must be a non-empty string of printable ASCII without '"' or '\\', got ${describe(realm)}`);
  }
  return realm;
}

/**
 * The `WWW-Authenticate` value for `error`, or `undefined` where none belongs (503). Every part is
 * configuration or fixed text: the status, `error` and `error_description` (the title) are the
 * code's, from this package's table, never the error's own fields (an object that only looks like
 * an `AuthError`, by its name and code, may hold anything in them), nor the message (which may
 * quote what the client sent), so no client byte reaches a header and the challenge is short
 * whatever the token.
 */
export function challenge(error: AuthError, realm: string): string | undefined {
  const info = AUTH_ERROR_CODES[error.code];
  if (info.status !== 400 && info.status !== 401 && info.status !== 403) return undefined;
  let value = `Bearer realm="${realm}"`;
  if (info.error !== null) value += `, error="${info.error}", error_description="${info.title}"`;
  // Scopes this package checked when the route was built; a hand-made error's are left out
  // unless each is a scope-token, which can stand in the quoted parameter.
  const scopes: unknown = error.requiredScopes;
  if (error.code === 'insufficient_scope' && Array.isArray(scopes) && scopes.every(isScopeToken)) {
    value += `, scope="${scopes.join(' ')}"`;
  }
  return value;
}

function problem(
  status: number,
  code: ProblemDetails['code'],
  title: string,
  detail: string,
  claim?: string,
  hint?: string,
): ProblemDetails {
  return {
    type: `${PROBLEM_TYPE_BASE}${code}`,
    title,
    status,
    detail,
    code,
    ...(claim === undefined ? {} : { claim }),
    ...(hint === undefined ? {} : { hint }),
  };
}

/**
 * Checks an `exposeHints` option.
 * @throws {TypeError} naming `owner` when it is not a boolean.
 */
export function checkExposeHints(value: unknown, owner = 'toErrorResponse'): boolean {
  return booleanOption(owner, 'exposeHints', value, false);
}

const BASE_HEADERS = { 'content-type': 'application/problem+json', 'cache-control': 'no-store' } as const;

/** Longest `Retry-After` sent, in seconds (a day). */
const MAX_RETRY_AFTER = 86_400;

/**
 * A `Retry-After` value: whole seconds from 1 to a day, as RFC 9110's delay-seconds must be
 * written. A delay that is no finite number (`NaN`, `Infinity`, from a store's own error) is 1.
 */
export function retryAfterHeader(seconds: number): string {
  if (!Number.isFinite(seconds)) return '1';
  return String(Math.min(MAX_RETRY_AFTER, Math.max(1, Math.ceil(seconds))));
}

/** A text of the error's own for the body: cut and escaped as a hint is (the package's own are short and plain). */
function ownText(value: unknown): string | undefined {
  return typeof value === 'string' ? capHint(value) : undefined;
}

/**
 * The status and title are the code's (see {@link challenge}); the message, claim and hint, the
 * error's own texts, are cut and escaped, so that a look-alike's cannot make the body long.
 */
function fromAuthError(error: AuthError, realm: string, exposeHints: boolean): ErrorResponse {
  const { status, title } = AUTH_ERROR_CODES[error.code];
  const headers: Record<string, string> = { ...BASE_HEADERS };
  const value = challenge(error, realm);
  if (value !== undefined) headers['www-authenticate'] = value;
  if (error.retryAfter !== undefined) headers['retry-after'] = retryAfterHeader(error.retryAfter);
  const hint = exposeHints ? ownText(error.hint) : undefined;
  return {
    status,
    headers,
    body: problem(status, error.code, title, ownText(error.message) ?? '', ownText(error.claim), hint),
  };
}

/**
 * Turns a failure into `{ status, headers, body }`. An {@link AuthError} keeps its status and code;
 * a {@link ConfigurationError} is 500 `configuration_error`; anything else is 500 `internal_error`
 * with no detail of its own (it may hold secrets). The error's `hint` is in the body only with
 * `exposeHints: true`; never in `WWW-Authenticate`.
 * @throws {TypeError} when `realm` or `exposeHints` is malformed.
 */
export function toErrorResponse(error: unknown, options: ErrorResponseOptions = {}): ErrorResponse {
  rejectUnknownOptions('toErrorResponse', options, ERROR_RESPONSE_OPTION_NAMES);
  const realm = checkRealm(options.realm);
  const exposeHints = checkExposeHints(options.exposeHints);
  if (isAuthError(error)) return fromAuthError(error, realm, exposeHints);
  const detail = "The server is not able to check this request's authorization.";
  if (error instanceof ConfigurationError) {
    return {
      status: 500,
      headers: { ...BASE_HEADERS },
      body: problem(500, error.code, 'Server misconfiguration', detail),
    };
  }
  return {
    status: 500,
    headers: { ...BASE_HEADERS },
    body: problem(500, 'internal_error', 'Internal server error', detail),
  };
}

/** An {@link ErrorResponse} as an adapter sends it: the body's text, and headers with its length. */
export interface SerializedErrorResponse {
  readonly status: number;
  /** `response.headers` and `content-length`, the byte length of `text`. */
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string;
}

/**
 * `response` with its body as JSON text and that text's `content-length` among the headers: set by
 * the adapter, not left to the framework, so a refused `HEAD` (answered without the body) carries
 * the length a `GET` gets, as Koa and Fastify answer it.
 */
export function serializeErrorResponse(response: ErrorResponse): SerializedErrorResponse {
  const text = JSON.stringify(response.body);
  const headers = { ...response.headers, 'content-length': String(new TextEncoder().encode(text).byteLength) };
  return { status: response.status, headers, text };
}
