/**
 * `GET /info/`: lets an integrator confirm that authentication is configured. Any valid token
 * with one of the gateway's scopes (the default policy) gets 200 with what the gateway
 * understood of it.
 */
import type { Verifier } from '../index.js';
import { checkRealm, functionOption, optionNames, rejectUnknownOptions } from '../internal/index.js';
import { checkCaller } from './caller.js';
import type { Handler, HandlerResponse } from './handler-request.js';
import { formatSeconds } from './timestamps.js';

/** The members of {@link InfoHandlerOptions}: any other is refused, naming the nearest. */
const INFO_HANDLER_OPTION_NAMES = optionNames<InfoHandlerOptions>({ realm: true, reportRefusal: true });

/** The body of a 200 answer of `GET /info/`. */
export interface InfoBody {
  /** `ern:<product>/tenants/<id>` */
  readonly tenant_ern: string;
  readonly tenant_id: string;
  /** `true` when the product acts as itself. */
  readonly public_tenant: boolean;
  /** `tenant_name`, or `null`. */
  readonly tenant_name: string | null;
  readonly product: string;
  /** The registered issuer (`iss`). */
  readonly issuer: string;
  /** The gateway audience the token's `aud` matched. */
  readonly audience: string;
  /** The token's scopes, in the token's order. */
  readonly scopes: readonly string[];
  /** `user_ern` as given, or `null`. */
  readonly user_ern: string | null;
  /** The token's expiry: ISO 8601 UTC, second precision, `Z`. */
  readonly expires: string;
}

/** Options of {@link createInfoHandler}. */
export interface InfoHandlerOptions {
  /**
   * The `realm` of the challenge when the scopes fall short.
   * @default 'paygate'
   */
  readonly realm?: string | undefined;
  /**
   * The verifier's `reportRefusal` (pass `verifier.reportRefusal`): a token this handler refuses
   * for holding none of the gateway's scopes (403 `insufficient_scope`) then reaches the verifier's `onEvent` as a
   * `verify_failure`, as an adapter's refusal does. `undefined` (as on a verifier without
   * `onEvent`) reports nothing.
   * @default undefined
   */
  readonly reportRefusal?: Verifier['reportRefusal'] | undefined;
}

/** Creates the `GET /info/` handler. */
export function createInfoHandler(options: InfoHandlerOptions = {}): Handler {
  rejectUnknownOptions('createInfoHandler', options, INFO_HANDLER_OPTION_NAMES);
  const policy = {
    allowPublicTenant: true,
    realm: checkRealm(options.realm, 'createInfoHandler: realm'),
    reportRefusal: functionOption<Verifier['reportRefusal']>('createInfoHandler', 'reportRefusal', options.reportRefusal),
  } as const;
  return async (request): Promise<HandlerResponse> => {
    const caller = checkCaller(request.auth, policy);
    if (!caller.ok) return caller.response;
    const { auth } = caller;
    const body: InfoBody = {
      tenant_ern: auth.tenant.ern,
      tenant_id: auth.tenant.id,
      public_tenant: auth.tenant.isPublic,
      tenant_name: auth.tenantName,
      product: auth.tenant.product,
      issuer: auth.issuer,
      audience: auth.audience,
      scopes: [...auth.scopes],
      user_ern: auth.user?.ern ?? null,
      expires: formatSeconds(auth.expiresAt.getTime()),
    };
    return { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' }, body };
  };
}
