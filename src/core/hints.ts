/**
 * Hints: a failure's facts (recorded by the rule that failed, typed per code in `facts.ts`) written
 * as one line for the integrator's logs, only when someone reads `AuthError.hint`. Each names the
 * value found and the value expected (the audiences expected against the token's `aud`, its `kid`
 * against the kids held, the registered issuers, a near miss first…). Nothing here decodes the
 * token. A hint quotes only what the client sent, what its issuer's JWKS said and public
 * configuration, never the token, a signature or key material, nor the tenants of a limited
 * integration (other customers); values are cut, then escaped (see `hint-text.ts`), linearly: one
 * safe log line whatever the token holds.
 */
import { formatMemberPath } from './duplicate-members.js';
import type { ErnErrorReason } from './ern.js';
import type { ClaimType, ClockFacts, ErnClaimFacts, FactCode, FailureFacts, HeldKeysFacts, KeyAlgorithmFacts } from './facts.js';
import { MAX_LISTED, capHint, isoSeconds, kindOf, quote, quoteList } from './hint-text.js';
import { findNearMiss, nearMissesFirst } from './near-miss.js';

/** A time claim above this many seconds since the epoch (the year 5138) is taken for milliseconds. */
export const MILLISECONDS_THRESHOLD = 1e11;
/** An expiry below this many seconds since the epoch (2001) is taken for a duration. */
const DURATION_THRESHOLD = 1e9;

/** Writes the hint of each code from its facts; `undefined` where nothing helps more than the message. */
type HintWriters = { readonly [K in FactCode]: (facts: FailureFacts<K>) => string | undefined };

/** `"HS256"` / `a number` / `missing`: a value the token had, quoted when a string, else its kind. */
function shown(value: unknown): string {
  return typeof value === 'string' ? quote(value) : kindOf(value);
}

/** `the string "300"`, `-5`, `an object`, `missing`: a claim's value, its kind named. */
function described(value: unknown): string {
  if (typeof value === 'string') return `the string ${quote(value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return kindOf(value);
}

/** `2030-01-01T11:00:00Z (1893495600)`: a time claim as a date and as the token wrote it. */
function dated(seconds: number): string {
  return `${isoSeconds(seconds)} (${seconds})`;
}

/** `this verifier's clock, 2030-01-01T12:00:00Z (clock tolerance 30 s)`. */
function clock({ now, tolerance }: ClockFacts): string {
  return `this verifier's clock, ${isoSeconds(now)} (clock tolerance ${tolerance} s)`;
}

/** The sentence naming the time values that look like milliseconds, or `''`. */
function millisecondsNote(values: readonly (readonly [string, number])[]): string {
  const large = values.filter(([, value]) => value > MILLISECONDS_THRESHOLD);
  if (large.length === 0) return '';
  const named = large.map(([claim, value]) => `"${claim}" (${value})`).join(', ');
  return ` ${named} ${large.length === 1 ? 'looks' : 'look'} like milliseconds since the epoch: NumericDate claims are seconds.`;
}

function formatHint({ actual }: FailureFacts<'malformed_token'>): string {
  if ('kind' in actual) return `The token is ${actual.kind}, not a string.`;
  if ('segments' in actual) {
    if (actual.segments === 5) return 'The token has five segments: an encrypted token (JWE), which this verifier does not read.';
    if (actual.segments === 1) return 'The token has no dots: an opaque token, not a JWT.';
    return `The token has ${actual.segments} segments; a signed JWT has three.`;
  }
  if (actual.problem === 'repeated_member') {
    return `The token ${actual.segment} repeats the member ${formatMemberPath(actual.member)}; each member name may appear once.`;
  }
  if (actual.problem === 'json') return `The token ${actual.segment} is not a JSON object; a signed JWT's header and payload are.`;
  return `The token ${actual.segment} is not canonical unpadded base64url, as each segment of a signed JWT must be.`;
}

function sizeHint({ expected, actual }: FailureFacts<'token_too_large'>): string {
  return `The token is ${actual.bytes === undefined ? `at least ${actual.length}` : actual.bytes} bytes; maxTokenBytes is ${expected}.`;
}

function kidHint({ expected, actual }: FailureFacts<'missing_kid'>): string {
  const found = typeof actual === 'string' ? `has ${actual.length} characters` : `is ${kindOf(actual)}`;
  return `The token's "kid" ${found}; it must name its signing key in 1 to ${expected} characters.`;
}

function critHint({ actual }: FailureFacts<'unsupported_crit'>): string {
  const strings = Array.isArray(actual) && actual.every((item) => typeof item === 'string');
  const found = strings ? `names ${quoteList(actual)}` : `is ${kindOf(actual)}`;
  return `The token's "crit" ${found}; this verifier supports no critical header parameter: leave "crit" out.`;
}

function issuerHint({ expected, actual, removed }: FailureFacts<'unknown_issuer'>): string {
  const found = `The token's "iss" is ${quote(actual)}`;
  if (removed === true) return `${found}; it was removed from the registry while its token was verified.`;
  if (expected.length === 0) return `${found}; no issuer is registered.`;
  // The first listed only: the others are counted.
  const ranked = nearMissesFirst(actual, expected, MAX_LISTED);
  const list = quoteList(
    ranked.map((entry) => entry.candidate),
    expected.length,
  );
  const registered = expected.length === 1 ? `the registered issuer is ${list}` : `the registered issuers are ${list}`;
  const [first] = ranked;
  if (first?.difference === undefined) {
    return `${found}; ${registered}, compared exactly (none differs from it only by a trailing slash, letter case or http/https).`;
  }
  return `${found}; ${registered}. ${quote(first.candidate)} differs from it only by ${first.difference} (issuers are compared exactly).`;
}

/** `modulus of 1024 bits, under 2048`; several reasons (two keys under one kid) joined. */
function ignoredReasons(ignored: HeldKeysFacts['expected']['ignored']): string {
  return ignored.map((entry) => entry.reason).join('; ');
}

function heldKeysHint(expected: HeldKeysFacts['expected'], actual: string): string {
  const issuer = quote(expected.issuer);
  const kid = quote(actual);
  if (expected.fetchedAt === 0) return `The token's "kid" is ${kid}; no keys are held for ${issuer}.`;
  const age = Math.max(0, Math.round((expected.now - expected.fetchedAt) / 1000));
  const held = `usable keys held for ${issuer} (its JWKS loaded ${age} s ago) are ${quoteList(expected.kids)}`;
  if (expected.ignored.length > 0) {
    const why = ignoredReasons(expected.ignored);
    return `The token's "kid" is ${kid}; the JWKS of ${issuer} lists it, but it was ignored: ${why}. The ${held}.`;
  }
  let hint = `The token's "kid" is ${kid}; the ${held}.`;
  const miss = findNearMiss(actual, expected.kids);
  if (miss !== undefined) hint += ` ${quote(miss.candidate)} differs from it only by ${miss.difference}.`;
  return `${hint} An unknown kid reloads the JWKS at most once per jwksCooldown.`;
}

function keyAlgorithmHint(expected: KeyAlgorithmFacts['expected'], actual: string): string {
  return `The key ${quote(expected.kid)} of ${quote(expected.issuer)} is published for ${quote(expected.alg)}; the token's "alg" is ${quote(actual)}.`;
}

function unknownKeyHint({ expected, actual }: FailureFacts<'unknown_key'>): string {
  return 'alg' in expected ? keyAlgorithmHint(expected, actual) : heldKeysHint(expected, actual);
}

function jwksHint({ expected }: FailureFacts<'jwks_unavailable'>): string {
  const issuer = quote(expected.issuer);
  if (expected.reason === 'address') {
    return `The keys of ${issuer} are not loaded from ${quote(expected.jwksUri)}: ${expected.failure ?? 'its host is a special-purpose address.'}`;
  }
  const why = expected.failure === null ? '' : ` (${expected.failure})`;
  return `The keys of ${issuer} are loaded from ${quote(expected.jwksUri)}, which failed${why}; is that the URL the JWKS is served at now? jwks_fetch events and warmUp() report each failure.`;
}

/** What a claim of each type must be. */
const CLAIM_TYPES: Readonly<Record<ClaimType, string>> = {
  numeric_date: 'a NumericDate (seconds since the epoch, a number ≥ 0)',
  string: 'a string',
  string_or_strings: 'a string or an array of strings',
  scope_list: 'scope tokens separated by single spaces',
};

/** What is wrong with a resource name, by the part `ErnError` found at fault. */
const ERN_PARTS: Readonly<Record<ErnErrorReason, string>> = {
  not_a_string: 'it is not a string',
  prefix: 'its prefix is not "ern:" (nor, for a user, "//")',
  shape: 'its parts after the product do not match',
  product: 'its <product> is not 1 to 256 letters, digits, "-", "_" or "."',
  tenant_id: 'its <tenant-id> is not 1 to 256 letters, digits, "-", "_" or "."',
  user_id: 'its <user-id> is not 1 to 256 letters, digits, "-", "_" or "."',
  collection: 'a relative reference must name "users"',
  id: 'its <user-id> is not 1 to 256 letters, digits, "-", "_" or "."',
  not_public: 'a tenant ERN names a system actor only for the public tenant',
};

function ernHint({ claim, expected, actual, part }: ErnClaimFacts): string {
  const found = `The token's "${claim}" is ${typeof actual === 'string' ? quote(actual) : kindOf(actual)}`;
  if (expected.product !== undefined && typeof actual === 'string') {
    return `${found}; it names a product other than its tenant's, ${quote(expected.product)}.`;
  }
  const shapes = expected.shapes.map((shape) => `"${shape}"`);
  const shape = shapes.length === 1 ? `the shape ${shapes[0]}` : `one of the shapes ${shapes.join(', ')}`;
  const fault = part === undefined || part === 'not_a_string' ? '' : `: ${ERN_PARTS[part]}`;
  return `${found}; it must have ${shape}${fault}.`;
}

function claimHint(facts: FailureFacts<'invalid_claim'>): string {
  if (facts.rule === 'expiry') {
    return 'The token carries neither "expt" (this contract\'s expiry) nor "exp" (RFC 7519\'s): one is required.';
  }
  if (facts.rule === 'tenant_ern' || facts.rule === 'user_ern') return ernHint(facts);
  if (facts.rule === 'lifetime') {
    const { expiry, expiryClaim, start, startClaim } = facts.actual;
    return `"${expiryClaim}" is ${dated(expiry)}, not after "${startClaim}", ${dated(start)}: the token is valid at no moment. Sign it with "${expiryClaim}" after "${startClaim}".`;
  }
  return `The token's "${facts.claim}" is ${described(facts.actual)}; it must be ${CLAIM_TYPES[facts.expected]}.`;
}

function expiredHint({ claim, expected, actual }: FailureFacts<'token_expired'>): string {
  const ago = Math.round(expected.now - actual);
  let hint = `"${claim}" is ${dated(actual)}, ${ago} s before ${clock(expected)}.`;
  if (actual < DURATION_THRESHOLD) hint += ` ${actual} looks like a duration, not a time in seconds since the epoch.`;
  return hint;
}

function notYetValidHint({ claim, expected, actual }: FailureFacts<'token_not_yet_valid'>): string {
  const ahead = `"${claim}" is ${dated(actual)}, ${Math.round(actual - expected.now)} s ahead of ${clock(expected)}`;
  const note = millisecondsNote([[claim, actual]]);
  if (note !== '') return `${ahead}.${note}`;
  return `${ahead}: are the issuer's and this server's clocks in step?`;
}

function lifetimeHint({ expected, actual }: FailureFacts<'token_lifetime_exceeded'>): string {
  const note = millisecondsNote([
    [actual.expiryClaim, actual.expiry],
    [actual.startClaim, actual.start],
  ]);
  const span = `from ${isoSeconds(actual.start)} to ${isoSeconds(actual.expiry)}`;
  const limit = `at most ${expected.maximum} s is allowed${expected.issuerOwn ? ' for this issuer' : ''}`;
  return `"${actual.expiryClaim}" − "${actual.startClaim}" is ${actual.lifetime} s (${span}); ${limit}.${note}`;
}

function audienceHint({ expected, actual }: FailureFacts<'audience_mismatch'>): string {
  const values =
    typeof actual === 'string' ? [actual] : Array.isArray(actual) ? actual.filter((item): item is string => typeof item === 'string') : [];
  const expects = `this verifier expects ${quoteList(expected)}`;
  if (values.length === 0) return `The token names no audience; ${expects}.`;
  const hint = `The token's "aud" is ${quoteList(values)}; ${expects}.`;
  // The values quoted, no more: the near-miss search is bounded like the list.
  for (const value of values.slice(0, 8)) {
    const miss = findNearMiss(value, expected);
    if (miss !== undefined) return `${hint} ${quote(value)} differs from ${quote(miss.candidate)} only by ${miss.difference}.`;
  }
  return hint;
}

function subjectHint({ expected, actual }: FailureFacts<'subject_mismatch'>): string | undefined {
  if (expected === null) {
    // The only subject failure of an issuer registered without the rule: no `sub` at all.
    return 'The token carries no "sub"; every token must carry one (its issuer is registered with subjectMustEqualIssuer false, so any string will do).';
  }
  const rule = `${quote(expected)} is registered with subjectMustEqualIssuer: "sub" must be exactly its "iss", ${quote(expected)}`;
  if (typeof actual !== 'string') return `The token carries no "sub"; ${rule}.`;
  const miss = findNearMiss(actual, [expected]);
  const how = miss === undefined ? '' : `, from which it differs only by ${miss.difference}`;
  return `The token's "sub" is ${quote(actual)}; ${rule}${how}.`;
}

function tenantHint({ expected, actual }: FailureFacts<'tenant_not_allowed'>): string {
  if (!expected.products.includes(actual.product)) {
    return `The token's tenant is of product ${quote(actual.product)}; ${quote(expected.issuer)} is registered for ${quoteList(expected.products)}.`;
  }
  return `The token's tenant ${quote(actual.id)} is not among the ${expected.tenants ?? 0} tenants ${quote(expected.issuer)} is registered for (a limited integration).`;
}

function signatureHint({ expected, actual }: FailureFacts<'invalid_signature'>): string {
  return `The ${quote(actual)} signature does not verify with the key ${quote(expected.kid)} of ${quote(expected.issuer)}: was the token signed with another key published under the same kid, or altered?`;
}

function scopesHint({ expected, actual }: FailureFacts<'insufficient_scope'>): string {
  const grants = `The token grants ${actual.length === 0 ? 'no scope' : quoteList(actual)}`;
  if (expected.mode === 'anyOf') return `${grants}; it needs one of ${quoteList(expected.scopes)}.`;
  return `${grants}; it lacks ${quoteList(expected.scopes.filter((scope) => !actual.includes(scope)))}.`;
}

const HINTS: HintWriters = {
  token_too_large: sizeHint,
  malformed_token: formatHint,
  unsupported_algorithm: ({ expected, actual }) => `The token's "alg" is ${shown(actual)}; this verifier accepts ${quoteList(expected)}.`,
  missing_kid: kidHint,
  invalid_typ: ({ expected, actual }) =>
    `The token's "typ" is ${shown(actual)}; accepted are ${quoteList(expected)} (any case, "application/" prefix allowed) or no "typ".`,
  unsupported_crit: critHint,
  unknown_issuer: issuerHint,
  issuer_suspended: ({ expected }) => `${quote(expected)} is suspended with suspendIssuer() until resumeIssuer().`,
  unknown_key: unknownKeyHint,
  key_revoked: ({ expected, actual }) => `The key ${quote(actual)} of ${quote(expected.issuer)} was revoked with revokeKey().`,
  jwks_unavailable: jwksHint,
  invalid_signature: signatureHint,
  invalid_claim: claimHint,
  token_expired: expiredHint,
  token_not_yet_valid: notYetValidHint,
  token_lifetime_exceeded: lifetimeHint,
  audience_mismatch: audienceHint,
  subject_mismatch: subjectHint,
  tenant_not_allowed: tenantHint,
  insufficient_scope: scopesHint,
};

/**
 * The hint for a failure's `facts`, or `undefined` where nothing helps more than the message.
 * Never throws: a hint that cannot be written (facts a caller made up, say) is left out.
 */
export function renderHint<K extends FactCode>(facts: FailureFacts<K>): string | undefined {
  try {
    const write: ((facts: FailureFacts<K>) => string | undefined) | undefined = HINTS[facts.code];
    const hint = write?.(facts);
    return hint === undefined ? undefined : capHint(hint);
  } catch {
    return undefined;
  }
}
