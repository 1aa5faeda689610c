/**
 * What each rule compared, as data: one named type per rule, written where the rule runs. A rule
 * that passes reports its facts to a verifier's `trace` ({@link PassedFacts}); one that fails puts
 * them on its `AuthError` ({@link FailureFacts}), keyed on the code it answers, so
 * `switch (facts.code)` (then `facts.rule`, for `invalid_claim`) narrows to the exact shape. Hints,
 * the doctor and events read these types, never a cast.
 *
 * `expected` is configuration, a limit or the clock; `actual` is what the token (or the issuer's
 * JWKS) had, kept as found. Client values are hostile: anything that prints them cuts and escapes
 * them (see `hint-text.ts`). Times are in seconds since the epoch unless a name says otherwise.
 */
import type { JwsSegment } from './compact-jws.js';
import type { MemberPath } from './duplicate-members.js';
import type { ErnErrorReason } from './ern.js';
import type { IgnoredKey } from './jwk.js';
import type { JwksFailureReason } from './jwks-fetch.js';

/** The clock a time rule compared against: `now` in seconds since the epoch, `tolerance` in seconds. */
export interface ClockFacts {
  readonly now: number;
  readonly tolerance: number;
}

/** A time claim the verifier reads. */
export type TimeClaim = 'exp' | 'expt' | 'iat' | 'nbf';

/** `size`: the token's length against `maxTokenBytes`. */
export interface SizeFacts {
  readonly rule: 'size';
  /** `maxTokenBytes`. */
  readonly expected: number;
  /** The token's length in characters, and in UTF-8 bytes when it was counted. */
  readonly actual: { readonly length: number; readonly bytes?: number };
}

/**
 * What was wrong with a malformed token: not a string (what it is: `a number`, `missing`), its
 * number of segments, a segment that is not canonical base64url, one that is not a JSON object, or
 * one that repeats a member.
 */
export type FormatProblem =
  | { readonly kind: string }
  | { readonly segments: number }
  | { readonly segment: JwsSegment; readonly problem: 'base64url' | 'json' }
  | { readonly segment: JwsSegment; readonly problem: 'repeated_member'; readonly member: MemberPath };

/** `format` (failed): what was wrong; a compact JWS is three canonical base64url segments, two of JSON objects. */
export interface FormatFacts {
  readonly rule: 'format';
  readonly actual: FormatProblem;
}

/** `alg`: the token's `alg` (any JSON value) against the algorithms accepted. */
export interface AlgorithmFacts {
  readonly rule: 'alg';
  readonly expected: readonly string[];
  readonly actual: unknown;
}

/** `kid`: the token's `kid` (any JSON value) against the longest accepted. */
export interface KidFacts {
  readonly rule: 'kid';
  /** The longest `kid` accepted, in characters. */
  readonly expected: number;
  readonly actual: unknown;
}

/** `typ`: the token's `typ` (any JSON value, or absent) against the types accepted. */
export interface TypFacts {
  readonly rule: 'typ';
  readonly expected: readonly string[];
  readonly actual: unknown;
}

/** `crit`: the token's `crit`, when it has one (none is supported). */
export interface CritFacts {
  readonly rule: 'crit';
  readonly actual?: unknown;
}

/** `iss`: the token's `iss` against the registered issuers. */
export interface IssuerFacts {
  readonly rule: 'iss';
  readonly claim: 'iss';
  /** Every registered issuer, in the registry's order. */
  readonly expected: readonly string[];
  readonly actual: string;
  /** The issuer was registered when its token arrived, and removed while it was verified. */
  readonly removed?: boolean;
}

/** `suspended`: the issuer an operator suspended (`suspendIssuer()`). */
export interface SuspendedFacts {
  readonly rule: 'suspended';
  readonly expected: string;
}

/** `key` (passed): the token's `kid`, found among its issuer's keys. */
export interface KeyFacts {
  readonly rule: 'key';
  readonly expected: {
    readonly issuer: string;
    readonly kid: string;
    /** The key's published `alg`; `undefined` when it publishes none (any accepted alg). */
    readonly alg: string | undefined;
    readonly bits: number;
  };
  readonly actual: string;
}

/** `key` (`unknown_key`): the token's `kid` is not among the keys held for its issuer. */
export interface HeldKeysFacts {
  readonly rule: 'key';
  readonly expected: {
    readonly issuer: string;
    /** The kids of the usable keys held. */
    readonly kids: readonly string[];
    /** When they were downloaded, in milliseconds since the epoch; 0: never. */
    readonly fetchedAt: number;
    /** The verifier's clock, in milliseconds since the epoch. */
    readonly now: number;
    /** The entries of the last download under the token's `kid` that were ignored, each with the key rule it broke. */
    readonly ignored: readonly IgnoredKey[];
  };
  readonly actual: string;
}

/** `key` (`unknown_key`): the key is held, published for another algorithm than the token's. */
export interface KeyAlgorithmFacts {
  readonly rule: 'key';
  /** The key, and the `alg` it is published for. */
  readonly expected: { readonly issuer: string; readonly kid: string; readonly alg: string };
  /** The token's `alg`. */
  readonly actual: string;
}

/** `key` (`key_revoked`): the token's `kid` was revoked by an operator (`revokeKey()`). */
export interface RevokedKeyFacts {
  readonly rule: 'key';
  readonly expected: { readonly issuer: string; readonly revoked: true };
  readonly actual: string;
}

/** `key` (`jwks_unavailable`): the issuer's JWKS, from where, and why it could not be used. */
export interface JwksFailureFacts {
  readonly rule: 'key';
  readonly expected: {
    readonly issuer: string;
    readonly jwksUri: string;
    /** Why the last download failed, in words (no URL, token or key material); `null`: unknown. */
    readonly failure: string | null;
    readonly reason: JwksFailureReason | 'key_import' | null;
  };
}

/** `signature`: the key it was checked with, and the token's `alg`. */
export interface SignatureFacts {
  readonly rule: 'signature';
  readonly expected: { readonly issuer: string; readonly kid: string };
  readonly actual: string;
}

/** `exp`, `expt`, `iat`, `nbf` (passed): the claim is a NumericDate. */
export interface TimeClaimFacts {
  readonly rule: TimeClaim;
  readonly claim: TimeClaim;
  readonly actual: number;
}

/** `expiry`: the effective expiry (the earlier of `exp` and `expt`) against the clock. */
export interface ExpiryFacts {
  readonly rule: 'expiry';
  readonly claim: 'exp' | 'expt';
  readonly expected: ClockFacts;
  readonly actual: number;
}

/** `expiry` (`invalid_claim`): the token carries neither `expt` nor `exp`. */
export interface MissingExpiryFacts {
  readonly rule: 'expiry';
  readonly claim: 'exp';
  /** The claims looked for, this contract's first. */
  readonly expected: readonly ['expt', 'exp'];
}

/** `not_before`: `iat` (or `nbf`, when present) against the clock. */
export interface NotBeforeFacts {
  readonly rule: 'not_before';
  readonly claim: 'iat' | 'nbf';
  readonly expected: ClockFacts;
  readonly actual: number;
}

/** `lifetime`: `expiry − (nbf ?? iat)` against the maximum. */
export interface LifetimeFacts {
  readonly rule: 'lifetime';
  readonly claim: 'exp' | 'expt';
  /** The maximum in seconds, and whether it is the issuer's own (else the verifier's). */
  readonly expected: { readonly maximum: number; readonly issuerOwn: boolean };
  readonly actual: {
    /** Seconds. */
    readonly lifetime: number;
    readonly expiry: number;
    readonly expiryClaim: 'exp' | 'expt';
    readonly start: number;
    readonly startClaim: 'iat' | 'nbf';
  };
}

/**
 * `lifetime` (`invalid_claim`): the expiry is not after the start (`nbf`, else `iat`), so the
 * token is valid at no moment, whatever the clock tolerance lets through either side.
 */
export interface EmptyLifetimeFacts {
  readonly rule: 'lifetime';
  readonly claim: 'exp' | 'expt';
  /** The expiry must come after the start. */
  readonly expected: 'expiry_after_start';
  readonly actual: LifetimeFacts['actual'];
}

/** `aud` (`audience_mismatch`): the token's `aud` (absent, a string or strings) against the configured audiences. */
export interface AudienceFacts {
  readonly rule: 'aud';
  readonly claim: 'aud';
  readonly expected: readonly string[];
  readonly actual: unknown;
}

/** `aud` (passed): the token's `aud`, and the configured audience it names. */
export interface AudienceMatchFacts {
  readonly rule: 'aud';
  readonly claim: 'aud';
  readonly expected: string;
  /** A string or an array of strings. */
  readonly actual: unknown;
}

/** `sub`: the token's `sub` against its issuer; `expected` `null` where the entry waives the rule. */
export interface SubjectFacts {
  readonly rule: 'sub';
  readonly claim: 'sub';
  readonly expected: string | null;
  readonly actual: unknown;
}

/** What the tenant rule expects: the issuer's products, and how many tenants a limited integration lists (never which). */
export interface TenantExpectation {
  readonly issuer: string;
  readonly products: readonly string[];
  /** How many tenants the entry lists; `null`: every tenant of its products. */
  readonly tenants: number | null;
}

/**
 * `tenant_ern`: the token's tenant (its product and id; the ERN is not kept, as events carry
 * facts) against the issuer's products and tenants.
 */
export interface TenantFacts {
  readonly rule: 'tenant_ern';
  readonly claim: 'tenant_ern';
  readonly expected: TenantExpectation;
  readonly actual: { readonly product: string; readonly id: string };
}

/** `scope`, `tenant_name`, `user_ern` (passed): the claim as the token had it (absent included). */
export interface ClaimFacts {
  readonly rule: 'scope' | 'tenant_name' | 'user_ern';
  readonly claim: 'scope' | 'tenant_name' | 'user_ern';
  readonly actual: unknown;
}

/**
 * The type a claim must have: `numeric_date` (a number ≥ 0, seconds since the epoch), `string`,
 * `string_or_strings` (a string or an array of strings), `scope_list` (scope tokens separated by
 * single spaces).
 */
export type ClaimType = 'numeric_date' | 'string' | 'string_or_strings' | 'scope_list';

/** A claim missing or of the wrong type (`invalid_claim`): what it holds against the type due. */
export interface ClaimTypeFacts {
  readonly rule: TimeClaim | 'iss' | 'aud' | 'sub' | 'scope' | 'tenant_name';
  readonly claim: TimeClaim | 'iss' | 'aud' | 'sub' | 'scope' | 'tenant_name';
  readonly expected: ClaimType;
  readonly actual: unknown;
}

/**
 * A resource-name claim (`R`) that is missing or does not parse, or a `user_ern` naming a product
 * other than its tenant's (`invalid_claim`): the value against the shapes accepted, and the part at fault.
 */
export interface ErnClaimFactsOf<R extends 'tenant_ern' | 'user_ern'> {
  readonly rule: R;
  readonly claim: R;
  readonly expected: {
    /** The shapes accepted: `ern:<product>/tenants/<tenant-id>`, or each form of a user reference. */
    readonly shapes: readonly string[];
    /** The tenant's product, which a `user_ern` naming a product must name. */
    readonly product?: string;
  };
  readonly actual: unknown;
  /** The part at fault, as `ErnError.reason` names it; absent when the claim is missing. */
  readonly part?: ErnErrorReason;
}

/** `tenant_ern` or `user_ern` not of its shape (`invalid_claim`). */
export type ErnClaimFacts = ErnClaimFactsOf<'tenant_ern'> | ErnClaimFactsOf<'user_ern'>;

/** Every shape of `invalid_claim`, keyed on `rule`. */
export type InvalidClaimFacts = ClaimTypeFacts | MissingExpiryFacts | EmptyLifetimeFacts | ErnClaimFacts;

/** `scopes` (`insufficient_scope`, from `authenticate()`): the scopes granted against those required. */
export interface ScopesFacts {
  readonly rule: 'scopes';
  readonly expected: { readonly mode: 'allOf' | 'anyOf'; readonly scopes: readonly string[] };
  readonly actual: readonly string[];
}

/** The facts of each failure, by the code it answers. */
export interface FactsByCode {
  token_too_large: SizeFacts;
  malformed_token: FormatFacts;
  unsupported_algorithm: AlgorithmFacts;
  missing_kid: KidFacts;
  invalid_typ: TypFacts;
  unsupported_crit: CritFacts;
  unknown_issuer: IssuerFacts;
  issuer_suspended: SuspendedFacts;
  unknown_key: HeldKeysFacts | KeyAlgorithmFacts;
  key_revoked: RevokedKeyFacts;
  jwks_unavailable: JwksFailureFacts;
  invalid_signature: SignatureFacts;
  invalid_claim: InvalidClaimFacts;
  token_expired: ExpiryFacts;
  token_not_yet_valid: NotBeforeFacts;
  token_lifetime_exceeded: LifetimeFacts;
  audience_mismatch: AudienceFacts;
  subject_mismatch: SubjectFacts;
  tenant_not_allowed: TenantFacts;
  insufficient_scope: ScopesFacts;
}

/** A code whose failures carry facts (all but `missing_token` and `invalid_request`). */
export type FactCode = keyof FactsByCode;

/**
 * What a failing rule compared, with the `code` it answers: a union keyed on `code` (and, within
 * `invalid_claim` and `unknown_key`, on `rule` and the shape of `expected`). `FailureFacts<'token_expired'>`
 * names one code's facts.
 */
export type FailureFacts<C extends FactCode = FactCode> = { [K in C]: FactsByCode[K] & { readonly code: K } }[C];

/** {@link FailureFacts} as a rule hands them to `new AuthError()`: `code` may be left out (the error's is added). */
export type FailureFactsInput<C extends FactCode = FactCode> = { [K in C]: FactsByCode[K] & { readonly code?: K } }[C];

/** What a rule that passed compared, keyed on `rule`. */
export type PassedFacts =
  | SizeFacts
  | { readonly rule: 'format' | 'crit' }
  | AlgorithmFacts
  | KidFacts
  | TypFacts
  | IssuerFacts
  | KeyFacts
  | SignatureFacts
  | TimeClaimFacts
  | ExpiryFacts
  | NotBeforeFacts
  | LifetimeFacts
  | AudienceMatchFacts
  | SubjectFacts
  | TenantFacts
  | ClaimFacts;
