/**
 * One token signed at once with a private key the caller holds, by the rules of the issuer's
 * `sign()`: for trying things out and for tests, without a key store or a rotation schedule.
 */
import { parseTenantErn } from '../index.js';
import {
  booleanOption,
  describeListFault,
  describeValue,
  functionOption,
  MAX_ENTRY_LIFETIME,
  MAX_KID_LENGTH,
  numberOption,
  rejectUnknownOptions,
  optionNames,
} from '../internal/index.js';
import { signClaims } from './compact.js';
import { IssuerError } from './errors.js';
import type { SigningKey } from './key-file.js';
import { issuerOption, namesOption, textOption } from './options.js';
import { signRs256 } from './rsa-key.js';
import { type ClaimSettings, type SignInput, buildClaims } from './token-claims.js';

/** Options of {@link signToken}. */
export interface SignTokenOptions {
  /**
   * The private key and its `kid`, such as {@link readPrivateKeyFile} resolves. A promise is
   * awaited only once the claims have passed, so a refused token is reported before a bad key.
   */
  readonly key: SigningKey | PromiseLike<SigningKey>;
  /**
   * The `iss` (and `sub`) of the token, as registered with the gateway: an HTTPS URI without
   * credentials (`http:` only on a loopback host, for tests), as the registry requires.
   */
  readonly issuer: string;
  /** The `aud` of the token: one audience or several. */
  readonly audience: string | readonly string[];
  /**
   * The product (or products) the issuer is registered for; a tenant of any other is refused.
   * @default the product of the input's tenant
   */
  readonly product?: string | readonly string[] | undefined;
  /**
   * The gateway's maximum token lifetime for this issuer, in seconds (above 0, at most 7 days).
   * @default 86400 (24 h)
   */
  readonly maxLifetime?: number | undefined;
  /**
   * Also write `exp` (equal to `expt`); `false` writes only `expt`.
   * @default true
   */
  readonly emitExp?: boolean | undefined;
  /**
   * The clock, in milliseconds since the epoch.
   * @default Date.now
   */
  readonly now?: (() => number) | undefined;
}

const OWNER = 'signToken';
const KNOWN_OPTIONS = optionNames<SignTokenOptions>({
  key: true,
  issuer: true,
  audience: true,
  product: true,
  maxLifetime: true,
  emitExp: true,
  now: true,
});
const DEFAULT_LIFETIME = 300;

function productOf(tenant: unknown): readonly string[] {
  try {
    return [parseTenantErn(tenant).product];
  } catch {
    return []; // buildClaims refuses the tenant, naming it
  }
}

function settingsOf(options: SignTokenOptions, tenant: unknown): ClaimSettings {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`${OWNER}: options must be an object with key and audience, got ${describeValue(options)}`);
  rejectUnknownOptions(OWNER, options, KNOWN_OPTIONS);
  const audience = options.audience;
  if (typeof audience === 'string') textOption(`${OWNER}: audience`, audience);
  else if (!Array.isArray(audience) || audience.length === 0)
    throw new TypeError(
      `${OWNER}: audience must be a non-empty string or a non-empty array of them, got ${describeListFault(audience, () => false)}`,
    );
  else for (const [index, item] of (audience as unknown[]).entries()) textOption(`${OWNER}: audience[${index}]`, item);
  const maxLifetime = numberOption(OWNER, 'maxLifetime', options.maxLifetime, 86_400, {
    unit: 'seconds',
    min: 0,
    max: MAX_ENTRY_LIFETIME,
    exclusiveMin: true,
  });
  booleanOption(OWNER, 'emitExp', options.emitExp, true);
  functionOption(OWNER, 'now', options.now);
  return {
    issuer: issuerOption(`${OWNER}: issuer`, options.issuer),
    audience: typeof audience === 'string' ? audience : Object.freeze([...audience]),
    products: namesOption(`${OWNER}: product`, options.product, false) ?? productOf(tenant),
    tenants: null,
    lifetime: Math.min(DEFAULT_LIFETIME, maxLifetime),
    maxLifetime,
    emitExp: options.emitExp !== false,
  };
}

/**
 * Signs one token for `input` with `options.key`, at once: the claims are built and checked by
 * the same rules as the issuer's `sign()` (its lifetime defaults to 300 s, capped by
 * `maxLifetime`), the header is `{ alg: 'RS256', typ: 'JWT', kid }`. Unlike `sign()`, nothing
 * checks that the key has been published: for trying things out and for tests. A gateway
 * accepts the token once its JWKS holds the key.
 * @throws {TypeError} for a bad option, naming it.
 * @throws {IssuerError} naming the first input the gateway would refuse.
 */
export async function signToken(input: SignInput, options: SignTokenOptions): Promise<string> {
  const key = Promise.resolve((options as SignTokenOptions | null)?.key);
  // The claims are checked first; a key that fails meanwhile is not left unhandled.
  key.catch(() => undefined);
  const settings = settingsOf(options, (input as Partial<SignInput> | null)?.tenant);
  const claims = buildClaims(input, settings, (options.now ?? Date.now)() / 1000);
  const { privateKey, kid } = (await key) ?? {};
  if (privateKey === undefined || typeof kid !== 'string' || kid === '')
    throw new TypeError(
      `${OWNER}: key must hold a privateKey and a non-empty kid (readPrivateKeyFile() resolves one), got ${privateKey === undefined ? 'no privateKey' : `kid ${describeValue(kid)}`}`,
    );
  if (kid.length > MAX_KID_LENGTH) {
    throw new IssuerError(
      'invalid_kid',
      `kid is ${kid.length} characters, over the ${MAX_KID_LENGTH} a gateway accepts: it would refuse the token (missing_kid). Give the key a shorter kid.`,
      'kid',
    );
  }
  return signClaims({ alg: 'RS256', typ: 'JWT', kid }, claims, (data) => signRs256(privateKey, data));
}
