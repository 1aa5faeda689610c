/**
 * The issuer registry: which issuers are trusted, where their keys are, and which resource-name
 * namespaces (products, and for a limited integration, tenants) each may act for.
 */
import { describe, rejectUnknownOptions, optionNames } from './options.js';
import { formatMemberPath } from './duplicate-members.js';
import { isNamePart } from './ern.js';
import { kindOf, quote } from './hint-text.js';
import { JwksAddressError, checkAllowedHosts, screenJwksHost } from './jwks-address.js';
import { isAllowedJwksUrl } from './loopback.js';
import { LayeredIssuers } from './layered-issuers.js';

/** The members of {@link IssuerRegistryOptions}: any other is refused, naming the nearest. */
const ISSUER_REGISTRY_OPTION_NAMES = optionNames<IssuerRegistryOptions>({ allowEmpty: true, jwksAllowedHosts: true });

/** One trusted issuer, as registered. */
export interface IssuerEntry {
  /**
   * The exact `iss` of its tokens, an HTTPS URI (`http:` on a loopback host only: tests, examples);
   * compared byte for byte, never normalised.
   */
  readonly issuer: string;
  /**
   * Where its JWKS is published: `https:`, or `http:` on a loopback host only (tests, examples);
   * never a special-purpose address or name (loopback, private, link-local, cloud metadata…: see
   * docs/security.md), unless the registry's `jwksAllowedHosts` names its host.
   */
  readonly jwksUri: string;
  /** The ERN products this issuer may act for; its tokens' `tenant_ern` must name one of them. */
  readonly products: readonly string[];
  /**
   * For a limited integration: the only tenant ids it may act for (the public tenant only if
   * `public` is listed).
   * @default undefined (every tenant of its products)
   */
  readonly tenants?: readonly string[] | undefined;
  /**
   * Longest accepted token lifetime, `expiry − (nbf ?? iat)`, in seconds (above 0, at most 7 days);
   * overrides the verifier's.
   * @default the verifier's `maxTokenLifetime` (86 400 s)
   */
  readonly maxTokenLifetime?: number | undefined;
  /**
   * Require `sub` to equal `iss`, as the gateway's contract states. With `false`, `sub` may be any
   * string, but must still be present (a token without one is `subject_mismatch`).
   * @default true
   */
  readonly subjectMustEqualIssuer?: boolean | undefined;
}

/** An entry as the registry holds it: checked, frozen, with sets for the lookups. */
export interface RegisteredIssuer {
  readonly issuer: string;
  readonly jwksUri: string;
  readonly products: ReadonlySet<string>;
  readonly tenants: ReadonlySet<string> | null;
  /** The entry's `maxTokenLifetime`, in seconds; `undefined` when the verifier's applies. */
  readonly maxTokenLifetime: number | undefined;
  readonly subjectMustEqualIssuer: boolean;
  /** The entry as given (frozen copy). */
  readonly entry: Readonly<IssuerEntry>;
}

/** What changed between two registries, by `iss`, each list in registration order. */
export interface RegistryChange {
  /** Issuers registered now that were not before. */
  readonly added: readonly string[];
  /** Issuers whose entry changed (products, tenants, `jwksUri`, lifetime or subject rule). */
  readonly updated: readonly string[];
  /** Issuers no longer registered. */
  readonly removed: readonly string[];
}

/** Options of the {@link IssuerRegistry} constructor. */
export interface IssuerRegistryOptions {
  /**
   * Accept a registry of no issuers, which trusts no token: for a registry kept elsewhere (a
   * database) whose every issuer may be removed. A registry written in code needs at least one.
   * @default false
   */
  readonly allowEmpty?: boolean | undefined;
  /**
   * Hosts an entry's `jwksUri` may name although they are special-purpose addresses or names
   * (a JWKS served on a private network, say): each an exact host as a URL names it
   * (`jwks.corp.example`, `10.0.0.5`, `[fd00::5]`), no wildcard. Every other `jwksUri` naming
   * a loopback (beyond `http:` on loopback), private, link-local, shared or `0.0.0.0/8` address,
   * an IPv4-mapped IPv6 address, a cloud metadata service or a private name is refused
   * (`JwksAddressError`, a `TypeError` naming the entry, the host, the rule and this option).
   * Give the verifier's `jwksAllowedHosts` too when a host's name resolves to such an address.
   * @default [] (none)
   */
  readonly jwksAllowedHosts?: readonly string[] | undefined;
}

/** Longest `maxTokenLifetime` an entry may set: 7 days. */
export const MAX_ENTRY_LIFETIME = 7 * 86_400;

const ENTRY_KEYS: ReadonlySet<string> = new Set(['issuer', 'jwksUri', 'products', 'tenants', 'maxTokenLifetime', 'subjectMustEqualIssuer']);

/**
 * @param found the value found, as {@link shown} writes it
 * @throws {TypeError} always: `IssuerRegistry: <where>.<field> <problem>, got <found>`.
 */
function fail(where: string, field: string, problem: string, found: string): never {
  throw new TypeError(`IssuerRegistry: ${where}.${field} ${problem}, got ${found}`);
}

/**
 * A refused value for a message: a string quoted, cut and escaped for one line (a row of a table
 * may hold anything), a number as written, anything else by its kind. A URI carrying credentials
 * is never quoted.
 */
function shown(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string') return kindOf(value);
  return URL.canParse(value) && hasCredentials(new URL(value)) ? 'a URI with credentials' : quote(value);
}

function hasCredentials(url: URL): boolean {
  return url.username !== '' || url.password !== '';
}

/**
 * `true` when `value` is an absolute `https:` URI without credentials, or an `http:` one on a
 * loopback host (tests, examples): what the contract asks of an issuer (`iss`) and an audience.
 */
export function isHttpsUri(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return !hasCredentials(url) && isAllowedJwksUrl(url);
}

function checkJwksUri(where: string, value: unknown, allowedHosts: ReadonlySet<string>): string {
  if (typeof value !== 'string' || value === '') fail(where, 'jwksUri', 'must be a non-empty URL string', shown(value));
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail(where, 'jwksUri', 'is not an absolute URL', shown(value));
  }
  if (hasCredentials(url)) fail(where, 'jwksUri', 'must not carry credentials', shown(value));
  if (!isAllowedJwksUrl(url)) fail(where, 'jwksUri', 'must use https: (http: is allowed only for loopback hosts)', shown(value));
  const refusal = screenJwksHost(url, allowedHosts);
  if (refusal !== undefined) throw new JwksAddressError(`IssuerRegistry: ${where}.jwksUri: `, refusal);
  return value;
}

function checkNames(where: string, field: string, value: unknown, required: boolean): ReadonlySet<string> | null {
  if (value === undefined && !required) return null;
  if (!Array.isArray(value) || value.length === 0) {
    fail(where, field, 'must be a non-empty array of names', shown(value));
  }
  const names = new Set<string>();
  value.forEach((name, index) => {
    if (!isNamePart(name)) {
      fail(where, `${field}[${index}]`, 'must be a name of letters, digits, "-", "_" and "."', shown(name));
    }
    if (names.has(name)) throw new TypeError(`IssuerRegistry: ${where}.${field}[${index}] repeats ${quote(name)}`);
    names.add(name);
  });
  return names;
}

/**
 * Checks one entry by every rule of the registry but uniqueness (the constructor's); `where` names
 * it in the `TypeError` a bad one throws (`entries[0]`, or a database row), and `allowedHosts` are
 * the JWKS hosts allowed although special-purpose (`jwksAllowedHosts`, as URLs name them). The one
 * home of the entry rules: a registry kept elsewhere checks each of its rows with it.
 */
export function checkIssuerEntry(raw: unknown, where: string, allowedHosts: ReadonlySet<string> = new Set()): RegisteredIssuer {
  return checkEntry(raw, where, allowedHosts);
}

function checkEntry(raw: unknown, named: string, allowedHosts: ReadonlySet<string>): RegisteredIssuer {
  let where = named;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new TypeError(`IssuerRegistry: ${where} must be an object, got ${shown(raw)}`);
  }
  const entry = raw as Record<string, unknown>;
  const issuer = entry.issuer;
  if (typeof issuer !== 'string' || issuer === '' || issuer.trim() !== issuer) {
    fail(where, 'issuer', 'must be a non-empty string without surrounding white space', shown(issuer));
  }
  if (!isHttpsUri(issuer)) {
    fail(where, 'issuer', 'must be an https: URI without credentials (http: only on a loopback host)', shown(issuer));
  }
  where = `${where} (${quote(issuer)})`;
  for (const key of Object.keys(entry)) {
    if (ENTRY_KEYS.has(key)) continue;
    // The name is the row's text: `.audience`, or quoted, cut and escaped (`["odd\u000aname"]`).
    const member = formatMemberPath([key]);
    const field = member.startsWith('[') ? member : `.${member}`;
    throw new TypeError(`IssuerRegistry: ${where}${field} is not an entry field (expected one of ${[...ENTRY_KEYS].join(', ')})`);
  }
  const jwksUri = checkJwksUri(where, entry.jwksUri, allowedHosts);
  const products = checkNames(where, 'products', entry.products, true) as ReadonlySet<string>;
  const tenants = checkNames(where, 'tenants', entry.tenants, false);
  const lifetime = entry.maxTokenLifetime;
  if (
    lifetime !== undefined &&
    (typeof lifetime !== 'number' || !Number.isFinite(lifetime) || lifetime <= 0 || lifetime > MAX_ENTRY_LIFETIME)
  ) {
    fail(where, 'maxTokenLifetime', `must be a number of seconds above 0 and at most ${MAX_ENTRY_LIFETIME}`, shown(lifetime));
  }
  const subject = entry.subjectMustEqualIssuer;
  if (subject !== undefined && typeof subject !== 'boolean') fail(where, 'subjectMustEqualIssuer', 'must be a boolean', shown(subject));
  const frozen: IssuerEntry = Object.freeze({
    ...(entry as unknown as IssuerEntry),
    products: Object.freeze([...products]),
    ...(tenants ? { tenants: Object.freeze([...tenants]) } : {}),
  });
  const registered: RegisteredIssuer = Object.freeze({
    issuer,
    jwksUri,
    products,
    tenants,
    maxTokenLifetime: lifetime as number | undefined,
    subjectMustEqualIssuer: subject !== false,
    entry: frozen,
  });
  CHECKED.add(registered);
  return registered;
}

/** The issuers of a registry, for one derived from it (set by the class, which alone reads them). */
let layeredOf: (registry: IssuerRegistry) => LayeredIssuers;

/** Every issuer `checkEntry` returned: a registry derived from another takes them without a second check. */
const CHECKED = new WeakSet<RegisteredIssuer>();

/** The issuers of a derived registry, checked already, and what changed from the one it came from. */
class DerivedIssuers implements Iterable<IssuerEntry> {
  constructor(
    readonly issuers: LayeredIssuers,
    readonly base: IssuerRegistry,
    readonly change: RegistryChange,
  ) {}

  *[Symbol.iterator](): Iterator<IssuerEntry> {
    for (const registered of this.issuers.ordered()) yield registered.entry;
  }
}

/**
 * A registry of `base`'s issuers with `upserts` put in (replacing those of the same `iss`) and
 * `removals` taken out, in time proportional to the changes (and to the square root of `base`'s
 * size, see `LayeredIssuers`): only what changed is compared, nothing is checked again, and
 * `base.changesTo(derived)` answers at once (a verifier's `setRegistry` asks it). For a registry
 * kept elsewhere that changes a few rows at a time. `upserts` must come from `checkIssuerEntry`
 * with `base`'s allowed hosts: anything else is a `TypeError`.
 */
export function deriveRegistry(base: IssuerRegistry, upserts: Iterable<RegisteredIssuer>, removals: Iterable<string>): IssuerRegistry {
  const taken = [...removals];
  const touched = new Set<string>(taken);
  const checked = [...upserts];
  for (const registered of checked) {
    if (!CHECKED.has(registered)) throw new TypeError('deriveRegistry: upserts must be issuers checked by checkIssuerEntry');
    touched.add(registered.issuer);
  }
  const issuers = layeredOf(base).with(checked, taken);
  const added: string[] = [];
  const updated: string[] = [];
  const removed: string[] = [];
  for (const issuer of touched) {
    const before = base.get(issuer);
    const after = issuers.get(issuer);
    if (before === undefined) {
      if (after !== undefined) added.push(issuer);
    } else if (after === undefined) removed.push(issuer);
    else if (!sameIssuer(before, after)) updated.push(issuer);
  }
  const change: RegistryChange = Object.freeze({
    added: Object.freeze(added),
    updated: Object.freeze(updated),
    removed: Object.freeze(removed),
  });
  return new IssuerRegistry(new DerivedIssuers(issuers, base, change), {
    allowEmpty: true,
    jwksAllowedHosts: base.jwksAllowedHosts,
  });
}

/**
 * The issuers a verifier trusts, keyed by their exact `iss`. Every entry is checked when the
 * registry is built; a bad one fails with a `TypeError` naming the entry and the field.
 *
 * @example
 * ```ts
 * const registry = new IssuerRegistry([
 *   { issuer: 'https://auth.acme.example', jwksUri: 'https://auth.acme.example/jwks.json', products: ['acme'] },
 * ]);
 * ```
 */
export class IssuerRegistry {
  /** The issuers by `iss`, for look-ups by a token's `iss`, and in registration order. */
  readonly #issuers: LayeredIssuers;
  readonly #allowedHosts: ReadonlySet<string>;
  /** The registry this one was derived from (`deriveRegistry`), held weakly, and what changed from it. */
  readonly #derivedFrom: { readonly base: WeakRef<IssuerRegistry>; readonly change: RegistryChange } | undefined;

  constructor(entries: Iterable<IssuerEntry>, options: IssuerRegistryOptions = {}) {
    rejectUnknownOptions('IssuerRegistry', options, ISSUER_REGISTRY_OPTION_NAMES);
    if (entries === null || typeof entries !== 'object' || typeof (entries as Iterable<unknown>)[Symbol.iterator] !== 'function') {
      throw new TypeError(`IssuerRegistry: entries must be an array of issuer entries, got ${describe(entries)}`);
    }
    this.#allowedHosts = checkAllowedHosts('IssuerRegistry', 'jwksAllowedHosts', options.jwksAllowedHosts);
    if (entries instanceof DerivedIssuers) {
      this.#issuers = entries.issuers;
      this.#derivedFrom = { base: new WeakRef(entries.base), change: entries.change };
      return;
    }
    this.#derivedFrom = undefined;
    const issuers = new Map<string, RegisteredIssuer>();
    let index = 0;
    for (const raw of entries) {
      const checked = checkEntry(raw, `entries[${index}]`, this.#allowedHosts);
      if (issuers.has(checked.issuer)) {
        throw new TypeError(`IssuerRegistry: entries[${index}].issuer repeats ${quote(checked.issuer)}`);
      }
      issuers.set(checked.issuer, checked);
      index += 1;
    }
    if (issuers.size === 0 && options.allowEmpty !== true) {
      throw new TypeError(
        'IssuerRegistry: entries must hold at least one issuer, got none: add an entry, or pass allowEmpty: true for a registry filled later',
      );
    }
    this.#issuers = new LayeredIssuers(issuers);
  }

  static {
    layeredOf = (registry) => registry.#issuers;
  }

  /** The registered issuer whose `iss` is exactly `issuer`, if any. */
  get(issuer: string): RegisteredIssuer | undefined {
    return this.#issuers.get(issuer);
  }

  /** `true` when `issuer` is registered (exact match). */
  has(issuer: string): boolean {
    return this.#issuers.get(issuer) !== undefined;
  }

  /** The registered `iss` values, in registration order. */
  get issuers(): readonly string[] {
    return this.#issuers.ordered().map((registered) => registered.issuer);
  }

  /** The hosts its entries' `jwksUri` may name although special-purpose (`jwksAllowedHosts`), as URLs name them. */
  get jwksAllowedHosts(): readonly string[] {
    return [...this.#allowedHosts];
  }

  /** How many issuers are registered. */
  get size(): number {
    return this.#issuers.size;
  }

  /** Every registered issuer, checked, in registration order. */
  registered(): readonly RegisteredIssuer[] {
    return [...this.#issuers.ordered()];
  }

  /** The entries as registered (frozen copies). */
  entries(): readonly Readonly<IssuerEntry>[] {
    return this.#issuers.ordered().map((registered) => registered.entry);
  }

  /** What changes from this registry to `next`: the issuers added, updated and removed. */
  changesTo(next: IssuerRegistry): RegistryChange {
    if (next.#derivedFrom?.base.deref() === this) return next.#derivedFrom.change;
    const added: string[] = [];
    const updated: string[] = [];
    for (const registered of next.registered()) {
      const held = this.#issuers.get(registered.issuer);
      if (held === undefined) added.push(registered.issuer);
      else if (!sameIssuer(held, registered)) updated.push(registered.issuer);
    }
    const removed = this.#issuers
      .ordered()
      .filter((registered) => !next.has(registered.issuer))
      .map((registered) => registered.issuer);
    return Object.freeze({ added: Object.freeze(added), updated: Object.freeze(updated), removed: Object.freeze(removed) });
  }
}

function sameNames(a: ReadonlySet<string> | null, b: ReadonlySet<string> | null): boolean {
  if (a === null || b === null) return a === b;
  return a.size === b.size && [...a].every((name) => b.has(name));
}

/** `true` when both entries register the same rules (the order of names aside). */
function sameIssuer(a: RegisteredIssuer, b: RegisteredIssuer): boolean {
  return (
    a.jwksUri === b.jwksUri &&
    a.maxTokenLifetime === b.maxTokenLifetime &&
    a.subjectMustEqualIssuer === b.subjectMustEqualIssuer &&
    sameNames(a.products, b.products) &&
    sameNames(a.tenants, b.tenants)
  );
}
