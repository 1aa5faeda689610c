/**
 * Hints: what a failed verification compared, for the integrator's logs and `verify_failure`
 * events. `audience_mismatch` names the audiences expected against the token's, `unknown_key` the
 * token's `kid` against the kids held, an expiry in milliseconds is called so, a near-miss issuer
 * (trailing slash, case, http/https) is named.
 *
 * A hint quotes only values the client itself sent (its token's `aud`, `iss`, `kid`, `alg`, time
 * claims, tenant) and public configuration (audiences, issuer URLs, JWKS URLs, kids, products):
 * never the token, a segment of it, a signature, or key material. Values are JSON-quoted and cut
 * (see `hint-text.ts`), so a hint is one safe log line. Tenant lists of limited integrations are
 * never quoted (they name other customers).
 *
 * @module paygate-auth
 */
import { decodeJoseHeader, decodeJwsPayload, locateCompactJws } from './compact-jws.js';
import { ErnError, type TenantErn, parseTenantErn } from './ern.js';
import { AuthError, type AuthErrorCode, withHint } from './errors.js';
import { capHint, kindOf, quote, quoteList } from './hint-text.js';
import type { KeySnapshot } from './jwks-cache.js';
import { findNearMiss } from './near-miss.js';
import type { IssuerRegistry } from './registry.js';

/** What a verifier knows that helps explain a failure: its configuration, keys and clock. */
export interface HintSources {
  /** The audiences a token's `aud` must name. */
  readonly audiences: readonly string[];
  readonly registry: IssuerRegistry;
  /** The held public keys (the verifier's `exportKeys()`); read only for key failures. */
  readonly keys: () => KeySnapshot;
  /** The clock at the failure, in milliseconds since the epoch. */
  readonly now: number;
  /** Seconds. */
  readonly clockTolerance: number;
  /** Seconds; an issuer's own wins. */
  readonly maxTokenLifetime: number;
  /** Bytes. */
  readonly maxTokenBytes: number;
}

/** A time claim above this many seconds since the epoch (the year 5138) is taken for milliseconds. */
export const MILLISECONDS_THRESHOLD = 1e11;
/** An expiry below this many seconds since the epoch (2001) is taken for a duration. */
const DURATION_THRESHOLD = 1e9;

/** The failure, and the token's parts decoded on first use (`undefined` when they do not decode). */
class Failure {
  readonly error: AuthError;
  readonly token: unknown;
  readonly sources: HintSources;
  #header: Record<string, unknown> | undefined | null = null;
  #payload: Record<string, unknown> | undefined | null = null;

  constructor(error: AuthError, token: unknown, sources: HintSources) {
    this.error = error;
    this.token = token;
    this.sources = sources;
  }

  get header(): Record<string, unknown> | undefined {
    if (this.#header === null) {
      this.#header = decodeSafely(() => decodeJoseHeader(this.token as string, locateCompactJws(this.token as string)));
    }
    return this.#header;
  }

  get payload(): Record<string, unknown> | undefined {
    if (this.#payload === null) this.#payload = decodeSafely(() => decodeJwsPayload(this.token as string, locateCompactJws(this.token as string)));
    return this.#payload;
  }

  /** The token's issuer as the error or the payload names it. */
  get issuer(): string | undefined {
    const iss = this.payload?.iss;
    return this.error.issuer ?? (typeof iss === 'string' ? iss : undefined);
  }
}

/** The token's header or payload as the verifier decodes it, or `undefined` where it does not decode. */
function decodeSafely(decode: () => Record<string, unknown>): Record<string, unknown> | undefined {
  try {
    return decode();
  } catch {
    return undefined;
  }
}

function stringMember(record: Record<string, unknown> | undefined, name: string): string | undefined {
  const value = record?.[name];
  return typeof value === 'string' ? value : undefined;
}

function numberMember(record: Record<string, unknown> | undefined, name: string): number | undefined {
  const value = record?.[name];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** The sentence naming the time claims that look like milliseconds, or `''`. */
function millisecondsNote(payload: Record<string, unknown> | undefined): string {
  const claims = ['exp', 'expt', 'iat', 'nbf'].filter((claim) => (numberMember(payload, claim) ?? 0) > MILLISECONDS_THRESHOLD);
  if (claims.length === 0) return '';
  const named = claims.map((claim) => `"${claim}" (${numberMember(payload, claim)})`).join(', ');
  return ` ${named} ${claims.length === 1 ? 'looks' : 'look'} like milliseconds since the epoch: NumericDate claims are seconds.`;
}

function audienceHint(failure: Failure): string | undefined {
  const { audiences } = failure.sources;
  const aud = failure.payload?.aud;
  const expected = `this verifier expects ${quoteList(audiences)}`;
  const values = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter((value): value is string => typeof value === 'string') : [];
  if (values.length === 0) return `The token names no audience; ${expected}.`;
  let hint = `The token's "aud" is ${quoteList(values)}; ${expected}.`;
  for (const value of values) {
    const miss = findNearMiss(value, audiences);
    if (miss !== undefined) {
      hint += ` ${quote(value)} differs from ${quote(miss.candidate)} only by ${miss.difference}.`;
      break;
    }
  }
  return hint;
}

function issuerHint(failure: Failure): string | undefined {
  const iss = stringMember(failure.payload, 'iss');
  if (iss === undefined) return undefined;
  const { registry } = failure.sources;
  const miss = findNearMiss(iss, registry.issuers);
  if (miss !== undefined) {
    return `The token's "iss" is ${quote(iss)}; the registered issuer ${quote(miss.candidate)} differs from it only by ${miss.difference} (issuers are compared exactly).`;
  }
  const none = registry.size === 1 ? 'the one registered issuer neither matches it' : `none of the ${registry.size} registered issuers matches it`;
  return `The token's "iss" is ${quote(iss)}; ${none}, nor differs from it only by a trailing slash, letter case or http/https.`;
}

function keyHint(failure: Failure): string | undefined {
  const kid = stringMember(failure.header, 'kid');
  const issuer = failure.issuer;
  if (kid === undefined || issuer === undefined) return undefined;
  const held = failure.sources.keys().issuers.find((entry) => entry.issuer === issuer);
  const key = held?.keys.find((jwk) => jwk.kid === kid);
  const alg = stringMember(failure.header, 'alg');
  if (key !== undefined) {
    const published = key.alg === undefined ? 'any algorithm' : quote(key.alg);
    return `The key ${quote(kid)} of ${quote(issuer)} is held, published for ${published}; the token's "alg" is ${alg === undefined ? 'missing' : quote(alg)}.`;
  }
  const kids = held?.keys.map((jwk) => jwk.kid) ?? [];
  if (held === undefined || held.fetchedAt === 0) return `The token's "kid" is ${quote(kid)}; no keys are held for ${quote(issuer)}.`;
  const age = Math.max(0, Math.round((failure.sources.now - held.fetchedAt) / 1000));
  let hint = `The token's "kid" is ${quote(kid)}; the keys held for ${quote(issuer)} (its JWKS loaded ${age} s ago) are ${quoteList(kids)}.`;
  const miss = findNearMiss(kid, kids);
  if (miss !== undefined) hint += ` ${quote(miss.candidate)} differs from it only by ${miss.difference}.`;
  return `${hint} An unknown kid reloads the JWKS at most once per jwksCooldown.`;
}

function expiredHint(failure: Failure): string | undefined {
  const claim = failure.error.claim === 'expt' ? 'expt' : 'exp';
  const expiry = numberMember(failure.payload, claim);
  if (expiry === undefined) return undefined;
  const now = failure.sources.now / 1000;
  let hint = `"${claim}" (${expiry}) passed ${Math.round(now - expiry)} s ago (clock tolerance ${failure.sources.clockTolerance} s).`;
  if (expiry < DURATION_THRESHOLD) hint += ` ${expiry} looks like a duration, not a time in seconds since the epoch.`;
  return hint;
}

function notYetValidHint(failure: Failure): string | undefined {
  const claim = failure.error.claim === 'nbf' ? 'nbf' : 'iat';
  const value = numberMember(failure.payload, claim);
  if (value === undefined) return undefined;
  const ahead = Math.round(value - failure.sources.now / 1000);
  const note = millisecondsNote(failure.payload);
  if (note !== '') return `"${claim}" is ${ahead} s ahead of this verifier's clock.${note}`;
  return `"${claim}" is ${ahead} s ahead of this verifier's clock (clock tolerance ${failure.sources.clockTolerance} s): are the issuer's and this server's clocks in step?`;
}

function lifetimeHint(failure: Failure): string | undefined {
  const { payload } = failure;
  const claim = failure.error.claim === 'expt' ? 'expt' : 'exp';
  const expiry = numberMember(payload, claim);
  const nbf = numberMember(payload, 'nbf');
  const start = nbf ?? numberMember(payload, 'iat');
  if (expiry === undefined || start === undefined) return undefined;
  const own = failure.issuer === undefined ? undefined : failure.sources.registry.get(failure.issuer)?.maxTokenLifetime;
  const allowed = own ?? failure.sources.maxTokenLifetime;
  const lifetime = `"${claim}" − "${nbf === undefined ? 'iat' : 'nbf'}" is ${expiry - start} s`;
  return `${lifetime}; at most ${allowed} s is allowed${own === undefined ? '' : ' for this issuer'}.${millisecondsNote(payload)}`;
}

function tenantHint(failure: Failure): string | undefined {
  const issuer = failure.issuer === undefined ? undefined : failure.sources.registry.get(failure.issuer);
  const value = failure.payload?.tenant_ern;
  if (issuer === undefined || typeof value !== 'string') return undefined;
  let tenant: TenantErn;
  try {
    tenant = parseTenantErn(value);
  } catch (error) {
    if (error instanceof ErnError) return undefined;
    throw error;
  }
  if (!issuer.products.has(tenant.product)) {
    return `The token's tenant is of product ${quote(tenant.product)}; ${quote(issuer.issuer)} is registered for ${quoteList([...issuer.products])}.`;
  }
  return `The token's tenant ${quote(tenant.id)} is not among the ${issuer.tenants?.size ?? 0} tenants ${quote(issuer.issuer)} is registered for (a limited integration).`;
}

function subjectHint(failure: Failure): string | undefined {
  const sub = stringMember(failure.payload, 'sub');
  const iss = failure.issuer;
  if (sub === undefined || iss === undefined) return undefined;
  const miss = findNearMiss(sub, [iss]);
  const how = miss === undefined ? '' : `, and differs from it only by ${miss.difference}`;
  return `${quote(iss)} is registered with subjectMustEqualIssuer: "sub" must be exactly its "iss"${how}.`;
}

function algorithmHint(failure: Failure): string | undefined {
  const alg = failure.header?.alg;
  return `The token's "alg" is ${typeof alg === 'string' ? quote(alg) : kindOf(alg)}.`;
}

function kidMissingHint(failure: Failure): string | undefined {
  const kid = failure.header?.kid;
  return typeof kid === 'string' ? `The token's "kid" has ${kid.length} characters.` : `The token's "kid" is ${kindOf(kid)}.`;
}

function typHint(failure: Failure): string | undefined {
  const typ = failure.header?.typ;
  return `The token's "typ" is ${typeof typ === 'string' ? quote(typ) : kindOf(typ)}.`;
}

function claimHint(failure: Failure): string | undefined {
  const claim = failure.error.claim;
  if (claim === undefined || failure.payload === undefined) return undefined;
  return `The token's "${claim}" is ${kindOf(failure.payload[claim])}.`;
}

function malformedHint(failure: Failure): string | undefined {
  if (typeof failure.token !== 'string') return `The token is ${kindOf(failure.token)}, not a string.`;
  const segments = failure.token.split('.').length;
  if (segments === 5) return 'The token has five segments: an encrypted token (JWE), which this verifier does not read.';
  if (segments === 1) return 'The token has no dots: an opaque token, not a JWT.';
  return segments === 3 ? undefined : `The token has ${segments} segments; a signed JWT has three.`;
}

/** The token's size: counted in bytes when it is near the limit, else its length (a lower bound) will do. */
function tooLargeHint(failure: Failure): string | undefined {
  const { token } = failure;
  if (typeof token !== 'string') return undefined;
  const limit = failure.sources.maxTokenBytes;
  const size = token.length > limit ? `at least ${token.length}` : `${new TextEncoder().encode(token).byteLength}`;
  return `The token is ${size} bytes; maxTokenBytes is ${limit}.`;
}

function signatureHint(failure: Failure): string | undefined {
  const kid = stringMember(failure.header, 'kid');
  if (kid === undefined || failure.issuer === undefined) return undefined;
  return `The signature was checked with the key ${quote(kid)} of ${quote(failure.issuer)}: was the token signed with another key published under the same kid, or altered?`;
}

function revokedHint(failure: Failure): string | undefined {
  const kid = stringMember(failure.header, 'kid');
  if (kid === undefined || failure.issuer === undefined) return undefined;
  return `The key ${quote(kid)} of ${quote(failure.issuer)} was revoked with revokeKey().`;
}

function suspendedHint(failure: Failure): string | undefined {
  return failure.issuer === undefined ? undefined : `${quote(failure.issuer)} is suspended with suspendIssuer() until resumeIssuer().`;
}

function unavailableHint(failure: Failure): string | undefined {
  const issuer = failure.issuer === undefined ? undefined : failure.sources.registry.get(failure.issuer);
  if (issuer === undefined) return undefined;
  const cause = failure.error.cause;
  const why = cause instanceof Error && cause.name === 'JwksFetchError' ? ` (${cause.message})` : '';
  return `The keys of ${quote(issuer.issuer)} are loaded from ${quote(issuer.jwksUri)}, which failed${why}; is that the URL the JWKS is served at now? jwks_fetch events and warmUp() report each failure.`;
}

const HINTS: Partial<Record<AuthErrorCode, (failure: Failure) => string | undefined>> = {
  token_too_large: tooLargeHint,
  malformed_token: malformedHint,
  unsupported_algorithm: algorithmHint,
  missing_kid: kidMissingHint,
  invalid_typ: typHint,
  unknown_issuer: issuerHint,
  unknown_key: keyHint,
  invalid_signature: signatureHint,
  invalid_claim: claimHint,
  token_expired: expiredHint,
  token_not_yet_valid: notYetValidHint,
  token_lifetime_exceeded: lifetimeHint,
  audience_mismatch: audienceHint,
  subject_mismatch: subjectHint,
  tenant_not_allowed: tenantHint,
  issuer_suspended: suspendedHint,
  key_revoked: revokedHint,
  jwks_unavailable: unavailableHint,
};

/**
 * The hint for `error`, a failure to verify `token`, or `undefined` where nothing helps more than
 * the message.
 */
export function hintFor(error: AuthError, token: unknown, sources: HintSources): string | undefined {
  const explain = HINTS[error.code];
  if (explain === undefined) return undefined;
  const hint = explain(new Failure(error, token, sources));
  return hint === undefined ? undefined : capHint(hint);
}

/**
 * `error` with a hint when it is an {@link AuthError} without one and a hint helps; anything else
 * as it is. Never throws: a hint that cannot be worked out is left out.
 */
export function explainFailure(error: unknown, token: unknown, sources: HintSources): unknown {
  if (!(error instanceof AuthError) || error.hint !== undefined) return error;
  try {
    const hint = hintFor(error, token, sources);
    return hint === undefined ? error : withHint(error, hint);
  } catch {
    return error;
  }
}
