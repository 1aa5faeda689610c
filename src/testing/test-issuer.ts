/**
 * A test issuer: an integration's keys, JWKS and tokens, for a consuming app's tests (and ours).
 * Every claim has a default that makes a valid token for the audience and tenant given; any claim
 * or header member can be overridden, or removed with `undefined`.
 */
import {
  booleanOption,
  describeValue,
  functionOption,
  numberOption,
  optionNames,
  quote,
  rejectUnknownOptions,
  withoutTrailingSlashes,
} from '../internal/index.js';
import { type IssuerEntry, IssuerRegistry, parseTenantErn } from '../index.js';
import { type JwksServer, type ServeJwksOptions, checkServeJwksOptions, serveJwks } from './jwks-server.js';
import { type PublishedJwk, type TestKey, generateTestKey, isTestKey, signRawToken } from './test-key.js';

/** The members of {@link TestIssuerOptions}: any other is refused, naming the nearest. */
const TEST_ISSUER_OPTION_NAMES = optionNames<TestIssuerOptions>({
  product: true,
  audience: true,
  issuer: true,
  tenant: true,
  scope: true,
  tenantName: true,
  jwksUri: true,
  lifetime: true,
  now: true,
  kid: true,
  tenants: true,
  maxTokenLifetime: true,
  subjectMustEqualIssuer: true,
});

/** Options of {@link createTestIssuer}. */
export interface TestIssuerOptions {
  /**
   * The ERN product the issuer acts for (its entry's `products`).
   * @default 'acme'
   */
  readonly product?: string | undefined;
  /**
   * The `aud` of its tokens.
   * @default 'https://payments.test'
   */
  readonly audience?: string | readonly string[] | undefined;
  /**
   * Its `iss` (and `sub`).
   * @default 'https://issuer.test'
   */
  readonly issuer?: string | undefined;
  /**
   * The `tenant_ern` of its tokens: a tenant of `product` (the issuer's entry trusts no other).
   * @default `ern:<product>/tenants/t-1`
   */
  readonly tenant?: string | undefined;
  /**
   * The `scope` of its tokens.
   * @default 'pay:processPayments'
   */
  readonly scope?: string | undefined;
  /**
   * The `tenant_name` of its tokens.
   * @default 'Test Tenant'
   */
  readonly tenantName?: string | undefined;
  /**
   * Where its msw `handlers` serve its JWKS; while `listen()` serves it, `entry.jwksUri` is the
   * loopback URL instead.
   * @default `<issuer>/.well-known/jwks.json`
   */
  readonly jwksUri?: string | undefined;
  /**
   * Seconds from `iat` to `expt` of its tokens, from 0 to 366 days (31 622 400).
   * @default 300
   */
  readonly lifetime?: number | undefined;
  /**
   * The clock its tokens are issued by, in milliseconds (share it with the verifier's `now`).
   * @default `() => Date.now()`, read at every call: vitest fake timers apply whenever installed
   */
  readonly now?: (() => number) | undefined;
  /**
   * The `kid` of its first key; later keys get `<kid>-2`, `<kid>-3`…
   * @default 'test-key'
   */
  readonly kid?: string | undefined;
  /** Its entry's `tenants` (a limited integration). @default undefined */
  readonly tenants?: readonly string[] | undefined;
  /**
   * Its entry's `maxTokenLifetime`, in seconds (above 0, at most 7 days).
   * @default undefined (the verifier's `maxTokenLifetime`)
   */
  readonly maxTokenLifetime?: number | undefined;
  /** Its entry's `subjectMustEqualIssuer`. @default undefined (true) */
  readonly subjectMustEqualIssuer?: boolean | undefined;
}

/** The members of {@link AddKeyOptions}: any other is refused, naming the nearest. */
const ADD_KEY_OPTION_NAMES = optionNames<AddKeyOptions>({ kid: true, modulusLength: true, jwk: true, publish: true });

/** The members of {@link RotateOptions}: any other is refused, naming the nearest. */
const ROTATE_OPTION_NAMES = optionNames<RotateOptions>({ kid: true, retire: true, publishOnly: true });

/** The members of the options of {@link TestIssuer.token}: any other is refused, naming the nearest. */
const TOKEN_OPTION_NAMES = optionNames<{ readonly key?: TestKey }>({ key: true });

/** The longest `lifetime` of {@link TestIssuerOptions}: 366 days, in seconds. */
const MAX_TEST_LIFETIME = 366 * 86_400;

/**
 * `value`, or `fallback` when it is `undefined`.
 * @throws {TypeError} naming the option and the value found when it is not a non-empty string.
 */
function textOption(name: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value === '') {
    throw new TypeError(`createTestIssuer: ${name} must be a non-empty string, got ${describeValue(value)}`);
  }
  return value;
}

/** @throws {TypeError} naming `audience` and the value found unless it is a non-empty string or a non-empty array of them. */
function audienceOption(value: unknown): string | readonly string[] {
  if (value === undefined) return 'https://payments.test';
  const valid = (item: unknown) => typeof item === 'string' && item !== '';
  if (valid(value) || (Array.isArray(value) && value.length > 0 && value.every(valid))) return value as string | readonly string[];
  throw new TypeError(`createTestIssuer: audience must be a non-empty string or an array of them, got ${describeValue(value)}`);
}

/** Claims to set on a token; `undefined` removes a default claim. */
export type TestClaims = Readonly<Record<string, unknown>>;
/** Header members to set on a token; `undefined` removes a default member. */
export type TestHeader = Readonly<Record<string, unknown>>;

/** Options of {@link TestIssuer.addKey}. */
export interface AddKeyOptions {
  /**
   * The `kid` of the new key.
   * @default the next `<kid>-<n>`
   */
  readonly kid?: string | undefined;
  /**
   * Modulus size in bits, as `generateTestKey`'s: a whole number of at least 512 (below 2048 only
   * to show that such keys are refused).
   * @default 2048
   */
  readonly modulusLength?: number | undefined;
  /** Members to set on (or remove from) the published JWK. @default {} */
  readonly jwk?: Readonly<Record<string, unknown>> | undefined;
  /**
   * Publish it in the JWKS.
   * @default true
   */
  readonly publish?: boolean | undefined;
}

/** Options of {@link TestIssuer.rotate}. */
export interface RotateOptions {
  /**
   * The `kid` of the new key.
   * @default the next `<kid>-<n>`
   */
  readonly kid?: string | undefined;
  /**
   * Unpublish every other key (as after their tokens expired, or a compromise).
   * @default false
   */
  readonly retire?: boolean | undefined;
  /**
   * Publish the new key without signing with it (pre-publication); {@link TestIssuer.promote}
   * makes it the signer later. The gateway's contract: a new key signs only once it has been
   * published for at least an hour.
   * @default false (the new key signs at once)
   */
  readonly publishOnly?: boolean | undefined;
}

/**
 * An msw request handler, typed by its shape only so that these types load without msw. msw's
 * `server.use()` wants its own class type: for typed handlers use `jwksHandlers()` from
 * `paygate-auth/testing/msw`.
 */
export interface JwksRequestHandler {
  readonly info: { readonly method?: unknown; readonly path?: unknown };
  run(args: never): Promise<unknown>;
}

/** A test issuer made by {@link createTestIssuer}. */
export interface TestIssuer {
  /** Its `iss`. */
  readonly issuer: string;
  readonly product: string;
  /** The default `tenant_ern`. */
  readonly tenant: string;
  readonly audience: string | readonly string[];
  /** Its registry entry, for `new IssuerRegistry([issuer.entry])`; its `jwksUri` follows `listen()`. */
  readonly entry: IssuerEntry;
  /** Where its JWKS is served now: its msw URL, or after `listen()` the loopback server's. */
  readonly jwksUri: string;
  /** The JWKS document as served now. */
  readonly jwks: { readonly keys: readonly Readonly<Record<string, unknown>>[] };
  /** The key that signs by default. */
  readonly signingKey: TestKey;
  /** How many JWKS requests its msw handlers and servers have answered. */
  readonly jwksRequests: number;
  /**
   * msw handlers serving the JWKS at its msw URL (needs the optional peer `msw`). Typed by shape:
   * in TypeScript, take `jwksHandlers(issuer)` from `paygate-auth/testing/msw`, typed for
   * `server.use()`.
   */
  readonly handlers: readonly JwksRequestHandler[];
  /** The claims a token gets, with `overrides` applied. */
  claims(overrides?: TestClaims): Record<string, unknown>;
  /** Mints a token: default claims and header, with overrides; signed by `key` or the signing key. */
  token(claims?: TestClaims, header?: TestHeader, options?: { readonly key?: TestKey | undefined }): Promise<string>;
  /** A new key, published (unless told otherwise) but not signing until {@link promote}d. */
  addKey(options?: AddKeyOptions): Promise<TestKey>;
  /**
   * A new key, published and signing from now on; with `publishOnly`, published only (promote it
   * later); with `retire`, every other key is unpublished.
   */
  rotate(options?: RotateOptions): Promise<TestKey>;
  /** Makes `key` the signing key: a `TestKey`, or the kid of a key this issuer made; returns it. */
  promote(key: TestKey | string): TestKey;
  /** Unpublishes the keys `kids`; with none given, every key but the signing key. */
  retire(...kids: readonly string[]): void;
  /** Adds raw entries to the JWKS as given (malformed ones included). */
  publish(...entries: readonly Readonly<Record<string, unknown>>[]): void;
  /** Removes every JWKS entry whose `kid` is `kid`. */
  unpublish(kid: string): void;
  /**
   * Serves the JWKS from a real HTTP server on 127.0.0.1; `entry.jwksUri` points there from now on,
   * until that server is closed (its own `close()`, or the issuer's).
   * Verifiers from `createTestVerifier()` follow it whenever they were built; one built with
   * `createVerifier({ registry: [issuer.entry] })` keeps the URL it was given: build it after.
   */
  listen(options?: ServeJwksOptions): Promise<JwksServer>;
  /** Closes every server `listen()` opened; the JWKS is served at its msw URL again. */
  close(): Promise<void>;
}

/** What `createTestVerifier()` reads of an issuer, beside its public members. */
export interface IssuerLink {
  /** Its JWKS URL before any `listen()`: the one a kit verifier registers. */
  readonly registeredJwksUri: string;
  /** Bumped on every change to the served JWKS, or to where it is served. */
  revision(): number;
  /** The registry entry, with `registeredJwksUri`. */
  entry(): IssuerEntry;
  /** Answers one JWKS request with the JWKS as served now (and counts it). */
  respond(): Response;
}

const links = new WeakMap<TestIssuer, IssuerLink>();

/** The link of an issuer made by {@link createTestIssuer}, if it is one (not part of the public API). */
export function issuerLink(issuer: TestIssuer): IssuerLink | undefined {
  return links.get(issuer);
}

/** Warns that a verifier built from `issuer.entry` before `listen()` still fetches the msw URL. */
function warnListenOrder(mswUri: string): void {
  process.emitWarning(
    `issuer.entry was read before issuer.listen(): a verifier built from it still fetches ${mswUri}, which only msw answers, ` +
      'and fails with jwks_unavailable (503) without it. Build that verifier (createVerifier, or createTestVerifier with followIssuers: false) ' +
      'after listen(), or use createTestVerifier(issuer) without followIssuers: false, which follows listen().',
    { code: 'PAYGATE_AUTH_LISTEN_ORDER' },
  );
}

/** What the members of each kind of overrides are, for the message refusing them. */
const OVERRIDDEN = { claims: 'claims', header: 'header members' } as const;

/**
 * `base` with `overrides` applied, `undefined` removing a member.
 * @throws {TypeError} naming `owner`, `kind` and the value found when `overrides` is not an object.
 */
function withOverrides(
  owner: string,
  kind: keyof typeof OVERRIDDEN,
  base: Record<string, unknown>,
  overrides: Readonly<Record<string, unknown>> | undefined,
): Record<string, unknown> {
  if (overrides !== undefined && (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides))) {
    throw new TypeError(
      `${owner}: ${kind} must be an object of ${OVERRIDDEN[kind]} (a member set to undefined removes it), got ${describeValue(overrides)}: ` +
        'for a segment of any other shape, use signRawToken()',
    );
  }
  const result = { ...base };
  for (const [name, value] of Object.entries(overrides ?? {})) {
    if (value === undefined) delete result[name];
    else result[name] = value;
  }
  return result;
}

/**
 * @throws {TypeError} naming `owner`, `name` and the value found unless `kid` is a string (a
 * `TestKey` given in its place would match no JWKS entry, and the call would do nothing).
 */
function checkKid(owner: string, name: string, kid: unknown): void {
  if (typeof kid === 'string') return;
  throw new TypeError(`${owner}: ${name} must be a kid (a string), got ${describeValue(kid)}: for a TestKey, pass key.kid`);
}

/**
 * The product of the `tenant` option.
 * @throws {TypeError} naming `createTestIssuer`, `tenant` and the ERN parser's reason when it is no tenant ERN.
 */
function tenantProductOf(tenant: string): string {
  try {
    return parseTenantErn(tenant).product;
  } catch (error) {
    throw new TypeError(
      `createTestIssuer: tenant must be a tenant ERN, ern:<product>/tenants/<id> (${(error as Error).message}): ` +
        "give one such as 'ern:acme/tenants/t-1'",
    );
  }
}

/**
 * Checks the issuer's registry entry as the verifier's registry will, before any key is made:
 * all but where its JWKS may be downloaded from, which the registry a test builds decides
 * (`jwksAllowedHosts`: an msw URL on a private host, say).
 * @throws {TypeError} naming `createTestIssuer` and the registry's reason (the entry's members
 * bear the names of the options they come from).
 */
function checkEntry(entry: IssuerEntry): void {
  const host = URL.canParse(entry.jwksUri) ? new URL(entry.jwksUri).hostname : '';
  try {
    new IssuerRegistry([entry], host === '' ? {} : { jwksAllowedHosts: [host] });
  } catch (error) {
    throw new TypeError(
      `createTestIssuer: its registry entry is refused (${(error as Error).message}): ` +
        'fix the option of that name (issuer, jwksUri, tenants, maxTokenLifetime, subjectMustEqualIssuer)',
    );
  }
}

interface MswModule {
  readonly http: { get(path: string, resolver: () => Response): JwksRequestHandler };
}

async function loadMsw(): Promise<MswModule | undefined> {
  try {
    return (await import('msw')) as unknown as MswModule;
  } catch {
    return undefined;
  }
}

/**
 * Creates a test issuer with a fresh 2048-bit RS256 key.
 *
 * @example
 * ```ts
 * const issuer = await createTestIssuer({ product: 'acme', audience: 'https://payments.test' });
 * server.use(...issuer.handlers);
 * const verifier = createVerifier({ registry: new IssuerRegistry([issuer.entry]), audience: 'https://payments.test' });
 * const auth = await verifier.verify(await issuer.token({ scope: 'hub:subscribe' }));
 * ```
 */
export async function createTestIssuer(options: TestIssuerOptions = {}): Promise<TestIssuer> {
  rejectUnknownOptions('createTestIssuer', options, TEST_ISSUER_OPTION_NAMES);
  const product = textOption('product', options.product, 'acme');
  const issuer = textOption('issuer', options.issuer, 'https://issuer.test');
  const audience = audienceOption(options.audience);
  const tenant = textOption('tenant', options.tenant, `ern:${product}/tenants/t-1`);
  const tenantProduct = tenantProductOf(tenant);
  if (tenantProduct !== product) {
    throw new TypeError(
      `createTestIssuer: tenant ${quote(tenant)} is of the product ${quote(tenantProduct)}, ` +
        `not the issuer's product ${quote(product)}: give product: ${quote(tenantProduct)} too`,
    );
  }
  const scope = textOption('scope', options.scope, 'pay:processPayments');
  const tenantName = textOption('tenantName', options.tenantName, 'Test Tenant');
  // Read at every call, so that fake timers installed after this issuer was made still apply.
  const now = functionOption<() => number>('createTestIssuer', 'now', options.now) ?? (() => Date.now());
  const lifetime = numberOption('createTestIssuer', 'lifetime', options.lifetime, 300, {
    min: 0,
    max: MAX_TEST_LIFETIME,
    unit: 'seconds',
  });
  const kidPrefix = textOption('kid', options.kid, 'test-key');
  const mswUri = textOption('jwksUri', options.jwksUri, `${withoutTrailingSlashes(issuer)}/.well-known/jwks.json`);
  const entryAt = (uri: string): IssuerEntry => ({
    issuer,
    jwksUri: uri,
    products: [product],
    ...(options.tenants === undefined ? {} : { tenants: options.tenants }),
    ...(options.maxTokenLifetime === undefined ? {} : { maxTokenLifetime: options.maxTokenLifetime }),
    ...(options.subjectMustEqualIssuer === undefined ? {} : { subjectMustEqualIssuer: options.subjectMustEqualIssuer }),
  });
  checkEntry(entryAt(mswUri));
  let jwksUri = mswUri;
  /** Whether `entry` was read while it named the msw URL (a verifier may hold it). */
  let entryReadBeforeListen = false;
  let keyCount = 0;
  let jwksRequests = 0;
  let revision = 0;
  let published: Readonly<Record<string, unknown>>[] = [];
  const keys = new Map<string, TestKey>();
  const servers: JwksServer[] = [];
  const msw = await loadMsw();
  const setPublished = (next: Readonly<Record<string, unknown>>[]): void => {
    published = next;
    revision += 1;
  };
  /**
   * Serves the JWKS at `uri` from now on. A change for the verifiers that follow the issuer: they
   * reload its keys from there before their next verification, rather than wait out the backoff
   * of a download that failed where it was served before (or where nothing served it).
   */
  const moveTo = (uri: string): void => {
    if (uri === jwksUri) return;
    jwksUri = uri;
    revision += 1;
  };
  const nextKid = (): string => {
    keyCount += 1;
    return keyCount === 1 ? kidPrefix : `${kidPrefix}-${keyCount}`;
  };
  const addKey = async (add: AddKeyOptions = {}): Promise<TestKey> => {
    rejectUnknownOptions('addKey', add, ADD_KEY_OPTION_NAMES);
    const publish = booleanOption('addKey', 'publish', add.publish, true);
    const key = await generateTestKey({ kid: add.kid ?? nextKid(), modulusLength: add.modulusLength, jwk: add.jwk });
    keys.set(key.kid, key);
    if (publish) setPublished([...published, key.publicJwk as PublishedJwk]);
    return key;
  };
  let signingKey = await addKey();
  const document = () => ({ keys: published });
  const claimsFor = (owner: string, overrides: TestClaims | undefined): Record<string, unknown> => {
    const iat = Math.floor(now() / 1000);
    const base: Record<string, unknown> = {
      iss: issuer,
      sub: issuer,
      aud: audience,
      iat,
      expt: iat + lifetime,
      tenant_ern: tenant,
      tenant_name: tenantName,
      scope,
    };
    return withOverrides(owner, 'claims', base, overrides);
  };
  const claims = (overrides?: TestClaims): Record<string, unknown> => claimsFor('claims', overrides);
  const respond = (): Response => {
    jwksRequests += 1;
    return Response.json(document());
  };
  const unpublishAllBut = (kid: string): void => setPublished(published.filter((jwk) => jwk.kid === kid));

  const testIssuer: TestIssuer = {
    issuer,
    product,
    tenant,
    audience,
    get entry() {
      if (jwksUri === mswUri) entryReadBeforeListen = true;
      return entryAt(jwksUri);
    },
    get jwksUri() {
      return jwksUri;
    },
    get jwks() {
      return document();
    },
    get signingKey() {
      return signingKey;
    },
    get jwksRequests() {
      return jwksRequests;
    },
    get handlers(): readonly JwksRequestHandler[] {
      if (msw === undefined)
        throw new Error('issuer.handlers needs the optional peer dependency "msw"; or serve the JWKS with issuer.listen()');
      return [msw.http.get(mswUri, respond)];
    },
    claims,
    async token(overrides, header, tokenOptions = {}) {
      rejectUnknownOptions('token', tokenOptions, TOKEN_OPTION_NAMES);
      if (tokenOptions.key !== undefined && !isTestKey(tokenOptions.key)) {
        throw new TypeError(
          `token: key must be a TestKey (from addKey(), rotate() or generateTestKey()), got ${describeValue(tokenOptions.key)}`,
        );
      }
      const key = tokenOptions.key ?? signingKey;
      const payload = claimsFor('token', overrides);
      return signRawToken(key, withOverrides('token', 'header', { alg: 'RS256', typ: 'JWT', kid: key.kid }, header), payload);
    },
    addKey,
    async rotate(rotation = {}) {
      rejectUnknownOptions('rotate', rotation, ROTATE_OPTION_NAMES);
      const publishOnly = booleanOption('rotate', 'publishOnly', rotation.publishOnly, false);
      const retire = booleanOption('rotate', 'retire', rotation.retire, false);
      if (publishOnly && retire) {
        throw new TypeError('rotate: publishOnly and retire cannot be combined (retiring would unpublish the signing key)');
      }
      const key = await addKey({ kid: rotation.kid });
      if (publishOnly) return key;
      if (retire) unpublishAllBut(key.kid);
      signingKey = key;
      return key;
    },
    promote(key) {
      if (typeof key === 'string') {
        const found = keys.get(key);
        if (found === undefined) {
          throw new TypeError(`promote: ${describeValue(key)} is not a key of this issuer (its keys: ${[...keys.keys()].join(', ')})`);
        }
        signingKey = found;
        return found;
      }
      if (!isTestKey(key)) {
        throw new TypeError(`promote: key must be a TestKey or the kid of a key of this issuer, got ${describeValue(key)}`);
      }
      signingKey = key;
      return key;
    },
    retire(...kids) {
      for (const [index, kid] of kids.entries()) checkKid('retire', `kids[${index}]`, kid);
      if (kids.length === 0) unpublishAllBut(signingKey.kid);
      else setPublished(published.filter((jwk) => !kids.includes(jwk.kid as string)));
    },
    publish(...entries) {
      setPublished([...published, ...entries]);
    },
    unpublish(kid) {
      checkKid('unpublish', 'kid', kid);
      setPublished(published.filter((jwk) => jwk.kid !== kid));
    },
    async listen(listenOptions = {}) {
      // Checked here, under its own name: serveJwks() sees a copy, with an onRequest of the kit's.
      checkServeJwksOptions('listen', listenOptions);
      // Checked here: serveJwks() sees only the wrapper below, and a bad one would throw in the server.
      const onRequest = functionOption<() => void>('listen', 'onRequest', listenOptions.onRequest);
      const server = await serveJwks(document, {
        ...listenOptions,
        onRequest: () => {
          jwksRequests += 1;
          onRequest?.();
        },
      });
      servers.push(server);
      moveTo(server.url);
      if (entryReadBeforeListen) {
        entryReadBeforeListen = false;
        warnListenOrder(mswUri);
      }
      // Closed on its own, it stops being where the JWKS is served: the issuer falls back on the
      // server opened before it, or its msw URL, never a URL nothing answers.
      const closeServer = (): Promise<void> => {
        const index = servers.indexOf(server);
        if (index !== -1) servers.splice(index, 1);
        moveTo(servers.at(-1)?.url ?? mswUri);
        return server.close();
      };
      return {
        url: server.url,
        get requests() {
          return server.requests;
        },
        close: closeServer,
      };
    },
    async close() {
      await Promise.all(servers.splice(0).map((server) => server.close()));
      moveTo(mswUri);
    },
  };
  links.set(testIssuer, {
    registeredJwksUri: mswUri,
    revision: () => revision,
    entry: () => entryAt(mswUri),
    respond,
  });
  return testIssuer;
}
