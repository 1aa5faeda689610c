/**
 * Who may call a handler: a verified caller (else 500, the route is mounted without the auth
 * middleware), with the scopes the route needs (403 `insufficient_scope`, told to the verifier's
 * `reportRefusal` where the handler was given it), and, for operations on a tenant's data, a
 * private tenant (403 `public_tenant_not_allowed`).
 */
import { type AuthContext, ConfigurationError, SCOPES, type ScopeRequirement, type Verifier, toErrorResponse } from '../index.js';
import { scopeFailure } from '../internal/index.js';
import { PaymentLinkError, problemResponse } from './errors.js';
import type { HandlerResponse } from './handler-request.js';

/** The scope the payment-link routes (`POST /payment-links/`, `GET /payment-links/:id`) need. */
export const LINK_SCOPE = SCOPES.processPayments;

/** What a route demands of its caller. */
export interface CallerPolicy {
  /** Scopes on top of the default policy; `undefined` for the default policy only. */
  readonly requiredScopes?: ScopeRequirement | undefined;
  /** `false` refuses the public tenant (a product acting as itself). */
  readonly allowPublicTenant: boolean;
  readonly realm: string;
  /** Hears each scope refusal: the verifier's `reportRefusal`, for its `onEvent`. */
  readonly reportRefusal: Verifier['reportRefusal'];
}

/** The caller, or the response refusing it. */
export type CallerCheck = { readonly ok: true; readonly auth: AuthContext } | { readonly ok: false; readonly response: HandlerResponse };

/** Applies `policy` to the request's `auth`. */
export function checkCaller(auth: AuthContext | null | undefined, policy: CallerPolicy): CallerCheck {
  if (auth === null || auth === undefined) {
    const error = new ConfigurationError('A reference handler ran where no verification did: mount it behind the auth middleware.');
    return { ok: false, response: toErrorResponse(error, { realm: policy.realm }) };
  }
  const denied = scopeFailure(auth, policy.requiredScopes);
  if (denied !== null) {
    policy.reportRefusal?.(denied, auth);
    return { ok: false, response: toErrorResponse(denied, { realm: policy.realm }) };
  }
  if (!policy.allowPublicTenant && auth.tenant.isPublic) {
    const error = new PaymentLinkError(
      'public_tenant_not_allowed',
      'The public tenant acts for the product itself and has no payment links; use a token for a private tenant.',
    );
    return { ok: false, response: problemResponse(error) };
  }
  return { ok: true, auth };
}
