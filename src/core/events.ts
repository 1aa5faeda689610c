/**
 * What a verifier reports about itself, for metrics, traces and logs: each verification's outcome
 * and duration, JWKS fetches, result-cache hits and misses, key removals, keys breaking the key rules, registry changes. No event carries a token, a signature or key material;
 * a failure's `facts` and `hint` may hold what the client sent (an `aud`, a `kid`) beside the
 * configuration.
 */
import type { AuthErrorCode } from './errors.js';
import type { FailureFacts } from './facts.js';
import type { JwksAddressRefusal } from './jwks-address.js';
import type { JwksFailureReason } from './jwks-fetch.js';
import type { IgnoredKey } from './jwk.js';
import type { KeyHistoryEntry } from './key-history.js';
import type { RegistryChange } from './registry.js';

/** Why a JWKS was fetched. */
export type JwksFetchTrigger = 'initial' | 'max_age' | 'kid_miss' | 'refresh' | 'warm_up';

/** A JWKS download finished. */
export interface JwksFetchEvent {
  readonly type: 'jwks_fetch';
  readonly issuer: string;
  readonly trigger: JwksFetchTrigger;
  readonly outcome: 'ok' | 'error';
  /** Wall-clock milliseconds the download took. */
  readonly durationMs: number;
  /** Usable keys in the new set (`ok` only). */
  readonly keys?: number;
  /** Entries ignored because they broke a key rule (`ok` only). */
  readonly ignoredKeys?: number;
  /**
   * Which entries, and the key rule each broke (`ok` only, when any was ignored; the first 20, the
   * rest only counted in `ignoredKeys`). A `kid` here is the JWKS's text: hostile.
   */
  readonly ignored?: readonly IgnoredKey[];
  /** Why it failed (`error` only). */
  readonly reason?: JwksFailureReason | 'key_import';
  /** The HTTP status, when the endpoint answered one other than 200. */
  readonly status?: number;
  /**
   * The host refused, the address judged and the rule it breaks (`reason: 'address'` only): the
   * JWKS host is, or resolved to, a special-purpose address. Allow a host that truly serves the
   * JWKS with `jwksAllowedHosts`.
   */
  readonly address?: JwksAddressRefusal;
}

/** A verification succeeded. */
export interface VerifySuccessEvent {
  readonly type: 'verify_success';
  /** The registered issuer. */
  readonly issuer: string;
  /** The `kid` of the issuer's key that verified the token. */
  readonly kid: string;
  /** `true` when the result cache answered (its entry re-checked), `false` when every rule ran. */
  readonly cached: boolean;
  /** Wall-clock milliseconds `verify()` took. */
  readonly durationMs: number;
}

/** A verification failed. `issuer` is set once the token's issuer was recognised. */
export interface VerifyFailureEvent {
  readonly type: 'verify_failure';
  readonly code: AuthErrorCode;
  readonly issuer: string | null;
  /**
   * The `kid` of the issuer's key the token was checked against, once one was found (so never a
   * `kid` the issuer does not publish); `null` before.
   */
  readonly kid: string | null;
  /** `true` when a result-cache entry was being re-checked. */
  readonly cached: boolean;
  /** Wall-clock milliseconds `verify()` took. */
  readonly durationMs: number;
  readonly claim?: string;
  /**
   * What the failing rule compared, as data (the error's `facts`), keyed on `code`: client values
   * in it are hostile.
   */
  readonly facts?: FailureFacts;
  /**
   * What was compared, written from `facts` when read (the error's `hint`): one escaped line,
   * never a token, a signature or key material.
   */
  readonly hint?: string;
}

/** A verification was answered from the result cache (`hit`) or verified in full (`miss`). */
export interface CacheEvent {
  readonly type: 'cache';
  readonly outcome: 'hit' | 'miss';
}

/**
 * Keys stopped verifying: removed from the JWKS on a reload (`jwks`), revoked by an operator
 * (`revoked`), past the stale window because the JWKS could not be reloaded (`expired`), their
 * issuer's `jwksUri` changed (`issuer_changed`) or their issuer was removed (`issuer_removed`).
 */
export interface KeysRemovedEvent {
  readonly type: 'keys_removed';
  readonly issuer: string;
  readonly kids: readonly string[];
  readonly cause: 'jwks' | 'revoked' | 'expired' | 'issuer_changed' | 'issuer_removed';
}

/**
 * A key rule an issuer broke, as this verifier saw it:
 * - `key_used_early`: a key verified its first token less than `keyPublishLead` after it can
 *   have been published (after the last download that did not list it); never for a key in the
 *   issuer's first download here, whose publication time is unknown;
 * - `key_rotation_overdue`: a key signed a token (by its `iat`) more than `keyMaxAge` after it
 *   was first seen;
 * - `key_withdrawn`: a download no longer listed a key while a token it verified was still valid
 *   (a compromised key looks like this).
 */
export type KeyBreach = 'key_used_early' | 'key_rotation_overdue' | 'key_withdrawn';

/** A key broke a rule; reported once per issuer, `kid` and rule. */
export interface KeyBreachEvent {
  readonly type: KeyBreach;
  readonly issuer: string;
  readonly kid: string;
  /** The key's history when the breach was found, this breach included. */
  readonly key: KeyHistoryEntry;
}

/** The trusted issuers changed (`setRegistry()`); each list by `iss`, possibly empty. */
export interface RegistryChangedEvent extends RegistryChange {
  readonly type: 'registry_changed';
  /** Issuers registered after the change. */
  readonly issuers: number;
}

/**
 * An operator suspended an issuer (`suspendIssuer()`, or a control every instance applies) or
 * lifted the suspension (`resumeIssuer()`); reported when the state changes, not for a repeat.
 */
export interface IssuerSuspensionEvent {
  readonly type: 'issuer_suspended' | 'issuer_resumed';
  readonly issuer: string;
}

/** Every event a verifier reports. */
export type VerifierEvent =
  | VerifySuccessEvent
  | VerifyFailureEvent
  | JwksFetchEvent
  | CacheEvent
  | KeysRemovedEvent
  | KeyBreachEvent
  | RegistryChangedEvent
  | IssuerSuspensionEvent;

/**
 * Receives {@link VerifierEvent}s. It must not throw; if it does, the error is ignored, and so is
 * the rejection of a promise it returns (an `async` listener).
 */
export type VerifierEventListener = (event: VerifierEvent) => void;

/** Calls `listener`, if any, shielding the caller from its failures. */
export function emit(listener: VerifierEventListener | undefined, event: VerifierEvent): void {
  if (listener === undefined) return;
  try {
    ignoreRejection(listener(event));
  } catch {
    // A metrics hook must never change the outcome of a verification.
  }
}

const ignore = (): void => {};

/**
 * What a caller's hook returned, with its rejection ignored if it is a promise (an `async` hook):
 * left alone, that rejection would be unhandled, which ends a Node process.
 */
export function ignoreRejection(returned: unknown): void {
  if (returned instanceof Promise) returned.catch(ignore);
}
