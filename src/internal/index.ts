/**
 * The package's internal shared module: helpers that several of its own areas use and that are not
 * for users. No entry of package.json#exports exposes it, and the boundary check
 * (.dependency-cruiser.cjs) lets every area import it.
 */
export { NAME_PART_PATTERN, isNamePart } from '../core/ern.js';
export { type MemberPath, findDuplicateMember, formatMemberPath } from '../core/duplicate-members.js';
export { MAX_LISTED, MAX_QUOTED_CHARS, capHint, isoSeconds, oneLineJson, quote, quoteList } from '../core/hint-text.js';
export { ignoreRejection } from '../core/events.js';
export { isJsonObject } from '../core/json-object.js';
export { checkAllowedHosts } from '../core/jwks-address.js';
export { MILLISECONDS_THRESHOLD } from '../core/hints.js';
export { isLoopbackHost } from '../core/loopback.js';
export {
  booleanOption,
  describe as describeValue,
  describeHolder,
  describeListFault,
  functionOption,
  methodsOption,
  nearestName,
  numberOption,
  optionNames,
  rejectUnknownOptions,
} from '../core/options.js';
export { MAX_ENTRY_LIFETIME, checkIssuerEntry, deriveRegistry, isHttpsUri } from '../core/registry.js';
export { WITHDRAWN_KEPT, checkKeyHistoryEntry } from '../core/key-history.js';
export { findNearMiss, withoutTrailingSlashes } from '../core/near-miss.js';
export { rejectReason as jwkRejectReason } from '../core/jwk.js';
export { MAX_KID_LENGTH } from '../core/jose-header.js';
export { normalizeScopeRequirement } from '../core/scopes.js';
export { DEFAULT_JWKS_TIMEOUT, MAX_JWKS_TIMEOUT, VERIFIER_OPTION_NAMES } from '../core/verifier.js';
export { scopeFailure } from '../http/authenticate.js';
export { PROBLEM_TYPE_BASE, checkRealm, retryAfterHeader } from '../http/error-response.js';
export { deepFreeze } from './deep-freeze.js';
export { MAX_IDEMPOTENCY_KEY_TTL_SECONDS, MAX_IDEMPOTENCY_LEASE_MS } from './idempotency-limits.js';
export { STORABLE_TEXT_PATTERN, isStorableText } from './storable-text.js';
export { hex, sha256, sha256Hex } from '../core/sha256.js';
export { encodeBase64Url } from '../core/base64url.js';
