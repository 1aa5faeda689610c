/**
 * The result of a successful verification: who is calling, for which tenant, with which scopes.
 *
 * @module paygate-auth
 */
import type { CheckedClaims } from './claims.js';
import { decodeJwsPayload } from './compact-jws.js';
import type { UserReference } from './ern.js';
import { sanitizeAndFreeze } from './json-object.js';

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
  /**
   * Every claim as received (frozen, prototype keys removed). Decoded from the token when first
   * read, then the same object on every read.
   */
  readonly claims: Readonly<Record<string, unknown>>;
}

/** The `expiresAt` member every context shares: an own, enumerable accessor returning a new `Date`. */
let expiresAtProperty: PropertyDescriptor;
/** The `claims` member every context shares: an own, enumerable accessor, decoding on first read. */
let claimsProperty: PropertyDescriptor;

/**
 * A verified context. A class, so that building one is a handful of stores and one freeze (an
 * object literal with its own getter closure costs twenty times as much on the verify path).
 *
 * It holds the token rather than its parsed claims: a context lives in the result cache, and the
 * claims are a dozen objects that every cached result would carry (and the garbage collector copy)
 * although most callers never read them.
 */
class VerifiedContext implements AuthContext {
  readonly tenant: AuthTenant;
  readonly tenantName: string | null;
  readonly user: UserReference | null;
  readonly scopes: ReadonlySet<string>;
  readonly issuer: string;
  readonly audience: string;
  // Accessors, defined by the constructor after the fields above (the order JSON shows them in).
  declare readonly expiresAt: Date;
  declare readonly claims: Readonly<Record<string, unknown>>;
  /** Seconds since the epoch. */
  readonly #expiry: number;
  readonly #token: string;
  readonly #payloadStart: number;
  readonly #payloadEnd: number;
  #claims: Readonly<Record<string, unknown>> | undefined;

  static {
    expiresAtProperty = {
      enumerable: true,
      get(this: VerifiedContext): Date {
        return new Date(this.#expiry * 1000);
      },
    };
    claimsProperty = {
      enumerable: true,
      get(this: VerifiedContext): Readonly<Record<string, unknown>> {
        this.#claims ??= sanitizeAndFreeze(
          decodeJwsPayload(this.#token, { headerEnd: this.#payloadStart - 1, payloadEnd: this.#payloadEnd }),
        );
        return this.#claims;
      },
    };
  }

  constructor(issuer: string, checked: CheckedClaims, token: string, payloadStart: number, payloadEnd: number) {
    this.tenant = checked.tenant;
    this.tenantName = checked.tenantName;
    this.user = checked.user;
    this.scopes = checked.scopes;
    this.issuer = issuer;
    this.audience = checked.audience;
    Object.defineProperty(this, 'expiresAt', expiresAtProperty);
    Object.defineProperty(this, 'claims', claimsProperty);
    this.#expiry = checked.times.expiry;
    this.#token = token;
    this.#payloadStart = payloadStart;
    this.#payloadEnd = payloadEnd;
    Object.freeze(this);
  }
}

/**
 * Builds the frozen context of a verified token whose payload segment is
 * `token.slice(payloadStart, payloadEnd)`.
 */
export function createAuthContext(
  issuer: string,
  checked: CheckedClaims,
  token: string,
  payloadStart: number,
  payloadEnd: number,
): AuthContext {
  return new VerifiedContext(issuer, checked, token, payloadStart, payloadEnd);
}
