/**
 * The result of a successful verification: who is calling, for which tenant, with which scopes.
 *
 * @module paygate-auth
 */
import type { CheckedClaims } from './claims.js';
import type { UserReference } from './ern.js';

/** The tenant a token acts for. */
export interface AuthTenant {
  /** `ern:<product>/tenants/<id>` */
  readonly ern: string;
  readonly product: string;
  readonly id: string;
  /** `true` when the product acts as itself (tenant id `public`). */
  readonly isPublic: boolean;
}

/** A verified caller. Frozen: one context may be shared by every request that carries the same token. */
export interface AuthContext {
  readonly tenant: AuthTenant;
  /** `tenant_name`, when the token carries one. */
  readonly tenantName: string | null;
  /** `user_ern`, parsed, when the token carries one. */
  readonly user: UserReference | null;
  /** The token's scopes (`scope` claim); unknown scopes included. */
  readonly scopes: ReadonlySet<string>;
  /** The registered issuer (`iss`). */
  readonly issuer: string;
  /** The configured audience the token's `aud` matched. */
  readonly audience: string;
  /** The effective expiry (the earlier of `exp` and `expt`); a new `Date` on every read. */
  readonly expiresAt: Date;
  /** Every claim as received (frozen, prototype keys removed). */
  readonly claims: Readonly<Record<string, unknown>>;
}

/** Builds the frozen context of a verified token. */
export function createAuthContext(
  issuer: string,
  checked: CheckedClaims,
  claims: Readonly<Record<string, unknown>>,
): AuthContext {
  const expiryMs = checked.times.expiry * 1000;
  return Object.freeze({
    tenant: checked.tenant,
    tenantName: checked.tenantName,
    user: checked.user,
    scopes: checked.scopes,
    issuer,
    audience: checked.audience,
    get expiresAt(): Date {
      return new Date(expiryMs);
    },
    claims,
  });
}
