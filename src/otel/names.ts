/**
 * The names of what paygate-auth/otel reports: its instruments, spans and attributes. Where an
 * OpenTelemetry semantic convention has a name for an attribute (`error.type`, the HTTP and URL
 * attributes), that name is used; the rest live under `paygate_auth.`, in the conventions' style
 * (dot-separated namespaces, snake_case words, durations in seconds, counts with a `{unit}`).
 */

/** The instrumentation scope of every meter and tracer. */
export const INSTRUMENTATION_SCOPE = 'paygate-auth';

/** The instruments. */
export const METRIC_NAMES = Object.freeze({
  /** Histogram, seconds: each `verify()`; its count is the verifications by outcome, code and issuer. */
  verificationDuration: 'paygate_auth.verification.duration',
  /** Histogram, seconds: each JWKS download (redirects and body included), by issuer, trigger and outcome. */
  jwksFetchDuration: 'paygate_auth.jwks.fetch.duration',
  /** Observable up-down counter, `{key}`: the keys each issuer has that verify now. */
  keyCount: 'paygate_auth.jwks.key.count',
  /** Counter, `{key}`: keys that stopped verifying, by issuer and cause. */
  keyRemovals: 'paygate_auth.jwks.key.removals',
  /** Counter, `{breach}`: key rules an issuer broke (once per issuer, key and rule). */
  keyBreaches: 'paygate_auth.key.breaches',
  /** Observable gauge, seconds: how far a PostgreSQL follower may be behind its table; 0 while it follows. */
  staleness: 'paygate_auth.postgres.staleness',
} as const);

/** The spans. */
export const SPAN_NAMES = Object.freeze({
  /** One `verify()`, INTERNAL. */
  verify: 'paygate_auth.verify',
  /** One JWKS download, CLIENT. */
  jwksFetch: 'paygate_auth.jwks.fetch',
} as const);

/** The attributes. */
export const ATTRIBUTE_NAMES = Object.freeze({
  /** The registered issuer (`iss`); absent while the token names none that is registered. */
  issuer: 'paygate_auth.issuer',
  /** `ok` or `rejected`. */
  verificationOutcome: 'paygate_auth.verification.outcome',
  /** `true` when the result cache answered. */
  verificationCached: 'paygate_auth.verification.cached',
  /** The `kid` of the issuer's key the token was checked against (spans only). */
  keyId: 'paygate_auth.key.id',
  /** Semantic conventions: the `AuthError` code of a rejection, the reason of a failed download. */
  errorType: 'error.type',
  /** Why a JWKS was downloaded: `initial`, `max_age`, `kid_miss`, `refresh`, `warm_up`. */
  jwksTrigger: 'paygate_auth.jwks.trigger',
  /** `ok` or `error`. */
  jwksOutcome: 'paygate_auth.jwks.outcome',
  /** Usable keys in a downloaded JWKS (spans only). */
  jwksKeys: 'paygate_auth.jwks.keys',
  /** Why keys stopped verifying: `jwks`, `revoked`, `expired`, `issuer_changed`, `issuer_removed`. */
  removalCause: 'paygate_auth.jwks.removal.cause',
  /** The key rule broken: `key_used_early`, `key_rotation_overdue`, `key_withdrawn`. */
  keyBreach: 'paygate_auth.key.breach',
  /** The PostgreSQL follower: `registry`, `controls`, `key_history`. */
  follower: 'paygate_auth.postgres.follower',
  /** Semantic conventions (HTTP client), on the JWKS download span. */
  httpRequestMethod: 'http.request.method',
  httpResponseStatusCode: 'http.response.status_code',
  urlFull: 'url.full',
  serverAddress: 'server.address',
  serverPort: 'server.port',
} as const);
