/**
 * The doctor's checks: every rule the gateway applies to a token, in the order it applies them,
 * each reported with the values it compared. The first failure ends the run and names the
 * rejection code the gateway's verifier answers for it. The token itself is never reported.
 *
 * @module paygate-auth/cli
 */
import { base64url, compactVerify, importJWK } from 'jose';
import {
  type AuthErrorCode,
  ErnError,
  type IssuerEntry,
  KNOWN_SCOPES,
  MIN_MODULUS_BITS,
  ScopeError,
  type TenantErn,
  isKnownScope,
  parseScopes,
  parseTenantErn,
  parseUserReference,
} from '../index.js';
import { type JwksLoad, keyProblem, modulusBits } from './doctor-jwks.js';
import { MILLISECONDS_THRESHOLD, describeDuration, describeTime, isoSeconds } from './doctor-time.js';

/** One line of the report: passed, failed (with the gateway's code), or a note. */
export interface DoctorCheck {
  readonly status: 'pass' | 'fail' | 'note';
  readonly name: string;
  readonly detail: string;
  readonly code?: AuthErrorCode;
}

/** What the checks compare the token with. */
export interface DoctorSettings {
  readonly token: string;
  /** The registry entries the gateway holds. */
  readonly entries: readonly IssuerEntry[];
  /** The gateway service's audiences. */
  readonly audiences: readonly string[];
  /** Seconds since the epoch. */
  readonly now: number;
  /** The JWKS of `entry`, loaded once. */
  readonly loadJwks: (entry: IssuerEntry) => Promise<JwksLoad>;
  /** The gateway verifier's defaults. */
  readonly maxTokenBytes: number;
  readonly clockTolerance: number;
  readonly maxTokenLifetime: number;
}

class Stop extends Error {
  constructor(readonly check: DoctorCheck) {
    super(check.detail);
  }
}

type Emit = (check: DoctorCheck) => void;

const B64URL = /^[A-Za-z0-9_-]*$/;
const show = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : value === undefined ? 'absent' : JSON.stringify(value) ?? String(value));
const list = (values: Iterable<string>): string => [...values].join(', ') || '(none)';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

class Checker {
  constructor(
    private readonly settings: DoctorSettings,
    private readonly emit: Emit,
  ) {}

  pass(name: string, detail: string): void {
    this.emit({ status: 'pass', name, detail });
  }

  note(name: string, detail: string): void {
    this.emit({ status: 'note', name, detail });
  }

  fail(name: string, detail: string, code: AuthErrorCode): never {
    const check: DoctorCheck = { status: 'fail', name, detail, code };
    this.emit(check);
    throw new Stop(check);
  }

  size(): void {
    const bytes = new TextEncoder().encode(this.settings.token).byteLength;
    const max = this.settings.maxTokenBytes;
    if (bytes > max) this.fail('size', `${bytes} bytes > ${max} allowed`, 'token_too_large');
    this.pass('size', `${bytes} bytes ≤ ${max}`);
  }

  #segment(text: string, name: 'header' | 'payload'): Record<string, unknown> {
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(base64url.decode(text)));
    } catch {
      value = undefined;
    }
    if (!isObject(value)) this.fail('format', `the ${name} is not a base64url-encoded JSON object`, 'malformed_token');
    return value;
  }

  format(): { header: Record<string, unknown>; payload: Record<string, unknown>; signature: string } {
    const segments = this.settings.token.split('.');
    if (segments.length !== 3) this.fail('format', `${segments.length} dot-separated segments, not 3 (header.payload.signature)`, 'malformed_token');
    const [header, payload, signature] = segments as [string, string, string];
    segments.forEach((segment, index) => {
      if (!B64URL.test(segment)) this.fail('format', `segment ${index + 1} holds characters outside base64url (no padding, no "+" or "/")`, 'malformed_token');
      if (segment.length % 4 === 1) this.fail('format', `segment ${index + 1} has a length base64url cannot produce`, 'malformed_token');
    });
    if (header === '' || payload === '') this.fail('format', 'the header or payload segment is empty', 'malformed_token');
    const decoded = { header: this.#segment(header, 'header'), payload: this.#segment(payload, 'payload'), signature };
    this.pass('format', 'three base64url segments; header and payload are JSON objects');
    return decoded;
  }

  header(header: Record<string, unknown>): { alg: string; kid: string } {
    const { alg, kid, typ } = header;
    if (alg !== 'RS256') this.fail('header alg', `${show(alg)}, but the gateway accepts only "RS256"`, 'unsupported_algorithm');
    this.pass('header alg', '"RS256"');
    if (typeof kid !== 'string' || kid === '' || kid.length > 256) this.fail('header kid', `${show(kid)}: the header must name its key in "kid"`, 'missing_kid');
    this.pass('header kid', show(kid));
    if (typ !== undefined) {
      const bare = typeof typ === 'string' ? typ.toLowerCase().replace(/^application\//, '') : '';
      if (bare !== 'jwt' && bare !== 'at+jwt') this.fail('header typ', `${show(typ)}, expected "JWT" (or "at+jwt")`, 'invalid_typ');
    }
    this.pass('header typ', typ === undefined ? 'absent (allowed; "JWT" expected)' : `${show(typ)}`);
    if (Object.hasOwn(header, 'crit')) this.fail('header crit', `${show(header.crit)}: no critical extension is supported`, 'unsupported_crit');
    this.pass('header crit', 'absent');
    return { alg, kid };
  }

  issuer(payload: Record<string, unknown>): IssuerEntry {
    const iss = payload.iss;
    if (typeof iss !== 'string') this.fail('iss', `${show(iss)}: the token must name its issuer in "iss" (a string)`, 'invalid_claim');
    const registered = this.settings.entries.map((entry) => entry.issuer);
    const entry = this.settings.entries.find((candidate) => candidate.issuer === iss);
    if (entry === undefined) {
      const near = registered.find((candidate) => candidate.replace(/\/+$/, '').toLowerCase() === iss.replace(/\/+$/, '').toLowerCase());
      const hint = near === undefined ? '' : ` (differs from ${show(near)} only by case or a trailing "/"; the match is exact)`;
      this.fail('iss', `${show(iss)} ≠ registered ${registered.map(show).join(', ')}${hint}`, 'unknown_issuer');
    }
    this.pass('iss', `${show(iss)} = registered issuer`);
    return entry;
  }

  async key(entry: IssuerEntry, alg: string, kid: string): Promise<Record<string, unknown>> {
    const load = await this.settings.loadJwks(entry);
    if (!load.ok) this.fail('jwks', `could not load ${load.where}: ${load.reason}`, 'jwks_unavailable');
    const keys = load.keys;
    this.pass('jwks', `${load.where}: ${keys.length} key(s), kids ${list(keys.map((key) => (isObject(key) && typeof key.kid === 'string' ? key.kid : '?')))}`);
    const named = keys.filter((key): key is Record<string, unknown> => isObject(key) && key.kid === kid);
    if (named.length === 0) {
      const published = keys.filter(isObject).map((key) => String(key.kid));
      this.fail('kid', `${show(kid)} is not among the kids published (${list(published)})`, 'unknown_key');
    }
    const usable = named.filter((key) => keyProblem(key) === null);
    if (usable.length === 0) this.fail('kid', `${show(kid)} is published but unusable: ${keyProblem(named[0] as Record<string, unknown>)}`, 'unknown_key');
    const distinct = new Set(usable.map((key) => `${String(key.n)}.${String(key.e)}.${String(key.alg)}`));
    if (distinct.size > 1) this.fail('kid', `${show(kid)} is published twice with different keys, so neither is used`, 'unknown_key');
    const key = usable[0] as Record<string, unknown>;
    if (key.alg !== undefined && key.alg !== alg) this.fail('kid', `${show(kid)} is published for ${show(key.alg)}, the token is ${show(alg)}`, 'unknown_key');
    this.pass('kid', `${show(kid)} is published (RSA, ${modulusBits(String(key.n))} bits ≥ ${MIN_MODULUS_BITS})`);
    return key;
  }

  async signature(key: Record<string, unknown>, kid: string, signature: string): Promise<void> {
    if (signature === '') this.fail('signature', 'the signature segment is empty', 'invalid_signature');
    let valid: boolean;
    try {
      const publicKey = await importJWK({ kty: 'RSA', n: key.n as string, e: key.e as string }, 'RS256');
      await compactVerify(this.settings.token, publicKey, { algorithms: ['RS256'] });
      valid = true;
    } catch {
      valid = false;
    }
    if (!valid) this.fail('signature', `RS256 does not verify with the published key ${show(kid)} (signed with another key, or altered)`, 'invalid_signature');
    this.pass('signature', `RS256 verifies with key ${show(kid)}`);
  }

  #time(payload: Record<string, unknown>, claim: string): number | undefined {
    const value = payload[claim];
    if (value === undefined) {
      this.note(claim, 'absent');
      return undefined;
    }
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      this.fail(claim, `${show(value)}: must be a NumericDate (seconds since the epoch)`, 'invalid_claim');
    }
    this.pass(claim, describeTime(value, this.settings.now));
    return value;
  }

  times(payload: Record<string, unknown>, entry: IssuerEntry): void {
    const now = this.settings.now;
    const tolerance = this.settings.clockTolerance;
    const exp = this.#time(payload, 'exp');
    const expt = this.#time(payload, 'expt');
    if (exp === undefined && expt === undefined) this.fail('expiry', 'neither "exp" nor "expt" is present: the token must carry an expiry', 'invalid_claim');
    const iat = this.#time(payload, 'iat');
    if (iat === undefined) this.fail('iat', 'absent: the token must carry "iat"', 'invalid_claim');
    const nbf = this.#time(payload, 'nbf');
    const fromExpt = exp === undefined || (expt !== undefined && expt < exp);
    const expiry = (fromExpt ? expt : exp) as number;
    const expiryClaim = fromExpt ? 'expt' : 'exp';
    const at = `now ${isoSeconds(now)}, tolerance ${tolerance} s`;
    if (now >= expiry + tolerance) this.fail('expiry', `${expiryClaim} ${describeTime(expiry, now, false)} has passed, ${describeDuration(now - expiry)} ago (${at})`, 'token_expired');
    this.pass('expiry', `${expiryClaim} ${describeTime(expiry, now, false)} is ahead (${at})`);
    if (iat > now + tolerance) this.fail('iat', `issued ${describeDuration(iat - now)} in the future (${at})`, 'token_not_yet_valid');
    if (nbf !== undefined && nbf > now + tolerance) this.fail('nbf', `not valid for another ${describeDuration(nbf - now)} (${at})`, 'token_not_yet_valid');
    this.pass('not before', `${nbf === undefined ? 'iat' : 'nbf'} is not in the future`);
    const maximum = entry.maxTokenLifetime ?? this.settings.maxTokenLifetime;
    const start = nbf ?? iat;
    const lifetime = expiry - start;
    if (lifetime > maximum) {
      const millis = expiry >= MILLISECONDS_THRESHOLD ? `; ${expiryClaim} looks like milliseconds: write seconds` : '';
      this.fail('lifetime', `${expiryClaim} − ${nbf === undefined ? 'iat' : 'nbf'} = ${lifetime} s (${describeDuration(lifetime)}) > maximum ${maximum} s (${describeDuration(maximum)})${millis}`, 'token_lifetime_exceeded');
    }
    this.pass('lifetime', `${lifetime} s (${describeDuration(lifetime)}) ≤ maximum ${maximum} s`);
  }

  audience(payload: Record<string, unknown>): void {
    const aud = payload.aud;
    const expected = `expected ${this.settings.audiences.map(show).join(' or ')}`;
    if (aud === undefined || (Array.isArray(aud) && aud.length === 0)) this.fail('aud', `${show(aud)}: the token names no audience; ${expected}`, 'audience_mismatch');
    if (typeof aud !== 'string' && (!Array.isArray(aud) || !aud.every((value) => typeof value === 'string'))) {
      this.fail('aud', `${show(aud)}: must be a string or an array of strings`, 'invalid_claim');
    }
    const values: string[] = typeof aud === 'string' ? [aud] : aud;
    const match = values.find((value) => this.settings.audiences.includes(value));
    if (match === undefined) this.fail('aud', `${show(aud)} does not name the gateway; ${expected}`, 'audience_mismatch');
    this.pass('aud', `${show(aud)} names ${show(match)}`);
  }

  subject(payload: Record<string, unknown>, entry: IssuerEntry): void {
    const sub = payload.sub;
    if (sub === undefined) this.fail('sub', 'absent: the token must carry "sub" (equal to "iss")', 'subject_mismatch');
    if (typeof sub !== 'string') this.fail('sub', `${show(sub)}: must be a string`, 'invalid_claim');
    if (entry.subjectMustEqualIssuer !== false && sub !== entry.issuer) this.fail('sub', `${show(sub)} ≠ iss ${show(entry.issuer)}`, 'subject_mismatch');
    this.pass('sub', entry.subjectMustEqualIssuer === false ? `${show(sub)} (not compared: the entry waives it)` : `${show(sub)} = iss`);
  }

  tenant(payload: Record<string, unknown>, entry: IssuerEntry): TenantErn {
    const value = payload.tenant_ern;
    if (value === undefined) this.fail('tenant_ern', 'absent: the token must name its tenant', 'invalid_claim');
    let tenant: TenantErn;
    try {
      tenant = parseTenantErn(value);
    } catch (error) {
      if (!(error instanceof ErnError)) throw error;
      return this.fail('tenant_ern', `${show(value)}: ${error.message} (expected "ern:<product>/tenants/<tenant-id>")`, 'invalid_claim');
    }
    if (!entry.products.includes(tenant.product)) {
      this.fail('tenant_ern', `product ${show(tenant.product)} of ${show(tenant.ern)} is not among the issuer's products (${list(entry.products)})`, 'tenant_not_allowed');
    }
    if (entry.tenants !== undefined && !entry.tenants.includes(tenant.id)) {
      this.fail('tenant_ern', `tenant ${show(tenant.id)} is not among the issuer's tenants (${list(entry.tenants)})`, 'tenant_not_allowed');
    }
    this.pass('tenant_ern', `${show(tenant.ern)}: product ${show(tenant.product)} in (${list(entry.products)})${entry.tenants === undefined ? '' : `, tenant in (${list(entry.tenants)})`}`);
    return tenant;
  }

  rest(payload: Record<string, unknown>, tenant: TenantErn): ReadonlySet<string> {
    let scopes: ReadonlySet<string> = new Set();
    if (payload.scope === undefined) this.note('scope', 'absent (no scopes)');
    else {
      try {
        scopes = parseScopes(payload.scope);
      } catch (error) {
        if (!(error instanceof ScopeError)) throw error;
        this.fail('scope', `${show(payload.scope)}: must be scope tokens separated by single spaces`, 'invalid_claim');
      }
      this.pass('scope', show(payload.scope));
    }
    const name = payload.tenant_name;
    if (name !== undefined && typeof name !== 'string') this.fail('tenant_name', `${show(name)}: must be a string`, 'invalid_claim');
    if (name === undefined) this.note('tenant_name', 'absent');
    else this.pass('tenant_name', show(name));
    const user = payload.user_ern;
    if (user === undefined) this.note('user_ern', 'absent');
    else {
      let product: string | null;
      try {
        product = parseUserReference(user).product;
      } catch (error) {
        if (!(error instanceof ErnError)) throw error;
        return this.fail('user_ern', `${show(user)}: ${error.message}`, 'invalid_claim');
      }
      if (product !== null && product !== tenant.product) this.fail('user_ern', `${show(user)} names product ${show(product)}, the tenant's is ${show(tenant.product)}`, 'invalid_claim');
      this.pass('user_ern', show(user));
    }
    return scopes;
  }

  scopes(scopes: ReadonlySet<string>): void {
    const known = [...scopes].filter(isKnownScope);
    const unknown = [...scopes].filter((scope) => !isKnownScope(scope));
    const ignored = unknown.length === 0 ? '' : `; unknown, granting nothing: ${list(unknown)}`;
    if (known.length === 0) this.fail('scopes', `no known scope (needs at least one of ${list(KNOWN_SCOPES)})${ignored}`, 'insufficient_scope');
    this.pass('scopes', `${list(known)}${ignored}`);
  }
}

/**
 * Runs every check in order, reporting each through `emit`; resolves the first failure, or `null`
 * when the gateway accepts the token.
 */
export async function runDoctorChecks(settings: DoctorSettings, emit: Emit): Promise<DoctorCheck | null> {
  const check = new Checker(settings, emit);
  try {
    check.size();
    const { header, payload, signature } = check.format();
    const { alg, kid } = check.header(header);
    const entry = check.issuer(payload);
    const key = await check.key(entry, alg, kid);
    await check.signature(key, kid, signature);
    check.times(payload, entry);
    check.audience(payload);
    check.subject(payload, entry);
    const tenant = check.tenant(payload, entry);
    check.scopes(check.rest(payload, tenant));
    return null;
  } catch (error) {
    if (error instanceof Stop) return error.check;
    throw error;
  }
}
