/**
 * paygate-auth/payment-links: reference handlers for `GET /info/` and `POST /payment-links/`
 * (plus `GET /payment-links/:id`), framework-agnostic and built on the public core API, with the
 * store and directory interfaces they need and in-memory implementations of them, and the OpenAPI
 * document that describes them.
 *
 * @module paygate-auth/payment-links
 */
export { ISO_4217_CODES, ISO_4217_PUBLISHED, NON_PAYMENT_CODES, isPaymentCurrency } from './currencies.js';
export {
  FRACTION_DIGITS,
  MAX_INTEGER_DIGITS,
  type DecimalProblem,
  type DecimalResult,
  formatDecimal,
  parseDecimal,
} from './decimal.js';
export {
  type Department,
  type Directory,
  InMemoryDirectory,
  type PaymentMethodSettings,
  type Shopper,
  type Store,
  type TenantSeed,
} from './directory.js';
export {
  PAYMENT_LINK_ERROR_CODES,
  PaymentLinkError,
  type PaymentLinkErrorCode,
  type PaymentLinkErrorOptions,
  type PaymentLinkProblem,
  problemResponse,
} from './errors.js';
export type { FieldError, FieldErrorCode } from './field-errors.js';
export { type GetPaymentLinkHandlerOptions, createGetPaymentLinkHandler } from './get-payment-link-handler.js';
export type { LinkCreatedEvent, PaymentLinkHandlerDeps } from './handler-deps.js';
export type { Handler, HandlerRequest, HandlerResponse, HeadersLike } from './handler-request.js';
export {
  type ClaimRequest,
  type ClaimResult,
  IdempotencyCapacityError,
  type IdempotencyStore,
  InMemoryIdempotencyStore,
  type InMemoryIdempotencyStoreOptions,
  type Lease,
  type RecordedResponse,
} from './idempotency-store.js';
export { MAX_IDEMPOTENCY_KEY_LENGTH, canonicalJson } from './idempotency-key.js';
export { type IdGenerator, LINK_CODE_BYTES, isUuid, randomIds, randomLinkCode } from './ids.js';
export { type InfoBody, type InfoHandlerOptions, createInfoHandler } from './info-handler.js';
export { LINE_ITEM_LIMITS, type LineItemRecord } from './line-items.js';
export { LINK_LIMITS, TOKENIZE_VALUES, type Tokenize } from './link-request.js';
export { META_LIMITS } from './meta.js';
export { NotificationTimeoutError } from './notification-timeout.js';
export {
  type JsonValue,
  type OpenApiDocument,
  type OpenApiDocumentOptions,
  type OpenApiOperationId,
  SECURITY_SCHEME,
  createOpenApiDocument,
} from './openapi.js';
export { type PaymentLink, type PaymentLinkStatus, type StoredPaymentLink, toPaymentLink } from './payment-link.js';
export { type PaymentLinkHandler, createPaymentLinkHandler } from './payment-link-handler.js';
export {
  DuplicatePaymentLinkError,
  InMemoryPaymentLinkStore,
  type LinkClaim,
  type LinkClaimOutcome,
  type LinkCompletion,
  type LinkCompletionOutcome,
  type PaymentLinkStore,
} from './payment-link-store.js';
export { StorageUnavailableError, type StorageUnavailableErrorOptions } from './storage-unavailable.js';
export { DEFAULT_MAX_BODY_BYTES } from './request-body.js';
