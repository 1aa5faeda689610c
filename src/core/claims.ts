/**
 * The claim rules, one assertion per claim, run after the signature is verified.
 *
 * Order: the types of the time claims (`exp`, `expt`, `iat`, `nbf`), then expiry, `iat` and `nbf`
 * against the clock, the lifetime, `aud`, `sub`, `tenant_ern`, `scope`, `tenant_name`, `user_ern`.
 * The first broken rule is the one reported.
 *
 * @module paygate-auth
 */
import { ErnError, parseTenantErn, parseUserReference, tenantUserOf, type TenantErn, type UserReference } from './ern.js';
import { AuthError, invalidClaim } from './errors.js';
import type { RegisteredIssuer } from './registry.js';
import { ScopeError, ScopeSet, parseScopes } from './scopes.js';

/** The time facts of a token, in seconds since the epoch; kept to re-check a cached result. */
export interface TokenTimes {
  /** The effective expiry: the earlier of `exp` and `expt`. */
  readonly expiry: number;
  /** Which claim gave the expiry: `exp`, or `expt` when it is the earlier (or the only) one. */
  readonly expiryClaim: 'exp' | 'expt';
  readonly iat: number;
  readonly nbf: number | undefined;
}

/** What the verifier's options fix for every token. */
export interface ClaimPolicy {
  /** The configured audiences, each mapped to itself (so a match yields the configured string). */
  readonly audiences: ReadonlyMap<string, string>;
  /** Seconds. */
  readonly clockTolerance: number;
  /** Seconds; an issuer's own `maxTokenLifetime` wins. */
  readonly maxTokenLifetime: number;
}

/** The checked claims that make up an `AuthContext`. */
export interface CheckedClaims {
  readonly times: TokenTimes;
  readonly audience: string;
  readonly tenant: TenantErn;
  readonly scopes: ScopeSet;
  readonly tenantName: string | null;
  readonly user: UserReference | null;
}

const EMPTY_SCOPES = new ScopeSet();

function numericDate(value: unknown, claim: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw invalidClaim(claim, `The "${claim}" claim must be a NumericDate (seconds since the epoch).`);
  }
  return value;
}

/** Reads and type-checks the time claims. */
export function readTimes(payload: Record<string, unknown>): TokenTimes {
  const exp = numericDate(payload.exp, 'exp');
  const expt = numericDate(payload.expt, 'expt');
  if (exp === undefined && expt === undefined) {
    throw invalidClaim('exp', 'The token must carry an expiry in "exp" or "expt".');
  }
  const iat = numericDate(payload.iat, 'iat');
  if (iat === undefined) throw invalidClaim('iat', 'The token must carry "iat".');
  const nbf = numericDate(payload.nbf, 'nbf');
  const fromExpt = exp === undefined || (expt !== undefined && expt < exp);
  return { expiry: fromExpt ? (expt as number) : exp, expiryClaim: fromExpt ? 'expt' : 'exp', iat, nbf };
}

/**
 * Checks the times against the clock (`now` in seconds). Run on every verification, cached or not.
 * @throws {AuthError} `token_expired` or `token_not_yet_valid`.
 */
export function checkTimeWindow(times: TokenTimes, now: number, tolerance: number): void {
  if (now >= times.expiry + tolerance) {
    throw new AuthError('token_expired', 'The token has expired.', { claim: times.expiryClaim });
  }
  if (times.iat > now + tolerance) {
    throw new AuthError('token_not_yet_valid', 'The token was issued in the future ("iat").', { claim: 'iat' });
  }
  if (times.nbf !== undefined && times.nbf > now + tolerance) {
    throw new AuthError('token_not_yet_valid', 'The token is not valid yet ("nbf").', { claim: 'nbf' });
  }
}

function checkLifetime(times: TokenTimes, maximum: number): void {
  const lifetime = times.expiry - (times.nbf ?? times.iat);
  if (lifetime > maximum) {
    throw new AuthError('token_lifetime_exceeded', `The token is valid for longer than the ${maximum} s allowed.`, {
      claim: times.expiryClaim,
    });
  }
}

/** The configured audience `aud` names: the verifier's own string, so the token's need not be kept. */
function checkAudience(payload: Record<string, unknown>, audiences: ReadonlyMap<string, string>): string {
  const aud = payload.aud;
  if (typeof aud === 'string') {
    const match = audiences.get(aud);
    if (match !== undefined) return match;
    throw new AuthError('audience_mismatch', 'The token is not meant for this service ("aud").', { claim: 'aud' });
  }
  const values = aud;
  if (values === undefined || (Array.isArray(values) && values.length === 0)) {
    throw new AuthError('audience_mismatch', 'The token names no audience ("aud").', { claim: 'aud' });
  }
  if (!Array.isArray(values) || !values.every((value) => typeof value === 'string')) {
    throw invalidClaim('aud', 'The "aud" claim must be a string or an array of strings.');
  }
  for (const value of values as string[]) {
    const match = audiences.get(value);
    if (match !== undefined) return match;
  }
  throw new AuthError('audience_mismatch', 'The token is not meant for this service ("aud").', { claim: 'aud' });
}

function checkSubject(payload: Record<string, unknown>, issuer: RegisteredIssuer): void {
  const sub = payload.sub;
  if (sub === undefined) {
    throw new AuthError('subject_mismatch', 'The token must carry "sub".', { claim: 'sub' });
  }
  if (typeof sub !== 'string') throw invalidClaim('sub', 'The "sub" claim must be a string.');
  if (issuer.subjectMustEqualIssuer && sub !== issuer.issuer) {
    throw new AuthError('subject_mismatch', 'The token\'s "sub" must equal its "iss".', { claim: 'sub' });
  }
}

function checkTenant(payload: Record<string, unknown>, issuer: RegisteredIssuer): TenantErn {
  const value = payload.tenant_ern;
  if (value === undefined) throw invalidClaim('tenant_ern', 'The token must name its tenant in "tenant_ern".');
  let tenant: TenantErn;
  try {
    tenant = parseTenantErn(value);
  } catch (error) {
    if (!(error instanceof ErnError)) throw error;
    throw invalidClaim('tenant_ern', 'The "tenant_ern" claim is not a tenant ERN ("ern:<product>/tenants/<tenant-id>").');
  }
  if (!issuer.products.has(tenant.product)) {
    throw new AuthError('tenant_not_allowed', 'The issuer is not registered for the product of "tenant_ern".', {
      claim: 'tenant_ern',
    });
  }
  if (issuer.tenants !== null && !issuer.tenants.has(tenant.id)) {
    throw new AuthError('tenant_not_allowed', 'The issuer is not registered for the tenant of "tenant_ern".', {
      claim: 'tenant_ern',
    });
  }
  return tenant;
}

function checkScopeClaim(payload: Record<string, unknown>): ScopeSet {
  const value = payload.scope;
  if (value === undefined) return EMPTY_SCOPES;
  try {
    return parseScopes(value);
  } catch (error) {
    if (!(error instanceof ScopeError)) throw error;
    throw invalidClaim('scope', 'The "scope" claim must be a string of scope tokens separated by single spaces.');
  }
}

function checkTenantName(payload: Record<string, unknown>): string | null {
  const value = payload.tenant_name;
  if (value === undefined) return null;
  if (typeof value !== 'string') throw invalidClaim('tenant_name', 'The "tenant_name" claim must be a string.');
  return value;
}

function checkUser(payload: Record<string, unknown>, tenant: TenantErn): UserReference | null {
  const value = payload.user_ern;
  if (value === undefined) return null;
  if (typeof value === 'string') {
    const own = tenantUserOf(value, tenant);
    if (own !== undefined) return own;
  }
  let user: UserReference;
  try {
    user = parseUserReference(value);
  } catch (error) {
    if (!(error instanceof ErnError)) throw error;
    throw invalidClaim('user_ern', 'The "user_ern" claim is not a user reference.');
  }
  if (user.product !== null && user.product !== tenant.product) {
    throw invalidClaim('user_ern', 'The "user_ern" claim names a product other than the tenant\'s.');
  }
  return user;
}

/**
 * Applies every claim rule after `iss` (checked before the signature).
 * @param now seconds since the epoch
 * @throws {AuthError} the first rule broken.
 */
export function checkClaims(
  payload: Record<string, unknown>,
  issuer: RegisteredIssuer,
  policy: ClaimPolicy,
  now: number,
): CheckedClaims {
  const times = readTimes(payload);
  checkTimeWindow(times, now, policy.clockTolerance);
  checkLifetime(times, issuer.maxTokenLifetime ?? policy.maxTokenLifetime);
  const audience = checkAudience(payload, policy.audiences);
  checkSubject(payload, issuer);
  const tenant = checkTenant(payload, issuer);
  const scopes = checkScopeClaim(payload);
  const tenantName = checkTenantName(payload);
  const user = checkUser(payload, tenant);
  return { times, audience, tenant, scopes, tenantName, user };
}
