/**
 * paygate-auth: verification of the payment gateway's JWT bearer tokens.
 *
 * @module paygate-auth
 */
export type { AuthContext, AuthTenant } from './core/auth-context.js';
export type { CacheAdmission } from './core/cache-admission.js';
export type { TokenTimes } from './core/claims.js';
export {
  type Ern,
  ErnError,
  type ErnErrorReason,
  type ErnKind,
  MAX_NAME_PART_LENGTH,
  PUBLIC_TENANT_ID,
  type ReferenceCollection,
  type RelativeReference,
  type TenantErn,
  type UserReference,
  type UserReferenceParts,
  formatReference,
  formatTenantErn,
  formatUserReference,
  parseErn,
  parseReference,
  parseTenantErn,
  parseUserReference,
} from './core/ern.js';
export {
  AUTH_ERROR_CODES,
  AuthError,
  type AuthErrorCode,
  type AuthErrorOptions,
  type RuleName,
  type RuleOutcome,
  type RuleTrace,
  type BearerErrorCode,
  ConfigurationError,
  isAuthError,
} from './core/errors.js';
export type {
  AlgorithmFacts,
  AudienceFacts,
  AudienceMatchFacts,
  ClaimFacts,
  ClaimType,
  ClaimTypeFacts,
  ClockFacts,
  CritFacts,
  ErnClaimFacts,
  ErnClaimFactsOf,
  ExpiryFacts,
  FactCode,
  FactsByCode,
  FailureFacts,
  FailureFactsInput,
  FormatFacts,
  FormatProblem,
  HeldKeysFacts,
  InvalidClaimFacts,
  IssuerFacts,
  JwksFailureFacts,
  KeyAlgorithmFacts,
  KeyFacts,
  KidFacts,
  EmptyLifetimeFacts,
  LifetimeFacts,
  MissingExpiryFacts,
  NotBeforeFacts,
  PassedFacts,
  RevokedKeyFacts,
  ScopesFacts,
  SignatureFacts,
  SizeFacts,
  SubjectFacts,
  SuspendedFacts,
  TenantExpectation,
  TenantFacts,
  TimeClaim,
  TimeClaimFacts,
  TypFacts,
} from './core/facts.js';
export type {
  CacheEvent,
  IssuerSuspensionEvent,
  JwksFetchEvent,
  JwksFetchTrigger,
  KeyBreach,
  KeyBreachEvent,
  KeysRemovedEvent,
  RegistryChangedEvent,
  VerifierEvent,
  VerifierEventListener,
  VerifyFailureEvent,
  VerifySuccessEvent,
} from './core/events.js';
export { eventLine } from './core/event-line.js';
export { quote } from './core/hint-text.js';
export { JwksAddressError, type JwksAddressRefusal, type JwksAddressRule } from './core/jwks-address.js';
export type { FetchLike, JwksFailureReason } from './core/jwks-fetch.js';
export type { IssuerKeySnapshot, KeyLoadReport, KeySnapshot } from './core/jwks-cache.js';
export type { KeyHistoryChanges, KeyHistoryEntry } from './core/key-history.js';
export { RSA_ALGORITHMS, type RsaAlgorithm } from './core/jose-header.js';
export { type IgnoredKey, type RsaPublicJwk, MIN_MODULUS_BITS } from './core/jwk.js';
export {
  type IssuerEntry,
  IssuerRegistry,
  type IssuerRegistryOptions,
  type RegisteredIssuer,
  type RegistryChange,
} from './core/registry.js';
export {
  KNOWN_SCOPES,
  type KnownScope,
  type NormalizedScopeRequirement,
  SCOPES,
  ScopeError,
  type ScopeRequirement,
  ScopeSet,
  hasScopes,
  isKnownScope,
  parseScopes,
} from './core/scopes.js';
export type { SignatureEngineName } from './core/signature.js';
export { type MergeKeyHistoryOptions, type Verifier, type VerifierOptions, createVerifier } from './core/verifier.js';
export {
  type AuthResult,
  type AuthenticateInput,
  type AuthenticatingVerifier,
  authenticate,
  authorizeScopes,
} from './http/authenticate.js';
export { type AuthorizationInput, extractBearerToken } from './http/authorization.js';
export {
  DEFAULT_REALM,
  type ErrorResponse,
  type ErrorResponseOptions,
  type ProblemDetails,
  toErrorResponse,
} from './http/error-response.js';
