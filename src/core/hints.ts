/**
 * Hints: a failure's facts (recorded by the rule that failed) written as one line for the
 * integrator's logs, only when someone reads `AuthError.hint` (the audiences expected against the
 * token's `aud`, its `kid` against the kids held, a near-miss issuer…). Nothing here decodes the
 * token. A hint quotes only what the client sent and public configuration, never the token, a
 * signature or key material, nor the tenants of a limited integration (other customers); values
 * are cut, then escaped (see `hint-text.ts`), linearly: one safe log line whatever the token holds.
 */
import type { FormatFacts } from './compact-jws.js';
import { formatMemberPath } from './duplicate-members.js';
import type { AuthErrorCode, FailureFacts } from './errors.js';
import { capHint, kindOf, quote, quoteList } from './hint-text.js';
import { findNearMiss } from './near-miss.js';

/** A time claim above this many seconds since the epoch (the year 5138) is taken for milliseconds. */
export const MILLISECONDS_THRESHOLD = 1e11;
/** An expiry below this many seconds since the epoch (2001) is taken for a duration. */
const DURATION_THRESHOLD = 1e9;

type Render = (facts: FailureFacts) => string | undefined;

/** `"alg"` is `"HS256"` / is a number / is missing: a value the token had, or its kind. */
function shown(value: unknown): string {
  return typeof value === 'string' ? quote(value) : kindOf(value);
}

/** The sentence naming the time values that look like milliseconds, or `''`. */
function millisecondsNote(values: readonly (readonly [string, number])[]): string {
  const large = values.filter(([, value]) => value > MILLISECONDS_THRESHOLD);
  if (large.length === 0) return '';
  const named = large.map(([claim, value]) => `"${claim}" (${value})`).join(', ');
  return ` ${named} ${large.length === 1 ? 'looks' : 'look'} like milliseconds since the epoch: NumericDate claims are seconds.`;
}

function formatHint(facts: FailureFacts): string | undefined {
  const actual = facts.actual as FormatFacts;
  if ('kind' in actual) return `The token is ${actual.kind}, not a string.`;
  if ('segments' in actual) {
    if (actual.segments === 5) return 'The token has five segments: an encrypted token (JWE), which this verifier does not read.';
    if (actual.segments === 1) return 'The token has no dots: an opaque token, not a JWT.';
    return `The token has ${actual.segments} segments; a signed JWT has three.`;
  }
  if (actual.problem === 'repeated_member') return `The token ${actual.segment} repeats the member ${formatMemberPath(actual.member)}.`;
  if (actual.problem === 'json') return `The token ${actual.segment} is not a JSON object.`;
  return `The token ${actual.segment} is not canonical unpadded base64url.`;
}

function sizeHint(facts: FailureFacts): string {
  const { length, bytes } = facts.actual as { length: number; bytes?: number };
  return `The token is ${bytes === undefined ? `at least ${length}` : bytes} bytes; maxTokenBytes is ${String(facts.expected)}.`;
}

function issuerHint(facts: FailureFacts): string | undefined {
  if (typeof facts.actual !== 'string') return `The token's "iss" is ${kindOf(facts.actual)}.`;
  const iss = facts.actual as string;
  const issuers = facts.expected as readonly string[];
  const miss = findNearMiss(iss, issuers);
  if (miss !== undefined) {
    return `The token's "iss" is ${quote(iss)}; the registered issuer ${quote(miss.candidate)} differs from it only by ${miss.difference} (issuers are compared exactly).`;
  }
  const none =
    issuers.length === 1 ? 'the one registered issuer neither matches it' : `none of the ${issuers.length} registered issuers matches it`;
  return `The token's "iss" is ${quote(iss)}; ${none}, nor differs from it only by a trailing slash, letter case or http/https.`;
}

function keyHint(facts: FailureFacts): string | undefined {
  // One of: the kids held (unknown kid), the JWKS that failed, a revoked key, a key of another alg.
  const expected = facts.expected as {
    issuer?: string;
    kids?: string[];
    fetchedAt?: number;
    now?: number;
    jwksUri?: string;
    failure?: string | null;
    reason?: string | null;
    kid?: string;
    alg?: string;
    revoked?: boolean;
  };
  const issuer = quote(expected.issuer ?? '');
  if (expected.jwksUri !== undefined && expected.reason === 'address') {
    return `The keys of ${issuer} are not loaded from ${quote(expected.jwksUri)}: ${expected.failure ?? 'its host is a special-purpose address.'}`;
  }
  if (expected.jwksUri !== undefined) {
    const why = expected.failure === null || expected.failure === undefined ? '' : ` (${expected.failure})`;
    return `The keys of ${issuer} are loaded from ${quote(expected.jwksUri)}, which failed${why}; is that the URL the JWKS is served at now? jwks_fetch events and warmUp() report each failure.`;
  }
  if (expected.revoked === true) return `The key ${shown(facts.actual)} of ${issuer} was revoked with revokeKey().`;
  if (expected.alg !== undefined) {
    return `The key ${quote(expected.kid ?? '')} of ${issuer} is held, published for ${quote(expected.alg)}; the token's "alg" is ${shown(facts.actual)}.`;
  }
  const kid = facts.actual as string;
  const kids = expected.kids ?? [];
  if (expected.fetchedAt === undefined || expected.fetchedAt === 0)
    return `The token's "kid" is ${quote(kid)}; no keys are held for ${issuer}.`;
  const age = Math.max(0, Math.round(((expected.now ?? 0) - expected.fetchedAt) / 1000));
  let hint = `The token's "kid" is ${quote(kid)}; the keys held for ${issuer} (its JWKS loaded ${age} s ago) are ${quoteList(kids)}.`;
  const miss = findNearMiss(kid, kids);
  if (miss !== undefined) hint += ` ${quote(miss.candidate)} differs from it only by ${miss.difference}.`;
  return `${hint} An unknown kid reloads the JWKS at most once per jwksCooldown.`;
}

function claimHint(facts: FailureFacts): string | undefined {
  if (facts.rule === 'expiry')
    return 'The token carries neither "expt" (this contract\'s expiry) nor "exp" (RFC 7519\'s): one is required.';
  if (facts.claim === 'iss') return issuerHint(facts);
  if (facts.claim === 'user_ern' && typeof facts.expected === 'string') {
    return `The token's "user_ern" ${quote(facts.actual as string)} names a product other than its tenant's, ${quote(facts.expected)}.`;
  }
  return facts.claim === undefined ? undefined : `The token's "${facts.claim}" is ${kindOf(facts.actual)}.`;
}

function expiredHint(facts: FailureFacts): string {
  const expiry = facts.actual as number;
  const { now, tolerance } = facts.expected as { now: number; tolerance: number };
  let hint = `"${String(facts.claim)}" (${expiry}) passed ${Math.round(now - expiry)} s ago (clock tolerance ${tolerance} s).`;
  if (expiry < DURATION_THRESHOLD) hint += ` ${expiry} looks like a duration, not a time in seconds since the epoch.`;
  return hint;
}

function notYetValidHint(facts: FailureFacts): string {
  const value = facts.actual as number;
  const { now, tolerance } = facts.expected as { now: number; tolerance: number };
  const ahead = `"${String(facts.claim)}" is ${Math.round(value - now)} s ahead of this verifier's clock`;
  const note = millisecondsNote([[String(facts.claim), value]]);
  if (note !== '') return `${ahead}.${note}`;
  return `${ahead} (clock tolerance ${tolerance} s): are the issuer's and this server's clocks in step?`;
}

function lifetimeHint(facts: FailureFacts): string {
  const actual = facts.actual as {
    lifetime: number;
    expiry: number;
    expiryClaim: string;
    start: number;
    startClaim: string;
  };
  const { maximum, issuerOwn } = facts.expected as { maximum: number; issuerOwn: boolean };
  const note = millisecondsNote([
    [actual.expiryClaim, actual.expiry],
    [actual.startClaim, actual.start],
  ]);
  return `"${actual.expiryClaim}" − "${actual.startClaim}" is ${actual.lifetime} s; at most ${maximum} s is allowed${issuerOwn ? ' for this issuer' : ''}.${note}`;
}

function audienceHint(facts: FailureFacts): string {
  const audiences = facts.expected as readonly string[];
  const aud = facts.actual;
  const values = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter((item): item is string => typeof item === 'string') : [];
  const expected = `this verifier expects ${quoteList(audiences)}`;
  if (values.length === 0) return `The token names no audience; ${expected}.`;
  const hint = `The token's "aud" is ${quoteList(values)}; ${expected}.`;
  // The values quoted, no more: the near-miss search is bounded like the list.
  for (const value of values.slice(0, 8)) {
    const miss = findNearMiss(value, audiences);
    if (miss !== undefined) return `${hint} ${quote(value)} differs from ${quote(miss.candidate)} only by ${miss.difference}.`;
  }
  return hint;
}

function subjectHint(facts: FailureFacts): string | undefined {
  const iss = facts.expected;
  if (typeof iss !== 'string') return undefined;
  if (typeof facts.actual !== 'string')
    return `The token carries no "sub"; ${quote(iss)} is registered with subjectMustEqualIssuer: "sub" must be exactly its "iss".`;
  const miss = findNearMiss(facts.actual, [iss]);
  const how = miss === undefined ? '' : `, and differs from it only by ${miss.difference}`;
  return `${quote(iss)} is registered with subjectMustEqualIssuer: "sub" must be exactly its "iss"${how}.`;
}

function tenantHint(facts: FailureFacts): string {
  const expected = facts.expected as { issuer: string; products: string[]; tenants: number | null };
  const tenant = facts.actual as { product: string; id: string };
  if (!expected.products.includes(tenant.product)) {
    return `The token's tenant is of product ${quote(tenant.product)}; ${quote(expected.issuer)} is registered for ${quoteList(expected.products)}.`;
  }
  return `The token's tenant ${quote(tenant.id)} is not among the ${expected.tenants ?? 0} tenants ${quote(expected.issuer)} is registered for (a limited integration).`;
}

function signatureHint(facts: FailureFacts): string | undefined {
  const { issuer, kid } = facts.expected as { issuer: string; kid: string };
  return `The signature was checked with the key ${quote(kid)} of ${quote(issuer)}: was the token signed with another key published under the same kid, or altered?`;
}

function scopesHint(facts: FailureFacts): string {
  const granted = facts.actual as readonly string[];
  const { mode, scopes } = facts.expected as { mode: 'allOf' | 'anyOf'; scopes: readonly string[] };
  const grants = `The token grants ${granted.length === 0 ? 'no scope' : quoteList(granted)}`;
  if (mode === 'anyOf') return `${grants}; it needs one of ${quoteList(scopes)}.`;
  return `${grants}; it lacks ${quoteList(scopes.filter((scope) => !granted.includes(scope)))}.`;
}

const HINTS: Partial<Record<AuthErrorCode, Render>> = {
  token_too_large: sizeHint,
  malformed_token: formatHint,
  unsupported_algorithm: (facts) => `The token's "alg" is ${shown(facts.actual)}.`,
  missing_kid: (facts) =>
    typeof facts.actual === 'string'
      ? `The token's "kid" has ${facts.actual.length} characters.`
      : `The token's "kid" is ${kindOf(facts.actual)}.`,
  invalid_typ: (facts) => `The token's "typ" is ${shown(facts.actual)}.`,
  unsupported_crit: (facts) => `The token's header carries "crit" (${kindOf(facts.actual)}).`,
  unknown_issuer: issuerHint,
  unknown_key: keyHint,
  key_revoked: keyHint,
  jwks_unavailable: keyHint,
  issuer_suspended: (facts) => `${quote(String(facts.expected))} is suspended with suspendIssuer() until resumeIssuer().`,
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
 * The hint for a failure with `code` and `facts`, or `undefined` where nothing helps more than the
 * message. Never throws: a hint that cannot be written is left out.
 */
export function renderHint(code: AuthErrorCode, facts: FailureFacts): string | undefined {
  const render = HINTS[code];
  if (render === undefined) return undefined;
  try {
    const hint = render(facts);
    return hint === undefined ? undefined : capHint(hint);
  } catch {
    return undefined;
  }
}
