/**
 * The errors of the issuer side. Each carries a stable `code`; an {@link IssuerError} about one
 * input also names it in `field`. No message ever holds a private key, a token or a signature.
 */

/** Every code an {@link IssuerError} can carry. Stable: new codes may be added, none renamed. */
export type IssuerErrorCode =
  | 'unknown_field'
  | 'invalid_tenant'
  | 'tenant_not_allowed'
  | 'invalid_scope'
  | 'invalid_user'
  | 'invalid_tenant_name'
  | 'invalid_lifetime'
  | 'lifetime_exceeded'
  | 'invalid_kid'
  | 'key_not_ready'
  | 'unknown_key'
  | 'clock_behind';

/**
 * A token the gateway would refuse, refused before it is signed; a key operation on a key the
 * issuer does not hold; or a key publication from a clock behind the schedule's (`clock_behind`).
 * `field` names the input at fault (`tenant`, `scopes`, `lifetime`…).
 */
export class IssuerError extends Error {
  override readonly name = 'IssuerError';
  readonly code: IssuerErrorCode;
  /** The input at fault, when one is. */
  readonly field: string | undefined;

  constructor(code: IssuerErrorCode, message: string, field?: string) {
    super(message);
    this.code = code;
    this.field = field;
  }
}

/** Every code a {@link KeyStoreError} can carry. */
export type KeyStoreErrorCode =
  | 'key_not_found'
  | 'insecure_key_file'
  | 'insecure_directory'
  | 'invalid_key_file'
  | 'weak_key'
  | 'unusable_key'
  | 'key_mismatch'
  | 'invalid_schedule'
  | 'schedule_missing'
  | 'key_exists';

/**
 * A key store could not do what was asked: a missing key, a key file others may read, a damaged
 * file, a key under 2048 bits, a key that does not match its published half, a lost schedule.
 */
export class KeyStoreError extends Error {
  override readonly name = 'KeyStoreError';
  readonly code: KeyStoreErrorCode;

  constructor(code: KeyStoreErrorCode, message: string, options?: { readonly cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }
}
