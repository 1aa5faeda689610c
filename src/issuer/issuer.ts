/**
 * The integration's issuer: keys on a rotation schedule, the JWKS to publish, and tokens the
 * gateway accepts. Runs on Node and on WebCrypto runtimes (Workers, Deno, Bun).
 */
import { MIN_MODULUS_BITS, type RsaPublicJwk } from '../index.js';
import {
  booleanOption,
  capHint,
  describeListFault,
  describeValue,
  functionOption,
  ignoreRejection,
  isHttpsUri,
  jwkRejectReason,
  MAX_ENTRY_LIFETIME,
  numberOption,
  rejectUnknownOptions,
  optionNames,
  quote,
} from '../internal/index.js';
import { signClaims } from './compact.js';
import { IssuerError, KeyStoreError } from './errors.js';
import { type KeyRecord, type KeyStore, checkKeyStore } from './key-store.js';
import { URI_RULE, issuerOption, namesOption } from './options.js';
import { modulusBits } from './rsa-key.js';
import {
  type RotationOptions,
  type RotationPolicy,
  type Schedule,
  checkRotation,
  chooseStandby,
  needsStandby,
  nextKeyStart,
  promoteStandby,
  publishedKeys,
  recordRetention,
  recordsOf,
  scheduleOf,
  settleRetirements,
  signerIndex,
  standbyLeavesAt,
  unpublishAt,
  withoutDeparted,
} from './rotation.js';
import { type ClaimSettings, type SignInput, buildClaims } from './token-claims.js';

/** Options of {@link createIssuer}. Times are in seconds unless a name says otherwise. */
export interface IssuerOptions {
  /**
   * The `iss` (and `sub`) of its tokens, exactly as registered with the gateway: an HTTPS URI
   * (`http:` only on a loopback host, for tests).
   */
  readonly issuer: string;
  /** The `aud` of its tokens: the gateway service(s) they are for, each an HTTPS URI. */
  readonly audience: string | readonly string[];
  /** The product (or products) it is registered for; `sign()` refuses a tenant of any other. */
  readonly product: string | readonly string[];
  /**
   * For a limited integration: the only tenant ids it may act for.
   * @default undefined (every tenant of its products)
   */
  readonly tenants?: readonly string[] | undefined;
  /** Where its keys and schedule live. */
  readonly keyStore: KeyStore;
  /**
   * The clock, in milliseconds since the epoch: drives `iat`, the schedule and the JWKS.
   * @default Date.now
   */
  readonly now?: (() => number) | undefined;
  /** The rotation schedule. @default 48 h interval, 1 h publication lead, 1 h retention margin */
  readonly rotation?: RotationOptions | undefined;
  /**
   * Keep a standby key: published with each signing key, so that it has been published for
   * `rotation.publishLead` by the time that key signs, it takes over at once when the signing key
   * is compromised. `false`: no standby, and after a compromise of the signing key `sign()`
   * refuses (`key_not_ready`) until a replacement has been published for `rotation.publishLead`.
   * @default true
   */
  readonly standby?: boolean | undefined;
  /**
   * Default token lifetime, a whole number of seconds above 0 and at most `maxLifetime`.
   * @default 300, or the whole seconds of `maxLifetime` when that is shorter
   */
  readonly lifetime?: number | undefined;
  /**
   * Longest lifetime `sign()` accepts, seconds: the gateway's maximum for this issuer. Also how long
   * a retired key stays published (with `rotation.retentionMargin`).
   * @default 86400 (24 h)
   */
  readonly maxLifetime?: number | undefined;
  /**
   * Also write the RFC 7519 `exp` claim, equal to `expt`, so that generic JWT libraries check the
   * expiry too. The gateway reads either and takes the earlier.
   * @default true
   */
  readonly emitExp?: boolean | undefined;
  /**
   * The `max-age` of the JWKS's `Cache-Control`, seconds; at most `rotation.publishLead`, so that a
   * cache meets every new key before it signs.
   * @default 600, or `rotation.publishLead` when that is shorter
   */
  readonly jwksMaxAge?: number | undefined;
}

/** The JWKS document with the headers to serve it with. */
export interface JwksResponse {
  readonly document: { readonly keys: readonly RsaPublicJwk[] };
  /** `public, max-age=<jwksMaxAge>`. */
  readonly cacheControl: string;
  /** `content-type` and `cache-control`. */
  readonly headers: Readonly<Record<'content-type' | 'cache-control', string>>;
}

/**
 * Where a key stands in the schedule: `published` (waiting for its turn to sign), `signing`,
 * `retired` (published until its tokens have expired), or `standby` (signs only if the signing key
 * is compromised).
 */
export type KeyState = 'published' | 'signing' | 'retired' | 'standby';

/** One key of the schedule, as of now. */
export interface KeyInfo {
  readonly kid: string;
  readonly state: KeyState;
  readonly publishedAt: Date;
  /** When it starts signing; for a standby, when it may first sign (once published for `publishLead`). */
  readonly signsFrom: Date;
  /** When a successor took over (or will), once known. */
  readonly retiredAt: Date | null;
  /** When it leaves the JWKS, once known. */
  readonly unpublishAt: Date | null;
}

/** What {@link Issuer.tick} changed. */
export interface TickReport {
  /** Keys generated and published. */
  readonly published: readonly string[];
  /** Keys taken out of the JWKS and destroyed (every token they signed has expired). */
  readonly removed: readonly string[];
  /** The key signing now, if any. */
  readonly signing: string | null;
  /**
   * The standby that would sign at once if the signing key were compromised now: `null` without
   * one that has been published for `rotation.publishLead` (`standby: false`; the first hour of a
   * store, or after a compromise, or after an upgrade from a version without standbys).
   */
  readonly standby: string | null;
  /** Private keys the sweep destroyed: left behind by a crash, compromised ones first. */
  readonly swept: SweepReport;
}

/** What `createIssuer` found and did at start-up: {@link Issuer.startReport}. */
export interface StartReport extends TickReport {
  /**
   * The store's refusal to write (`code` `ENOSPC`: a full disk; `EDQUOT`; `EROFS`: a read-only
   * mount) that kept the start-up from sweeping, publishing or removing keys, or `clock_behind`
   * ({@link IssuerError}); `null` when none did. The issuer started all the same, signing with the keys it had; the next `tick()` (of
   * `startSchedule`, whose `onError` reports each failure) tries again. A store with no key signing
   * fails the start-up instead.
   */
  readonly rotationFailed: Error | null;
}

/** What the sweep of {@link Issuer.tick} destroyed. */
export interface SweepReport {
  /** Keys reported compromised whose destruction a crash interrupted. */
  readonly compromised: readonly string[];
  /** Keys the store held that no schedule entry names (generated, then a crash before the save). */
  readonly unnamed: readonly string[];
}

/** What {@link Issuer.compromised} did. */
export interface CompromiseReport {
  /** The key unpublished and destroyed. */
  readonly removed: string;
  /**
   * The key signing from now on: the standby, when the compromised key was signing. `null` when no
   * standby had been published for `rotation.publishLead` (with `standby: false`, say), until the
   * key in `next` may sign (`sign()` refuses with `key_not_ready` meanwhile).
   */
  readonly signing: string | null;
  /** The key waiting for its turn to sign (the next in the rotation, or the replacement), when one is. */
  readonly next: KeyInfo | null;
  /** The standby from now on (a new one, published now, when the old one took over or was compromised), when one is. */
  readonly standby: KeyInfo | null;
}

/** A handle on the schedule timer of {@link Issuer.startSchedule}. */
export interface ScheduleTimer {
  stop(): void;
}

/** An issuer made by {@link createIssuer}. */
export interface Issuer {
  readonly issuer: string;
  readonly audience: string | readonly string[];
  readonly products: readonly string[];
  readonly rotation: RotationPolicy;
  /** Whether it keeps a standby key (the `standby` option). */
  readonly standby: boolean;
  /** Longest token lifetime, seconds. */
  readonly maxLifetime: number;
  /** What `createIssuer` found and did at start-up: its first {@link tick}, the sweep included. */
  readonly startReport: StartReport;
  /** The JWKS to serve now, with its `Cache-Control`. */
  jwks(): JwksResponse;
  /**
   * Signs a token for `input` with the key signing now.
   * @throws {IssuerError} naming the input the gateway would refuse; `key_not_ready` when no key
   * has been published long enough to sign.
   */
  sign(input: SignInput): Promise<string>;
  /**
   * Applies the schedule now: re-reads the store, destroys the keys a crash left behind (see
   * {@link SweepReport}), publishes the next key when due, removes keys no longer needed.
   */
  tick(): Promise<TickReport>;
  /**
   * Publishes a new key now (and its standby); it signs once `rotation.publishLead` has passed. A
   * key already waiting for its turn is returned instead. Re-reads the store first, as
   * {@link tick} and {@link compromised} do, so that keys another instance published are kept.
   */
  rotate(): Promise<KeyInfo>;
  /**
   * Unpublishes and destroys key `kid` at once. If it was signing, the standby signs from now on,
   * and a new standby is published. Without a standby that has been published for
   * `rotation.publishLead`, a key already waiting takes over at its time, or else a fresh key is
   * published now and signs once `rotation.publishLead` has passed: until then `sign()` refuses
   * (`key_not_ready`). A compromised standby is replaced. Tell the gateway's operators, so that
   * their verifiers refresh.
   * @throws {IssuerError} `unknown_key`.
   */
  compromised(kid: string): Promise<CompromiseReport>;
  /** The schedule as of now. */
  keys(): readonly KeyInfo[];
  /** Re-reads the schedule from the key store (another instance may have changed it). */
  reload(): Promise<void>;
  /**
   * Runs {@link tick} every `every` seconds (default 300) until stopped; errors go to `onError`
   * (what it throws, or an `async` one's rejection, is ignored), by default one line to console.error: a rotation that fails (a
   * full disk, a key store down) is never silent.
   */
  startSchedule(options?: { readonly every?: number; readonly onError?: (error: unknown) => void }): ScheduleTimer;
}

const OWNER = 'createIssuer';
/**
 * The codes of a store that cannot write now but still reads and signs: a full disk, a quota, a
 * read-only mount. At start-up these defer the rotation to a later tick instead of failing.
 */
const WRITE_REFUSED: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'EROFS']);
const DAY = 86_400;
const KNOWN_OPTIONS = optionNames<IssuerOptions>({
  issuer: true,
  audience: true,
  product: true,
  tenants: true,
  keyStore: true,
  now: true,
  rotation: true,
  standby: true,
  lifetime: true,
  maxLifetime: true,
  emitExp: true,
  jwksMaxAge: true,
});

function checkAudience(value: unknown): string | readonly string[] {
  const list = typeof value === 'string' && value !== '' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0 || !list.every((item) => typeof item === 'string' && item !== '')) {
    const found =
      typeof value === 'string' ? describeValue(value) : describeListFault(list, (item) => typeof item === 'string' && item !== '');
    throw new TypeError(`${OWNER}: audience must be a non-empty string or a non-empty array of them, got ${found}`);
  }
  list.forEach((item: string, index) => {
    if (!isHttpsUri(item))
      throw new TypeError(`${OWNER}: ${typeof value === 'string' ? 'audience' : `audience[${index}]`} ${URI_RULE}, got ${quote(item)}`);
  });
  return typeof value === 'string' ? value : Object.freeze([...list]);
}

/** What a key of this issuer is published for: the verifier's key rule is judged against it. */
const PUBLISHED_ALGORITHMS: ReadonlySet<string> = new Set(['RS256']);

/** How far behind the newest publication of the schedule a clock may be and still publish, ms. */
const CLOCK_TOLERANCE_MS = 60_000;

/**
 * Refuses to publish a key at `at` (ms) from a clock behind the one that published a key of
 * `held`: the new key's times would be in the others' past, so that it would sign for them before
 * it has been published for the lead. @throws {IssuerError} `clock_behind`.
 */
function checkClockNotBehind(held: readonly KeyRecord[], at: number): void {
  const newest = held.reduce<KeyRecord | undefined>(
    (found, record) => (found === undefined || record.publishedAt > found.publishedAt ? record : found),
    undefined,
  );
  if (newest === undefined || newest.publishedAt - at <= CLOCK_TOLERANCE_MS) return;
  throw new IssuerError(
    'clock_behind',
    `This instance's clock reads ${new Date(at).toISOString()}, ${Math.ceil((newest.publishedAt - at) / 1000)} s before key ${quote(newest.kid)} ` +
      `of the schedule was published (${new Date(newest.publishedAt).toISOString()}), so its clock is behind the one that published it (or that one was ahead); ` +
      'a key it published would sign for the other instances before it had been published for rotation.publishLead. ' +
      "Nothing was published: check both hosts' clocks (NTP); the next tick() publishes once this clock has passed that time.",
  );
}

/**
 * Refuses a key, from any store, that every gateway would ignore: under 2048 bits (`weak_key`,
 * naming its size), or breaking another of the verifier's own key rules (`unusable_key`: a kid
 * over 256 characters, a modulus over 8192 bits or even, an exponent that is not odd from 3 to
 * 2^32, `n` or `e` not base64url), which it would otherwise publish for tokens no gateway accepts.
 * @throws {KeyStoreError}
 */
function checkPublishable(jwk: RsaPublicJwk): void {
  const bits = modulusBits(jwk);
  if (bits < MIN_MODULUS_BITS) {
    throw new KeyStoreError(
      'weak_key',
      `The key store's key ${quote(jwk.kid)} is a ${bits}-bit RSA key; the gateway needs at least ${MIN_MODULUS_BITS} bits.`,
    );
  }
  const reason = jwkRejectReason(jwk, PUBLISHED_ALGORITHMS);
  if (reason !== null) {
    throw new KeyStoreError(
      'unusable_key',
      `The key store's key ${quote(jwk.kid)} breaks the gateway's key rule (${reason}), so every verifier would ignore it ` +
        'and refuse its tokens; nothing was published. Make the store give RSA keys of 2048 to 8192 bits, exponent 65537, ' +
        'and a kid of 1 to 256 characters.',
    );
  }
}

/**
 * Refuses a new key whose kid a key of the schedule already has: the JWKS would list the kid twice
 * (a verifier may pick either), and destroying one key would destroy the other. @throws {KeyStoreError} `key_exists`.
 */
function checkNewKid(kid: string, held: readonly KeyRecord[]): void {
  if (held.some((record) => record.kid === kid)) {
    throw new KeyStoreError(
      'key_exists',
      `The key store's generate() resolved kid ${quote(kid)}, which a key of the schedule already has; nothing was published. ` +
        'A kid names one key only: make generate() give each new key a kid of its own (a new KMS key id, or the thumbprint).',
    );
  }
}

/**
 * Refuses a saved schedule that names one kid twice (a row written by hand, two writers): which
 * key the kid names is then unknown, and the JWKS would list it twice. @throws {KeyStoreError} `invalid_schedule`.
 */
function checkUniqueKids(records: readonly KeyRecord[]): void {
  const seen = new Set<string>();
  for (const { kid } of records) {
    if (seen.has(kid)) {
      throw new KeyStoreError(
        'invalid_schedule',
        `The key store's schedule holds kid ${quote(kid)} twice; a kid names one key: remove the record whose publicJwk is not the key the store holds under that kid.`,
      );
    }
    seen.add(kid);
  }
}

/**
 * The key a store generated, as the JWKS publishes it and the schedule saves it: exactly `kty`,
 * `n`, `e`, `kid`, `alg` and `use`. Whatever else the store resolves (WebCrypto's `key_ops` and
 * `ext`, a private member by mistake) is neither saved nor published.
 */
function publishedJwk(jwk: RsaPublicJwk): RsaPublicJwk {
  const { kty, n, e, kid } = (jwk ?? {}) as Partial<RsaPublicJwk>;
  if (kty !== 'RSA' || typeof n !== 'string' || typeof e !== 'string' || typeof kid !== 'string' || kid === '') {
    const found = typeof jwk !== 'object' || jwk === null ? describeValue(jwk) : `kty ${describeValue(kty)} and kid ${describeValue(kid)}`;
    throw new TypeError(`${OWNER}: keyStore.generate() must resolve an RSA public JWK with kty "RSA", n, e and a kid, got ${found}`);
  }
  // A key the store made for another purpose (`use: "enc"`) or algorithm is not relabelled: refused.
  const { use, alg } = jwk as { readonly use?: unknown; readonly alg?: unknown };
  if ((use !== undefined && use !== 'sig') || (alg !== undefined && alg !== 'RS256')) {
    const found = use !== undefined && use !== 'sig' ? `use ${describeValue(use)}` : `alg ${describeValue(alg)}`;
    throw new TypeError(
      `${OWNER}: keyStore.generate() resolved key ${quote(kid)} with ${found}, expected use "sig" and alg "RS256" (or neither): ` +
        'make the store create RSA signing keys for RS256; nothing was published.',
    );
  }
  return { kty, n, e, kid, alg: 'RS256', use: 'sig' };
}

class RotatingIssuer implements Issuer {
  readonly issuer: string;
  readonly audience: string | readonly string[];
  readonly products: readonly string[];
  readonly rotation: RotationPolicy;
  readonly standby: boolean;
  readonly maxLifetime: number;
  readonly #store: KeyStore;
  readonly #now: () => number;
  readonly #claims: ClaimSettings;
  readonly #cacheControl: string;
  /** Seconds a retired key stays published. */
  readonly #keep: number;
  /** The schedule: the chain in signing order, and the standbys. */
  #schedule: Schedule = { chain: [], standbys: [] };
  /** Records of compromised keys whose private halves may not be destroyed yet. */
  #compromised: readonly KeyRecord[] = [];
  #startReport: StartReport | undefined;
  /** Serialises the operations that change the schedule. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: IssuerOptions) {
    if (typeof options !== 'object' || options === null)
      throw new TypeError(`${OWNER}: options must be an object, got ${describeValue(options)}`);
    rejectUnknownOptions(OWNER, options, KNOWN_OPTIONS);
    const o = options as unknown as Record<string, unknown>;
    this.issuer = issuerOption(`${OWNER}: issuer`, o.issuer);
    this.audience = checkAudience(o.audience);
    this.products = namesOption(`${OWNER}: product`, o.product, true) as readonly string[];
    const tenants = namesOption(`${OWNER}: tenants`, o.tenants, false);
    this.#store = checkKeyStore(`${OWNER}: keyStore`, o.keyStore);
    this.#now = functionOption<() => number>(OWNER, 'now', o.now) ?? Date.now;
    this.rotation = checkRotation(o.rotation);
    if (this.rotation.publishLead < CONTRACT_PUBLISH_LEAD) warnShortPublishLead(this.rotation.publishLead);
    this.standby = booleanOption(OWNER, 'standby', o.standby, true);
    this.maxLifetime = numberOption(OWNER, 'maxLifetime', o.maxLifetime, DAY, {
      unit: 'seconds',
      min: 0,
      max: MAX_ENTRY_LIFETIME,
      exclusiveMin: true,
    });
    // A token's lifetime is whole seconds (sign() refuses any other): the default is the whole
    // seconds of a shorter maxLifetime.
    const lifetime = numberOption(OWNER, 'lifetime', o.lifetime, Math.min(300, Math.floor(this.maxLifetime)), {
      unit: 'seconds',
      min: 0,
      max: this.maxLifetime,
      exclusiveMin: true,
      integer: true,
    });
    booleanOption(OWNER, 'emitExp', o.emitExp, true);
    const maxAge = numberOption(OWNER, 'jwksMaxAge', o.jwksMaxAge, Math.min(600, this.rotation.publishLead), {
      unit: 'seconds',
      min: 0,
      max: this.rotation.publishLead,
    });
    this.#cacheControl = `public, max-age=${Math.floor(maxAge)}`;
    this.#keep = this.maxLifetime + this.rotation.retentionMargin;
    this.#claims = {
      issuer: this.issuer,
      audience: this.audience,
      products: this.products,
      tenants,
      lifetime,
      maxLifetime: this.maxLifetime,
      emitExp: o.emitExp !== false,
    };
  }

  /** Runs `operation` after every earlier schedule change. */
  #serial<T>(operation: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(operation, operation);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #save(schedule: Schedule, compromised: readonly KeyRecord[] = this.#compromised): Promise<void> {
    await this.#store.saveSchedule([...recordsOf(schedule), ...compromised]);
    this.#schedule = schedule;
    this.#compromised = compromised;
  }

  /** A new key from the store, to join `held` (the schedule it is added to). */
  async #newKey(held: Schedule, publishedAt: number, signsFrom: number, standby: boolean, checkClock = true): Promise<KeyRecord> {
    if (checkClock) checkClockNotBehind(recordsOf(held), publishedAt);
    const publicJwk = publishedJwk(await this.#store.generate());
    checkPublishable(publicJwk);
    checkNewKid(publicJwk.kid, [...recordsOf(held), ...this.#compromised]);
    const record: KeyRecord = {
      kid: publicJwk.kid,
      publicJwk,
      publishedAt,
      signsFrom,
      retainFor: this.#keep,
      ...(standby ? { standby: true as const } : {}),
    };
    // Probed before it is published, as the keys are at start-up: a store that signs with another
    // key or algorithm would otherwise be found only once every token of the key is refused.
    await this.#probe(record, true);
    return record;
  }

  /**
   * `schedule` with the keys now due: the next key of the chain when its predecessor's turn ends
   * within the publication lead (or nothing signs or waits), and a standby for the newest key of the
   * chain when it has none. The keys are generated, not yet saved.
   */
  async #publishDue(schedule: Schedule, at: number, checkClock = true): Promise<{ schedule: Schedule; published: string[] }> {
    let { chain, standbys } = schedule;
    const published: string[] = [];
    const start = nextKeyStart(chain, at, this.rotation);
    if (start !== undefined) {
      const key = await this.#newKey({ chain, standbys }, at, start, false, checkClock);
      chain = [...chain, key];
      published.push(key.kid);
    }
    if (this.standby && needsStandby({ chain, standbys })) {
      const key = await this.#newKey({ chain, standbys }, at, at + this.rotation.publishLead * 1000, true, checkClock);
      standbys = [...standbys, key];
      published.push(key.kid);
    }
    return { schedule: { chain, standbys }, published };
  }

  async load(): Promise<void> {
    const saved = await this.#store.loadSchedule();
    checkUniqueKids(saved);
    this.#schedule = scheduleOf(saved.filter((record) => record.compromisedAt === undefined));
    this.#compromised = saved.filter((record) => record.compromisedAt !== undefined);
  }

  get startReport(): StartReport {
    return this.#startReport as StartReport;
  }

  /** Starts: the first tick (sweep included), then a signature by every key of the schedule. */
  async start(): Promise<void> {
    const { report, failure } = await this.#serial(() => this.#tick(true));
    this.#startReport = { ...report, rotationFailed: failure };
    await Promise.all(recordsOf(this.#schedule).map((record) => this.#probe(record)));
  }

  /**
   * Signs a probe with key `record` and checks it against the published half, so that a missing,
   * unreadable or swapped key file fails now and not at the first `sign()`.
   */
  async #probe(record: KeyRecord, isNew = false): Promise<void> {
    checkPublishable(record.publicJwk);
    const data = new TextEncoder().encode(`paygate-auth key probe ${record.kid}`);
    const signature = await this.#store.sign(record.kid, data);
    const algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    const publicKey = await crypto.subtle.importKey('jwk', { ...record.publicJwk }, algorithm, false, ['verify']);
    if (!(await crypto.subtle.verify(algorithm, publicKey, signature, data))) {
      throw new KeyStoreError(
        'key_mismatch',
        `The key store's private key ${quote(record.kid)} does not match the public key the schedule publishes` +
          (isNew
            ? ": it is a new key, and nothing was published; make the store's sign() use the key its generate() made for that kid."
            : ': restore that private key (a key file swapped by hand, a KMS alias moved) from a backup; if it is lost, remove its record from the schedule (the tokens it signed will be refused).'),
      );
    }
  }

  /** Destroys what a crash left: compromised keys first, then keys the schedule does not name. */
  async #sweep(): Promise<SweepReport> {
    const compromised = this.#compromised.map((record) => record.kid);
    for (const kid of compromised) await this.#store.destroy(kid);
    if (compromised.length > 0) await this.#save(this.#schedule, []);
    const unnamed = (await this.#store.sweep?.(recordsOf(this.#schedule).map((record) => record.kid))) ?? [];
    return { compromised, unnamed: [...unnamed] };
  }

  reload(): Promise<void> {
    return this.#serial(() => this.load());
  }

  jwks(): JwksResponse {
    const keys = publishedKeys(this.#schedule, this.#now(), this.#keep).map((record) => record.publicJwk);
    return Object.freeze({
      document: Object.freeze({ keys: Object.freeze(keys) }),
      cacheControl: this.#cacheControl,
      headers: Object.freeze({ 'content-type': 'application/jwk-set+json', 'cache-control': this.#cacheControl }),
    });
  }

  async sign(input: SignInput): Promise<string> {
    const at = this.#now();
    const claims = buildClaims(input, this.#claims, at / 1000);
    const { chain } = this.#schedule;
    const signer = chain[signerIndex(chain, at)];
    if (signer === undefined) throw this.#notReady(at);
    return signClaims({ alg: 'RS256', typ: 'JWT', kid: signer.kid }, claims, (data) => this.#store.sign(signer.kid, data));
  }

  #notReady(at: number): IssuerError {
    const next = this.#schedule.chain.find((record) => record.signsFrom > at);
    const when =
      next === undefined
        ? 'no key is waiting: call rotate() or tick()'
        : `key "${next.kid}" was published at ${new Date(next.publishedAt).toISOString()} and signs from ${new Date(next.signsFrom).toISOString()}`;
    return new IssuerError('key_not_ready', `No key has been published for ${this.rotation.publishLead} s yet, so none may sign: ${when}.`);
  }

  /** The kid of the standby that would sign at once if the signing key were compromised at `at`. */
  #readyStandby(at: number): string | null {
    const standby = chooseStandby(this.#schedule.standbys, at);
    return standby !== undefined && standby.signsFrom <= at ? standby.kid : null;
  }

  tick(): Promise<TickReport> {
    return this.#serial(async () => (await this.#tick(false)).report);
  }

  /**
   * One tick. At start-up (`startUp`), a store that refuses to write (a full disk, a read-only one)
   * while a key signs is no failure: the schedule stays as it is, and the error is returned.
   */
  async #tick(startUp: boolean): Promise<{ report: TickReport; failure: Error | null }> {
    await this.load();
    let failure: Error | null = null;
    let swept: SweepReport = { compromised: [], unnamed: [] };
    try {
      swept = await this.#sweep();
    } catch (error) {
      // A read-only mount: the keys a crash left stay until an instance that may write sweeps them.
      failure = this.#deferred(startUp, error, this.#now());
    }
    const at = this.#now();
    const settled = recordRetention(settleRetirements(this.#schedule, at), at, this.#keep);
    const { schedule: kept, removed } = withoutDeparted(settled, at, this.#keep);
    let due: { schedule: Schedule; published: string[] } = { schedule: kept, published: [] };
    try {
      due = await this.#publishDue(kept, at);
    } catch (error) {
      const deferred = this.#deferred(startUp, error, at); // throws what may not wait
      failure ??= deferred;
    }
    let destroyed = removed;
    const before = recordsOf(this.#schedule);
    const after = recordsOf(due.schedule);
    try {
      if (after.length !== before.length || after.some((record, index) => record !== before[index])) await this.#save(due.schedule);
    } catch (error) {
      const deferred = this.#deferred(startUp, error, at); // throws what may not wait
      failure ??= deferred;
      destroyed = [];
      due = { schedule: this.#schedule, published: [] };
    }
    for (const kid of destroyed) await this.#store.destroy(kid);
    const { chain } = this.#schedule;
    const signing = chain[signerIndex(chain, at)]?.kid ?? null;
    return { report: { published: due.published, removed: destroyed, signing, standby: this.#readyStandby(at), swept }, failure };
  }

  /**
   * `error` when the start-up may go on without the change it failed to write: the store refused
   * the write (see {@link WRITE_REFUSED}) and a key of the schedule signs now. @throws `error` otherwise.
   */
  #deferred(startUp: boolean, error: unknown, at: number): Error {
    const code = (error as { code?: unknown } | null)?.code;
    const { chain } = this.#schedule;
    const deferrable = error instanceof IssuerError ? code === 'clock_behind' : typeof code === 'string' && WRITE_REFUSED.has(code);
    if (!startUp || !(error instanceof Error) || !deferrable) throw error;
    if (chain[signerIndex(chain, at)] === undefined) throw error;
    return error;
  }

  rotate(): Promise<KeyInfo> {
    return this.#serial(async () => {
      // Re-read first, as tick() does: another instance may have published keys since this one last
      // read the store, and a save from an older view would drop them (they would then be swept).
      await this.load();
      const at = this.#now();
      const settled = recordRetention(settleRetirements(this.#schedule, at), at, this.#keep);
      const waiting = settled.chain.find((record) => record.signsFrom > at);
      if (waiting !== undefined) return this.#info(waiting.kid, at);
      const key = await this.#newKey(settled, at, at + this.rotation.publishLead * 1000, false);
      const { schedule } = await this.#publishDue({ chain: [...settled.chain, key], standbys: settled.standbys }, at);
      await this.#save(schedule);
      return this.#info(key.kid, at);
    });
  }

  compromised(kid: string): Promise<CompromiseReport> {
    return this.#serial(async () => {
      await this.load(); // as rotate(): never save from an older view of a shared store
      const at = this.#now();
      const settled = recordRetention(settleRetirements(this.#schedule, at), at, this.#keep);
      const record = typeof kid === 'string' ? recordsOf(settled).find((candidate) => candidate.kid === kid) : undefined;
      if (record === undefined)
        throw new IssuerError(
          'unknown_key',
          `The issuer holds no key ${typeof kid === 'string' ? quote(kid) : describeValue(kid)}.`,
          'kid',
        );
      let schedule: Schedule = {
        chain: settled.chain.filter((candidate) => candidate !== record),
        standbys: settled.standbys.filter((candidate) => candidate !== record),
      };
      // A key of the chain signing now, or waiting for its turn: a standby takes that turn, at once
      // if it has been published for the publication lead. A retired key or a standby leaves no turn.
      const signing = settled.chain[signerIndex(settled.chain, at)] === record;
      if (signing || (record.standby !== true && record.signsFrom > at))
        schedule = promoteStandby(schedule, Math.max(record.signsFrom, at));
      // Marked first, destroyed, then forgotten: a crash in between leaves a mark the sweep acts on.
      // Signing moves to the standby with the first save, before any key is generated.
      await this.#save(schedule, [...this.#compromised, { ...record, compromisedAt: at }]);
      await this.#store.destroy(kid);
      // A compromise is never held up by a clock behind the others': its replacement standby is due now.
      ({ schedule } = await this.#publishDue(schedule, at, false));
      await this.#save(
        schedule,
        this.#compromised.filter((marked) => marked.kid !== kid),
      );
      const { chain, standbys } = this.#schedule;
      const signer = chain[signerIndex(chain, at)];
      const next = chain.find((candidate) => candidate.signsFrom > at);
      const standby = chooseStandby(standbys, at);
      return {
        removed: kid,
        signing: signer?.kid ?? null,
        next: next === undefined ? null : this.#info(next.kid, at),
        standby: standby === undefined ? null : this.#info(standby.kid, at),
      };
    });
  }

  #info(kid: string, at: number): KeyInfo {
    return this.#describe(at).find((info) => info.kid === kid) as KeyInfo;
  }

  #describe(at: number): readonly KeyInfo[] {
    const { chain, standbys } = this.#schedule;
    const signing = signerIndex(chain, at);
    const info = (record: KeyRecord, state: KeyState, retired: number | undefined, leaves: number | undefined): KeyInfo =>
      Object.freeze({
        kid: record.kid,
        state,
        publishedAt: new Date(record.publishedAt),
        signsFrom: new Date(record.signsFrom),
        retiredAt: retired === undefined ? null : new Date(retired),
        unpublishAt: leaves === undefined ? null : new Date(leaves),
      });
    return [
      ...chain.map((record, index) => {
        const retired = record.retiredAt ?? chain[index + 1]?.signsFrom;
        const state: KeyState = index === signing ? 'signing' : record.signsFrom > at ? 'published' : 'retired';
        // The successor's start as the retirement, even before it has come: when the key will leave.
        return info(record, state, retired, unpublishAt(chain, index, Number.POSITIVE_INFINITY, this.#keep));
      }),
      ...standbys.map((record, index) => info(record, 'standby', undefined, standbyLeavesAt(standbys, index))),
    ];
  }

  keys(): readonly KeyInfo[] {
    return this.#describe(this.#now());
  }

  startSchedule(options: { readonly every?: number; readonly onError?: (error: unknown) => void } = {}): ScheduleTimer {
    const every = numberOption('startSchedule', 'every', options.every, 300, { unit: 'seconds', min: 1, max: DAY });
    const onError = options.onError ?? ((error: unknown) => logTickFailure(error, every));
    const timer = setInterval(() => {
      this.tick().catch((error: unknown) => {
        try {
          ignoreRejection(onError(error));
        } catch {
          // A failing error hook (throwing, or an async one rejecting) must not become an unhandled
          // rejection: the next tick runs anyway.
        }
      });
    }, every * 1000);
    (timer as { unref?: () => void }).unref?.();
    return { stop: () => clearInterval(timer) };
  }
}

/** The publication lead the gateway's contract asks for, seconds: a key signs only once published this long. */
const CONTRACT_PUBLISH_LEAD = 3600;

/**
 * Warns, once per issuer, of a publication lead under the contract's hour: fine in a test, but in
 * production a new key signs before the gateway's cached JWKS lists it.
 */
function warnShortPublishLead(publishLead: number): void {
  const message =
    `createIssuer: rotation.publishLead is ${publishLead} s, under the ${CONTRACT_PUBLISH_LEAD} s the gateway's contract asks for. ` +
    "A new key then signs before the gateways' cached JWKS (max-age up to 600 s) list it: a verifier refetches on an unknown kid " +
    'at most once per its jwksCooldown (30 s by default) and refuses the tokens meanwhile (unknown_key), and its key history ' +
    `reports the key as used early (key_used_early, keyPublishLead ${CONTRACT_PUBLISH_LEAD} s). Use a short lead in tests only; ` +
    'leave rotation.publishLead at its default (3600) in production.';
  const node = (globalThis as { process?: { emitWarning?: (text: string, options: { code: string }) => void } }).process;
  if (typeof node?.emitWarning === 'function') node.emitWarning(message, { code: 'PAYGATE_AUTH_SHORT_PUBLISH_LEAD' });
  else console.warn(`paygate-auth/issuer: ${message}`);
}

/**
 * The default `onError` of `startSchedule`: one escaped line, with what happens next. The error is
 * cut at a hint's length, not a quoted value's: a key store's message says what to do at its end.
 */
function logTickFailure(error: unknown, every: number): void {
  const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  console.error(
    `paygate-auth/issuer: the rotation schedule's tick failed (${capHint(reason)}); it runs again in ${every} s. ` +
      'Keys due to be published or retired wait until a tick succeeds; pass startSchedule({ onError }) to handle it.',
  );
}

/**
 * Creates an issuer over `keyStore`. On an empty store it publishes a first key and its standby;
 * the key signs once `rotation.publishLead` (1 h) has passed: create the issuer an hour before it
 * must sign. A schedule saved by a version without standbys loads as it is, and gains its standby
 * now (in {@link Issuer.startReport}'s `published`), which may take over an hour later. At start-up
 * it destroys the keys a crash left behind ({@link Issuer.startReport}) and signs once with every
 * key of the schedule, so that a missing, unreadable or mismatched key file fails here.
 * @throws {KeyStoreError} from the store (`schedule_missing`, `invalid_key_file`…), or `key_mismatch`.
 *
 * @example
 * ```ts
 * const issuer = await createIssuer({
 *   issuer: 'https://auth.acme.example', audience: 'https://payments.example', product: 'acme',
 *   keyStore: new FileKeyStore({ directory: '/var/lib/acme/keys' }),
 * });
 * issuer.startSchedule();
 * const token = await issuer.sign({ tenant: 'ern:acme/tenants/t-1', scopes: ['pay:processPayments'] });
 * ```
 */
export async function createIssuer(options: IssuerOptions): Promise<Issuer> {
  const issuer = new RotatingIssuer(options);
  await issuer.start();
  return issuer;
}
