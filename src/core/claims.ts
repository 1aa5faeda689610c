/**
 * The claim rules, one assertion per claim, run after the signature is verified.
 *
 * Order: the types of the time claims (`exp`, `expt`, `iat`, `nbf`), then expiry, `iat` and `nbf`
 * against the clock, the lifetime, `aud`, `sub`, `tenant_ern`, `scope`, `tenant_name`, `user_ern`.
 * The first broken rule is the one reported.
 */
import {
  ErnError,
  type ErnErrorReason,
  TENANT_ERN_SHAPE,
  USER_REFERENCE_SHAPES,
  parseTenantErn,
  parseUserReference,
  tenantUserOf,
  type TenantErn,
  type UserReference,
} from './ern.js';
import { AuthError, type RuleTrace, invalidClaim } from './errors.js';
import type { ClaimFacts, ClockFacts, ErnClaimFactsOf, LifetimeFacts, TenantExpectation, TimeClaim } from './facts.js';
import type { RegisteredIssuer } from './registry.js';
import { ScopeError, ScopeSet, parseScopes } from './scopes.js';

/** The time facts of a token, in seconds since the epoch; kept to re-check a cached result. */
export interface TokenTimes {
  /** The effective expiry: the earlier of `exp` and `expt`. */
  readonly expiry: number;
  /** Which claim gave the expiry: `exp`, or `expt` when it is the earlier (or the only) one. */
  readonly expiryClaim: 'exp' | 'expt';
  /** `iat`, in seconds since the epoch. */
  readonly iat: number;
  /** `nbf`, in seconds since the epoch; `undefined` when the token carries none. */
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

function numericDate(payload: Record<string, unknown>, claim: TimeClaim, trace: RuleTrace | undefined): number | undefined {
  const value = payload[claim];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    const message = `The "${claim}" claim must be a NumericDate (seconds since the epoch).`;
    throw invalidClaim(message, { rule: claim, claim, expected: 'numeric_date', actual: value });
  }
  trace?.({ rule: claim, claim, passed: true, actual: value });
  return value;
}

/** Reads and type-checks the time claims. */
export function readTimes(payload: Record<string, unknown>, trace?: RuleTrace): TokenTimes {
  const exp = numericDate(payload, 'exp', trace);
  const expt = numericDate(payload, 'expt', trace);
  if (exp === undefined && expt === undefined) {
    // This contract's name first; `claim` stays `exp` (RFC 7519's), as documented.
    throw invalidClaim('The token must carry an expiry in "expt" (or "exp").', { rule: 'expiry', claim: 'exp', expected: ['expt', 'exp'] });
  }
  const iat = numericDate(payload, 'iat', trace);
  if (iat === undefined) {
    throw invalidClaim('The token must carry "iat".', { rule: 'iat', claim: 'iat', expected: 'numeric_date', actual: undefined });
  }
  const nbf = numericDate(payload, 'nbf', trace);
  const fromExpt = exp === undefined || (expt !== undefined && expt < exp);
  return { expiry: fromExpt ? (expt as number) : exp, expiryClaim: fromExpt ? 'expt' : 'exp', iat, nbf };
}

/** `token_not_yet_valid`: `claim` (its `value`) is ahead of the clock beyond the tolerance. */
function notYetValid(message: string, claim: 'iat' | 'nbf', value: number, clock: ClockFacts): AuthError {
  const facts = { code: 'token_not_yet_valid', rule: 'not_before', claim, expected: clock, actual: value } as const;
  return new AuthError('token_not_yet_valid', message, { claim, facts });
}

/**
 * Checks the times against the clock (`now` in seconds). Run on every verification, cached or not.
 * @throws {AuthError} `token_expired` or `token_not_yet_valid`.
 */
export function checkTimeWindow(times: TokenTimes, now: number, tolerance: number, trace?: RuleTrace): void {
  if (now >= times.expiry + tolerance) {
    const facts = {
      code: 'token_expired',
      rule: 'expiry',
      claim: times.expiryClaim,
      expected: { now, tolerance },
      actual: times.expiry,
    } as const;
    throw new AuthError('token_expired', 'The token has expired.', { claim: times.expiryClaim, facts });
  }
  trace?.({
    rule: 'expiry',
    claim: times.expiryClaim,
    passed: true,
    expected: { now, tolerance },
    actual: times.expiry,
  });
  if (times.iat > now + tolerance) {
    throw notYetValid('The token was issued in the future ("iat").', 'iat', times.iat, { now, tolerance });
  }
  if (times.nbf !== undefined && times.nbf > now + tolerance) {
    throw notYetValid('The token is not valid yet ("nbf").', 'nbf', times.nbf, { now, tolerance });
  }
  trace?.({
    rule: 'not_before',
    claim: times.nbf === undefined ? 'iat' : 'nbf',
    passed: true,
    expected: { now, tolerance },
    actual: times.nbf ?? times.iat,
  });
}

/** The token's lifetime: its expiry less its start (`nbf`, else `iat`), and from which claims. */
function lifetimeOf(times: TokenTimes): LifetimeFacts['actual'] {
  const start = times.nbf ?? times.iat;
  return {
    lifetime: times.expiry - start,
    expiry: times.expiry,
    expiryClaim: times.expiryClaim,
    start,
    startClaim: times.nbf === undefined ? 'iat' : 'nbf',
  };
}

/** The lifetime rule's facts: the lifetime, from which claims, against the maximum (and whose). */
function lifetimeFacts(times: TokenTimes, maximum: number, issuerOwn: boolean): LifetimeFacts {
  return { rule: 'lifetime', claim: times.expiryClaim, expected: { maximum, issuerOwn }, actual: lifetimeOf(times) };
}

/**
 * The lifetime: positive (a token that expires before it starts is valid at no moment, though
 * the clock tolerance would let each end through on its own), and at most `maximum`.
 */
function checkLifetime(times: TokenTimes, maximum: number, issuerOwn: boolean, trace: RuleTrace | undefined): void {
  const start = times.nbf ?? times.iat;
  if (times.expiry <= start) {
    const claim = times.expiryClaim;
    const startClaim = times.nbf === undefined ? 'iat' : 'nbf';
    throw invalidClaim(`The token's "${claim}" is not after its "${startClaim}".`, {
      rule: 'lifetime',
      claim,
      expected: 'expiry_after_start',
      actual: lifetimeOf(times),
    });
  }
  if (times.expiry - start > maximum) {
    throw new AuthError('token_lifetime_exceeded', `The token is valid for longer than the ${maximum} s allowed.`, {
      claim: times.expiryClaim,
      facts: { code: 'token_lifetime_exceeded', ...lifetimeFacts(times, maximum, issuerOwn) },
    });
  }
  trace?.({ ...lifetimeFacts(times, maximum, issuerOwn), passed: true });
}

function audienceMismatch(message: string, aud: unknown, audiences: ReadonlyMap<string, string>): AuthError {
  return new AuthError('audience_mismatch', message, {
    claim: 'aud',
    facts: { code: 'audience_mismatch', rule: 'aud', claim: 'aud', expected: [...audiences.keys()], actual: aud },
  });
}

/** The configured audience `aud` names: the verifier's own string, so the token's need not be kept. */
function checkAudience(payload: Record<string, unknown>, audiences: ReadonlyMap<string, string>): string {
  const aud = payload.aud;
  if (typeof aud === 'string') {
    const match = audiences.get(aud);
    if (match !== undefined) return match;
    throw audienceMismatch('The token is not meant for this service ("aud").', aud, audiences);
  }
  const values = aud;
  if (values === undefined || (Array.isArray(values) && values.length === 0)) {
    throw audienceMismatch('The token names no audience ("aud").', aud, audiences);
  }
  if (!Array.isArray(values) || !values.every((value) => typeof value === 'string')) {
    throw invalidClaim('The "aud" claim must be a string or an array of strings.', {
      rule: 'aud',
      claim: 'aud',
      expected: 'string_or_strings',
      actual: aud,
    });
  }
  for (const value of values as string[]) {
    const match = audiences.get(value);
    if (match !== undefined) return match;
  }
  throw audienceMismatch('The token is not meant for this service ("aud").', aud, audiences);
}

function checkSubject(payload: Record<string, unknown>, issuer: RegisteredIssuer): void {
  const sub = payload.sub;
  const facts = {
    code: 'subject_mismatch',
    rule: 'sub',
    claim: 'sub',
    expected: issuer.subjectMustEqualIssuer ? issuer.issuer : null,
    actual: sub,
  } as const;
  if (sub === undefined) {
    throw new AuthError('subject_mismatch', 'The token must carry "sub".', { claim: 'sub', facts });
  }
  if (typeof sub !== 'string') {
    throw invalidClaim('The "sub" claim must be a string.', { rule: 'sub', claim: 'sub', expected: 'string', actual: sub });
  }
  if (issuer.subjectMustEqualIssuer && sub !== issuer.issuer) {
    throw new AuthError('subject_mismatch', 'The token\'s "sub" must equal its "iss".', { claim: 'sub', facts });
  }
}

/** What the tenant rule expected: the products, and how many tenants a limited integration lists (never which). */
function tenantExpectation(issuer: RegisteredIssuer): TenantExpectation {
  return { issuer: issuer.issuer, products: [...issuer.products], tenants: issuer.tenants?.size ?? null };
}

/**
 * The facts of a resource-name claim that is missing, does not parse (`part`, as `ErnError.reason`
 * names it, is at fault) or names another `product` than its tenant's.
 */
function ernFacts<R extends 'tenant_ern' | 'user_ern'>(
  claim: R,
  value: unknown,
  part?: ErnErrorReason,
  product?: string,
): ErnClaimFactsOf<R> {
  const shapes = claim === 'tenant_ern' ? [TENANT_ERN_SHAPE] : USER_REFERENCE_SHAPES;
  const facts = { rule: claim, claim, expected: product === undefined ? { shapes } : { shapes, product }, actual: value };
  return part === undefined ? facts : { ...facts, part };
}

function checkTenant(payload: Record<string, unknown>, issuer: RegisteredIssuer): TenantErn {
  const value = payload.tenant_ern;
  if (value === undefined) throw invalidClaim('The token must name its tenant in "tenant_ern".', ernFacts('tenant_ern', value));
  let tenant: TenantErn;
  try {
    tenant = parseTenantErn(value);
  } catch (error) {
    if (!(error instanceof ErnError)) throw error;
    throw invalidClaim(`The "tenant_ern" claim is not a tenant ERN ("${TENANT_ERN_SHAPE}").`, ernFacts('tenant_ern', value, error.reason));
  }
  const allowedProduct = issuer.products.has(tenant.product);
  if (!allowedProduct || (issuer.tenants !== null && !issuer.tenants.has(tenant.id))) {
    const expected = tenantExpectation(issuer);
    const message = `The issuer is not registered for the ${allowedProduct ? 'tenant' : 'product'} of "tenant_ern".`;
    throw new AuthError('tenant_not_allowed', message, {
      claim: 'tenant_ern',
      facts: {
        code: 'tenant_not_allowed',
        rule: 'tenant_ern',
        claim: 'tenant_ern',
        expected,
        actual: { product: tenant.product, id: tenant.id },
      },
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
    const message = 'The "scope" claim must be a string of scope tokens separated by single spaces.';
    throw invalidClaim(message, { rule: 'scope', claim: 'scope', expected: 'scope_list', actual: value });
  }
}

function checkTenantName(payload: Record<string, unknown>): string | null {
  const value = payload.tenant_name;
  if (value === undefined) return null;
  if (typeof value !== 'string') {
    const facts = { rule: 'tenant_name', claim: 'tenant_name', expected: 'string', actual: value } as const;
    throw invalidClaim('The "tenant_name" claim must be a string.', facts);
  }
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
    throw invalidClaim('The "user_ern" claim is not a user reference.', ernFacts('user_ern', value, error.reason));
  }
  if (user.product !== null && user.product !== tenant.product) {
    const facts = ernFacts('user_ern', value, 'product', tenant.product);
    throw invalidClaim('The "user_ern" claim names a product other than the tenant\'s.', facts);
  }
  return user;
}

/** Reports that `claim` passed its rule (one that compares nothing but its type), with what the token had. */
function passed(trace: RuleTrace, claim: ClaimFacts['claim'], actual: unknown): void {
  trace({ rule: claim, claim, passed: true, actual });
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
  trace?: RuleTrace,
): CheckedClaims {
  const times = readTimes(payload, trace);
  checkTimeWindow(times, now, policy.clockTolerance, trace);
  checkLifetime(times, issuer.maxTokenLifetime ?? policy.maxTokenLifetime, issuer.maxTokenLifetime !== undefined, trace);
  const audience = checkAudience(payload, policy.audiences);
  trace?.({ rule: 'aud', claim: 'aud', passed: true, expected: audience, actual: payload.aud });
  checkSubject(payload, issuer);
  trace?.({ rule: 'sub', claim: 'sub', passed: true, expected: issuer.subjectMustEqualIssuer ? issuer.issuer : null, actual: payload.sub });
  const tenant = checkTenant(payload, issuer);
  trace?.({
    rule: 'tenant_ern',
    claim: 'tenant_ern',
    passed: true,
    expected: tenantExpectation(issuer),
    actual: { product: tenant.product, id: tenant.id },
  });
  const scopes = checkScopeClaim(payload);
  if (trace !== undefined) passed(trace, 'scope', payload.scope);
  const tenantName = checkTenantName(payload);
  if (trace !== undefined) passed(trace, 'tenant_name', payload.tenant_name);
  const user = checkUser(payload, tenant);
  if (trace !== undefined) passed(trace, 'user_ern', payload.user_ern);
  return { times, audience, tenant, scopes, tenantName, user };
}
