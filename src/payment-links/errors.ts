/**
 * Request failures of the reference handlers, as classes with stable codes, and their
 * `application/problem+json` responses (the shape of `toErrorResponse` bodies, plus `errors`).
 */
import { PROBLEM_TYPE_BASE, retryAfterHeader } from '../internal/index.js';
import type { FieldError } from './field-errors.js';

/** Stable codes of a {@link PaymentLinkError}. New codes may be added, none renamed. */
export type PaymentLinkErrorCode =
  | 'validation_failed'
  | 'invalid_json'
  | 'invalid_body'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'invalid_idempotency_key'
  | 'idempotency_key_reused'
  | 'idempotency_key_in_use'
  | 'idempotency_unavailable'
  | 'storage_unavailable'
  | 'public_tenant_not_allowed'
  | 'payment_link_not_found';

interface CodeInfo {
  readonly status: number;
  readonly title: string;
}

/** Status and title of each code. */
export const PAYMENT_LINK_ERROR_CODES: Readonly<Record<PaymentLinkErrorCode, CodeInfo>> = Object.freeze({
  validation_failed: { status: 400, title: 'Invalid request fields' },
  invalid_json: { status: 400, title: 'Body is not JSON' },
  invalid_body: { status: 400, title: 'Body is not a JSON object' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  payload_too_large: { status: 413, title: 'Body too large' },
  invalid_idempotency_key: { status: 400, title: 'Invalid Idempotency-Key' },
  idempotency_key_reused: { status: 409, title: 'Idempotency-Key reused' },
  idempotency_key_in_use: { status: 409, title: 'Idempotency-Key in use' },
  idempotency_unavailable: { status: 503, title: 'Idempotency records unavailable' },
  storage_unavailable: { status: 503, title: 'Storage unavailable' },
  public_tenant_not_allowed: { status: 403, title: 'Not allowed for the public tenant' },
  payment_link_not_found: { status: 404, title: 'Payment link not found' },
});

/** Extra facts a {@link PaymentLinkError} may carry. */
export interface PaymentLinkErrorOptions {
  /**
   * Every invalid field (`validation_failed`): the problem's `errors`.
   * @default undefined (no `errors` in the problem)
   */
  readonly errors?: readonly FieldError[] | undefined;
  /**
   * Seconds before a retry may succeed (the 503s): `Retry-After` sends it in whole seconds from 1
   * to a day.
   * @default undefined (no `Retry-After`)
   */
  readonly retryAfter?: number | undefined;
  /**
   * The underlying failure (a store's error, say), as the error's `cause`; never sent to the client.
   * @default undefined
   */
  readonly cause?: unknown;
}

/** A request the handlers refuse. `code` is stable; `status` is the HTTP status it is answered with. */
export class PaymentLinkError extends Error {
  override readonly name = 'PaymentLinkError';
  readonly code: PaymentLinkErrorCode;
  readonly status: number;
  readonly title: string;
  readonly errors: readonly FieldError[] | undefined;
  readonly retryAfter: number | undefined;

  constructor(code: PaymentLinkErrorCode, message: string, options: PaymentLinkErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const info = PAYMENT_LINK_ERROR_CODES[code];
    this.code = code;
    this.status = info.status;
    this.title = info.title;
    this.errors = options.errors;
    this.retryAfter = options.retryAfter;
  }
}

/** An RFC 9457 problem of the reference handlers: `toErrorResponse`'s shape, plus `errors` for invalid fields. */
export interface PaymentLinkProblem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: PaymentLinkErrorCode;
  readonly errors?: readonly FieldError[];
}

/** The response of a {@link PaymentLinkError}. */
export function problemResponse(error: PaymentLinkError): {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: PaymentLinkProblem;
} {
  const headers: Record<string, string> = { 'content-type': 'application/problem+json', 'cache-control': 'no-store' };
  if (error.retryAfter !== undefined) headers['retry-after'] = retryAfterHeader(error.retryAfter);
  const body: PaymentLinkProblem = {
    type: `${PROBLEM_TYPE_BASE}${error.code}`,
    title: error.title,
    status: error.status,
    detail: error.message,
    code: error.code,
    ...(error.errors === undefined ? {} : { errors: error.errors }),
  };
  return { status: error.status, headers, body };
}
