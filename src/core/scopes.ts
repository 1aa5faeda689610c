/**
 * Scopes: the known scopes, the `scope` claim's parser and the requirement checker.
 */
import { kindOf, quote } from './hint-text.js';
import { describe } from './options.js';

/** The scopes the gateway knows. Every request needs at least one of them (the default policy). */
export const SCOPES = Object.freeze({
  /** Payment requests, processing payments and refunds, tokenized cards. */
  processPayments: 'pay:processPayments',
  /** Charges with payment methods tokenized for a shopper. */
  chargeToken: 'pay:chargeToken',
  /** All tenant settings, transactions, payouts and reports. */
  manageIntegration: 'pay:manageIntegration',
  /** Subscriptions in the notification hub. */
  hubSubscribe: 'hub:subscribe',
} as const);

/** One of the known scopes. */
export type KnownScope = (typeof SCOPES)[keyof typeof SCOPES];

/** The known scopes as a list, in a stable order. */
export const KNOWN_SCOPES: readonly KnownScope[] = Object.freeze(Object.values(SCOPES));

const KNOWN: ReadonlySet<string> = new Set<string>(KNOWN_SCOPES);

/** RFC 6749 §3.3 scope-token: %x21 / %x23-5B / %x5D-7E. */
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** `true` when `value` is an RFC 6749 scope-token: printable ASCII, no space, `"` or `\`. */
export function isScopeToken(value: unknown): value is string {
  return typeof value === 'string' && SCOPE_TOKEN.test(value);
}

/** `true` when `scope` is one of {@link SCOPES}. */
export function isKnownScope(scope: string): scope is KnownScope {
  return KNOWN.has(scope);
}

/**
 * A set of scopes that cannot be changed after it is made. Typed as a `ReadonlySet`: at run time it
 * is a `Set` (`instanceof Set` holds), whose `add`, `delete` and `clear` throw a `TypeError`.
 */
export interface ScopeSet extends ReadonlySet<string> {
  /** The scopes, space-delimited, as in a `scope` claim. */
  toString(): string;
  /** The scopes as an array, as `JSON.stringify` writes them. */
  toJSON(): string[];
}

/** {@link ScopeSet}'s constructor: `new ScopeSet(scopes)`, a frozen set of `scopes`. */
export interface ScopeSetConstructor {
  new (scopes?: Iterable<string>): ScopeSet;
  readonly prototype: ScopeSet;
}

/** A set of scopes that cannot be changed after it is made. */
export const ScopeSet: ScopeSetConstructor = class ScopeSet extends Set<string> {
  constructor(scopes: Iterable<string> = []) {
    super();
    // Set's own add: this class's refuses.
    for (const scope of scopes) super.add(scope);
    Object.freeze(this);
  }

  override add(_value: string): this {
    throw new TypeError('A ScopeSet cannot be changed');
  }

  override delete(_value: string): boolean {
    throw new TypeError('A ScopeSet cannot be changed');
  }

  override clear(): void {
    throw new TypeError('A ScopeSet cannot be changed');
  }

  /** The scopes, space-delimited, as in a `scope` claim. */
  override toString(): string {
    return [...this].join(' ');
  }

  toJSON(): string[] {
    return [...this];
  }
};

/** Raised by {@link parseScopes} for a value that is not a valid space-delimited scope list. */
export class ScopeError extends TypeError {
  override readonly name = 'ScopeError';
  readonly code = 'invalid_scope' as const;
}

/**
 * Parses a `scope` claim: scope tokens (RFC 6749 §3.3) separated by single spaces. An empty string
 * is no scopes; unknown scopes are kept (they simply grant nothing known).
 * @throws {ScopeError} when `value` is not a string or holds an invalid scope token.
 */
export function parseScopes(value: unknown): ScopeSet {
  if (typeof value !== 'string') {
    throw new ScopeError(`A scope list must be a string of scopes separated by single spaces, got ${kindOf(value)}`);
  }
  if (value === '') return new ScopeSet();
  // One scope, the usual case, needs no split (a call into the runtime).
  const tokens = value.includes(' ') ? value.split(' ') : [value];
  for (const token of tokens) {
    if (!SCOPE_TOKEN.test(token)) throw badScopeList(value, token);
  }
  return new ScopeSet(tokens);
}

/** The refusal of the scope list `value` for `token`, the first scope in it that is not a scope token. */
function badScopeList(value: string, token: string): ScopeError {
  const fault = token === '' ? 'an empty scope (two spaces together, or one at an end)' : `${quote(token)} is not a scope token`;
  return new ScopeError(
    `A scope list holds scope tokens separated by single spaces, got ${quote(value)}: ${fault}. ` +
      'Write each scope in printable ASCII without space, " or \\, one space between two.',
  );
}

/**
 * What a route requires: one scope, an array (all of them), `{ allOf }` or `{ anyOf }`.
 */
export type ScopeRequirement = string | readonly string[] | { readonly allOf: readonly string[] } | { readonly anyOf: readonly string[] };

/** A {@link ScopeRequirement} in its one canonical shape. */
export interface NormalizedScopeRequirement {
  readonly mode: 'allOf' | 'anyOf';
  readonly scopes: readonly string[];
}

/** A checked requirement: frozen, its scopes copied, so that later changes to the input are not seen. */
class CheckedRequirement implements NormalizedScopeRequirement {
  constructor(
    readonly mode: 'allOf' | 'anyOf',
    readonly scopes: readonly string[],
  ) {
    Object.freeze(this);
  }
}

function checkScopeList(list: unknown, label: string): readonly string[] {
  if (!Array.isArray(list) || list.length === 0) {
    throw new TypeError(`${label} must be a non-empty array of scopes, got ${describe(list)}`);
  }
  list.forEach((scope, index) => {
    if (typeof scope !== 'string' || !SCOPE_TOKEN.test(scope)) {
      throw new TypeError(`${label}[${index}] must be a scope token (no spaces), got ${describe(scope)}`);
    }
  });
  return Object.freeze([...new Set(list as string[])]);
}

/**
 * Checks a {@link ScopeRequirement} and returns its canonical shape, a frozen copy: build it once,
 * where a route or middleware is built. Given what it returned, it returns that again at once.
 * @throws {TypeError} naming `label` when the requirement is malformed.
 */
export function normalizeScopeRequirement(requirement: unknown, label = 'requiredScopes'): NormalizedScopeRequirement {
  if (requirement instanceof CheckedRequirement) return requirement;
  if (typeof requirement === 'string') return new CheckedRequirement('allOf', checkScopeList([requirement], label));
  if (Array.isArray(requirement)) return new CheckedRequirement('allOf', checkScopeList(requirement, label));
  if (typeof requirement === 'object' && requirement !== null) {
    const keys = Object.keys(requirement);
    if (keys.length === 1 && keys[0] === 'allOf') {
      return new CheckedRequirement('allOf', checkScopeList((requirement as { allOf: unknown }).allOf, `${label}.allOf`));
    }
    if (keys.length === 1 && keys[0] === 'anyOf') {
      return new CheckedRequirement('anyOf', checkScopeList((requirement as { anyOf: unknown }).anyOf, `${label}.anyOf`));
    }
  }
  throw new TypeError(
    `${label} must be a scope, an array of scopes (all of), { allOf: [...] } or { anyOf: [...] }, got ${describe(requirement)}`,
  );
}

/** The default policy: at least one known scope. */
export const DEFAULT_SCOPE_POLICY: NormalizedScopeRequirement = new CheckedRequirement('anyOf', KNOWN_SCOPES);

function satisfies(granted: ReadonlySet<string>, requirement: NormalizedScopeRequirement): boolean {
  // Plain loops: this runs on every request, and closures passed to every/some cost more than the checks.
  const { scopes } = requirement;
  if (requirement.mode === 'allOf') {
    for (let index = 0; index < scopes.length; index += 1) if (!granted.has(scopes[index] as string)) return false;
    return true;
  }
  for (let index = 0; index < scopes.length; index += 1) if (granted.has(scopes[index] as string)) return true;
  return false;
}

/**
 * `true` when `granted` satisfies `requirement` (a scope, all of an array, `{ allOf }` or `{ anyOf }`).
 * @param granted the scopes granted (`auth.scopes`), any iterable of them, or a `scope` claim's
 * text, read as {@link parseScopes} reads it (a string is never taken for its characters).
 * @throws {TypeError} when the requirement is malformed, or {@link ScopeError} when `granted` is
 * a string that is no scope list.
 */
export function hasScopes(granted: ReadonlySet<string> | Iterable<string>, requirement: ScopeRequirement): boolean {
  // A string is iterable, by character: `hasScopes('pay:processPayments', 'p')` would hold.
  if (typeof granted === 'string') return satisfies(parseScopes(granted), normalizeScopeRequirement(requirement));
  const set = granted instanceof Set ? (granted as ReadonlySet<string>) : new Set(granted);
  return satisfies(set, normalizeScopeRequirement(requirement));
}

/** {@link hasScopes} for a requirement already normalized (no validation on the hot path). */
export function satisfiesScopes(granted: ReadonlySet<string>, requirement: NormalizedScopeRequirement): boolean {
  return satisfies(granted, requirement);
}
