/**
 * The claims of a token, built only when the gateway would accept them: every input is checked
 * against the rules the gateway's verifier applies, and the first one broken is refused with an
 * {@link IssuerError} naming the input.
 */
import { ErnError, SCOPES, type TenantErn, type UserReference, parseTenantErn, parseUserReference } from '../index.js';
import { describeValue, quote, quoteList } from '../internal/index.js';
import { IssuerError } from './errors.js';

/** What a token is for. */
export interface SignInput {
  /** The tenant it acts for: `ern:<product>/tenants/<tenant-id>` (`tenant_ern`). */
  readonly tenant: string;
  /** Its scopes, each one the gateway knows (`scope`): an array, or a space-delimited string. */
  readonly scopes: readonly string[] | string;
  /**
   * The user it acts for (`user_ern`): `ern:<product>/tenants/<id>/users/<user-id>`,
   * `ern:<product>/tenants/users/<user-id>` or `//users/<user-id>`.
   * @default the tenant's ERN for the public tenant (a system actor), else none
   */
  readonly user?: string | undefined;
  /** The tenant's display name (`tenant_name`). @default none */
  readonly tenantName?: string | undefined;
  /**
   * Seconds from `iat` to its expiry; at most the issuer's `maxLifetime`.
   * @default the issuer's `lifetime`
   */
  readonly lifetime?: number | undefined;
}

/** What the issuer fixes for every token. */
export interface ClaimSettings {
  readonly issuer: string;
  readonly audience: string | readonly string[];
  /** The products its tenants may belong to. */
  readonly products: readonly string[];
  /** For a limited integration, the only tenant ids; `null` for all. */
  readonly tenants: readonly string[] | null;
  /** Seconds. */
  readonly lifetime: number;
  /** Seconds. */
  readonly maxLifetime: number;
  /** Also write `exp` (equal to `expt`). */
  readonly emitExp: boolean;
}

/** The claims of one token, in the order they are written. */
export interface TokenClaims {
  readonly iss: string;
  readonly sub: string;
  readonly aud: string | readonly string[];
  readonly scope: string;
  readonly iat: number;
  readonly nbf: number;
  readonly exp?: number;
  readonly expt: number;
  readonly tenant_ern: string;
  readonly tenant_name?: string;
  readonly user_ern?: string;
}

const INPUT_FIELDS: ReadonlySet<string> = new Set(['tenant', 'scopes', 'user', 'tenantName', 'lifetime']);
const KNOWN_SCOPES: ReadonlySet<string> = new Set(Object.values(SCOPES));

function checkTenant(value: unknown, settings: ClaimSettings): TenantErn {
  let tenant: TenantErn;
  try {
    tenant = parseTenantErn(value);
  } catch (error) {
    if (!(error instanceof ErnError)) throw error;
    throw new IssuerError('invalid_tenant', `tenant must be a tenant ERN "ern:<product>/tenants/<tenant-id>": ${error.message}`, 'tenant');
  }
  if (!settings.products.includes(tenant.product)) {
    throw new IssuerError(
      'tenant_not_allowed',
      `tenant ${quote(tenant.ern)} belongs to product ${quote(tenant.product)}; this issuer acts for ${quoteList(settings.products)}: give a tenant of one of them`,
      'tenant',
    );
  }
  if (settings.tenants !== null && !settings.tenants.includes(tenant.id)) {
    throw new IssuerError(
      'tenant_not_allowed',
      `tenant id ${quote(tenant.id)} is not one this limited integration may act for (${quoteList(settings.tenants)})`,
      'tenant',
    );
  }
  return tenant;
}

function checkScopes(value: unknown): string {
  const list = typeof value === 'string' ? (value === '' ? [] : value.split(' ')) : value;
  if (!Array.isArray(list))
    throw new IssuerError(
      'invalid_scope',
      `scopes must be an array of scopes or a space-delimited string, got ${describeValue(value)}`,
      'scopes',
    );
  if (list.length === 0)
    throw new IssuerError(
      'invalid_scope',
      `scopes must hold at least one of ${[...KNOWN_SCOPES].join(', ')}, got ${typeof value === 'string' ? '""' : 'an empty array'}`,
      'scopes',
    );
  for (const scope of list) {
    if (typeof scope !== 'string' || !KNOWN_SCOPES.has(scope)) {
      // Several scopes in one element, space- or comma-separated: each is its own element (in the CLI, one --scope each).
      const several =
        typeof scope === 'string' && (scope.trim().includes(' ') || scope.includes(','))
          ? '; give each scope as an element of its own (on the command line, one --scope each)'
          : '';
      throw new IssuerError(
        'invalid_scope',
        `scopes holds ${typeof scope === 'string' ? quote(scope) : describeValue(scope)}, not a scope the gateway knows (${[...KNOWN_SCOPES].join(', ')})${several}`,
        'scopes',
      );
    }
  }
  return [...new Set(list as string[])].join(' ');
}

function checkUser(value: unknown, tenant: TenantErn): string | undefined {
  if (value === undefined) return tenant.isPublic ? tenant.ern : undefined;
  let user: UserReference;
  try {
    user = parseUserReference(value);
  } catch (error) {
    if (!(error instanceof ErnError)) throw error;
    throw new IssuerError('invalid_user', `user must be a user reference: ${error.message}`, 'user');
  }
  if (user.product !== null && user.product !== tenant.product) {
    throw new IssuerError(
      'invalid_user',
      `user names product ${quote(user.product)}, not the tenant's ${quote(tenant.product)}: give a user of the tenant's product`,
      'user',
    );
  }
  return user.ern;
}

function checkTenantName(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '')
    throw new IssuerError('invalid_tenant_name', `tenantName must be a non-empty string, got ${describeValue(value)}`, 'tenantName');
  return value;
}

function checkLifetime(value: unknown, settings: ClaimSettings): number {
  if (value === undefined) return settings.lifetime;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new IssuerError(
      'invalid_lifetime',
      `lifetime must be a whole number of seconds above 0, got ${describeValue(value)}`,
      'lifetime',
    );
  }
  if (value > settings.maxLifetime) {
    throw new IssuerError('lifetime_exceeded', `lifetime ${value} s is over the ${settings.maxLifetime} s the gateway accepts`, 'lifetime');
  }
  return value;
}

/**
 * The claims of a token issued at `nowSeconds` for `input`.
 * @throws {IssuerError} naming the first input the gateway would refuse.
 */
export function buildClaims(input: SignInput, settings: ClaimSettings, nowSeconds: number): TokenClaims {
  if (typeof input !== 'object' || input === null)
    throw new IssuerError('unknown_field', `sign() takes an object { tenant, scopes, … }, got ${describeValue(input)}`);
  for (const key of Object.keys(input)) {
    if (!INPUT_FIELDS.has(key))
      throw new IssuerError('unknown_field', `${quote(key)} is not a sign() field (expected one of ${[...INPUT_FIELDS].join(', ')})`, key);
  }
  const tenant = checkTenant(input.tenant, settings);
  const scope = checkScopes(input.scopes);
  const user = checkUser(input.user, tenant);
  const tenantName = checkTenantName(input.tenantName);
  const lifetime = checkLifetime(input.lifetime, settings);
  const iat = Math.floor(nowSeconds);
  const expiry = iat + lifetime;
  return {
    iss: settings.issuer,
    sub: settings.issuer,
    aud: settings.audience,
    scope,
    iat,
    nbf: iat,
    ...(settings.emitExp ? { exp: expiry } : {}),
    expt: expiry,
    tenant_ern: tenant.ern,
    ...(tenantName === undefined ? {} : { tenant_name: tenantName }),
    ...(user === undefined ? {} : { user_ern: user }),
  };
}
