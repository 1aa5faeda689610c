/**
 * The result of a successful verification: who is calling, for which tenant, with which scopes.
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

/** The JSON (and `util.inspect`) form of a context: its members, `scopes` as an array, `expiresAt` as ISO 8601. */
type AuthContextJson = Omit<AuthContext, 'scopes' | 'expiresAt'> & {
  readonly scopes: readonly string[];
  readonly expiresAt: string;
};

/** Node's `util.inspect.custom`, reached without importing `node:util` (the core runs anywhere). */
const nodeInspect = Symbol.for('nodejs.util.inspect.custom');

/**
 * A verified context. A class whose computed members (`expiresAt`, `claims`) are accessors of its
 * prototype, so that building one is a handful of stores and one freeze; `toJSON()` shows every
 * member, as `JSON.stringify` and logs expect.
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
  /** Seconds since the epoch. */
  readonly #expiry: number;
  readonly #token: string;
  readonly #payloadStart: number;
  readonly #payloadEnd: number;
  #claims: Readonly<Record<string, unknown>> | undefined;

  constructor(issuer: string, checked: CheckedClaims, token: string, payloadStart: number, payloadEnd: number) {
    this.tenant = checked.tenant;
    this.tenantName = checked.tenantName;
    this.user = checked.user;
    this.scopes = checked.scopes;
    this.issuer = issuer;
    this.audience = checked.audience;
    this.#expiry = checked.times.expiry;
    this.#token = token;
    this.#payloadStart = payloadStart;
    this.#payloadEnd = payloadEnd;
    Object.freeze(this);
  }

  /** A new `Date` on every read (a `Date` is mutable; the context is shared). */
  get expiresAt(): Date {
    return new Date(this.#expiry * 1000);
  }

  /** Decoded from the token on first read, then the same frozen object. */
  get claims(): Readonly<Record<string, unknown>> {
    this.#claims ??= sanitizeAndFreeze(decodeJwsPayload(this.#token, { headerEnd: this.#payloadStart - 1, payloadEnd: this.#payloadEnd }));
    return this.#claims;
  }

  toJSON(): AuthContextJson {
    return {
      tenant: this.tenant,
      tenantName: this.tenantName,
      user: this.user,
      scopes: [...this.scopes],
      issuer: this.issuer,
      audience: this.audience,
      expiresAt: this.expiresAt.toISOString(),
      claims: this.claims,
    };
  }

  [nodeInspect](): AuthContextJson {
    return this.toJSON();
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
