/**
 * The gateway's own check of a token or a JWKS, as lines: the gateway's verifier (`createVerifier`,
 * its defaults included) on a registry the gateway would accept, its trace and events turned into
 * lines. A rule that passed is a ✓ line with the values it compared, read from its typed facts; a
 * JWKS download is a jwks line (the kids held, and why each ignored entry was ignored); the rule
 * that failed is a ✗ line with the verifier's own hint (the value found against the value
 * expected) and the code the gateway answers. `doctor` and the `issuers` pre-check both run this
 * module; neither has a rule of its own, so neither can disagree with the gateway. Everything
 * printed from a token, a JWKS or an entry is cut and escaped for one line.
 */
import {
  type AuthError,
  type FetchLike,
  type IssuerEntry,
  IssuerRegistry,
  type JwksFetchEvent,
  type PassedFacts,
  type RuleName,
  type RuleOutcome,
  type Verifier,
  createVerifier,
  isAuthError,
  isKnownScope,
} from '../index.js';
import {
  DEFAULT_JWKS_TIMEOUT,
  MAX_JWKS_TIMEOUT,
  checkAllowedHosts,
  isoSeconds,
  quote,
  quoteList,
  scopeFailure,
} from '../internal/index.js';
import { UsageError } from './command.js';
import { type ParsedOptions, flagMistake, secondsValue, stringValues } from './cli-options.js';
import { describeDuration, describeTime } from './doctor-time.js';

/**
 * The hosts of `--allow-jwks-host`, as the gateway's `jwksAllowedHosts` holds them.
 * @throws {UsageError} naming the value that is not a bare host.
 */
export function allowedJwksHosts(parsed: ParsedOptions): readonly string[] {
  try {
    return [...checkAllowedHosts('paygate-auth', 'hosts', stringValues(parsed, 'allow-jwks-host'))];
  } catch (error) {
    throw flagMistake(error, 'paygate-auth', { hosts: '--allow-jwks-host' }) ?? error;
  }
}

/** What a JWKS download that timed out adds to its line: the bound, the setting and the option. */
export function jwksTimeoutHint(seconds: number): string {
  return ` (the bound: ${seconds} s, the gateway's jwksTimeout; --jwks-timeout <s> waits longer, up to ${MAX_JWKS_TIMEOUT})`;
}

/** `--jwks-timeout` in seconds, if given. @throws {UsageError} for a value not from 1 to 120. */
export function jwksTimeoutValue(parsed: ParsedOptions): number | undefined {
  return secondsValue(parsed, 'jwks-timeout', MAX_JWKS_TIMEOUT);
}

/**
 * `entries` as the gateway's registry, `allowedHosts` its `jwksAllowedHosts`.
 * @throws {UsageError} naming the field the registry refuses (and for a JWKS host refused, the rule).
 */
export function checkRegistry(entries: readonly IssuerEntry[], allowedHosts: readonly string[] = []): IssuerRegistry {
  try {
    return new IssuerRegistry(entries, { jwksAllowedHosts: allowedHosts });
  } catch (error) {
    throw new UsageError(`the registry entry is not one the gateway would accept: ${(error as Error).message}`);
  }
}

/** How each rule is named in the report. */
const NAMES: Readonly<Record<RuleName, string>> = {
  size: 'size',
  format: 'format',
  alg: 'header alg',
  kid: 'header kid',
  typ: 'header typ',
  crit: 'header crit',
  iss: 'iss',
  suspended: 'suspended',
  key: 'kid',
  signature: 'signature',
  exp: 'exp',
  expt: 'expt',
  iat: 'iat',
  nbf: 'nbf',
  expiry: 'expiry',
  not_before: 'not before',
  lifetime: 'lifetime',
  aud: 'aud',
  sub: 'sub',
  tenant_ern: 'tenant_ern',
  scope: 'scope',
  tenant_name: 'tenant_name',
  user_ern: 'user_ern',
  scopes: 'scopes',
};

/** A value a token (or a stored entry) carried, escaped for the terminal, or `absent`. */
export function shown(value: unknown): string {
  if (value === undefined) return 'absent';
  if (typeof value === 'string') return quote(value);
  if (Array.isArray(value)) return `[${quoteList(value.map(String))}]`;
  return quote(JSON.stringify(value) ?? String(value));
}

/** What a rule that passed compared, from its facts in the verifier's trace; `now` in milliseconds. */
function passedDetail(facts: PassedFacts, now: number): string {
  switch (facts.rule) {
    case 'size':
      return `${facts.actual.length} characters, within ${facts.expected} bytes`;
    case 'format':
      return 'three canonical base64url segments; header and payload are JSON objects, no member repeated';
    case 'alg':
      return `${shown(facts.actual)}, accepted (${quoteList(facts.expected)})`;
    case 'typ':
      return facts.actual === undefined ? `absent (allowed; ${quoteList(facts.expected)} accepted)` : shown(facts.actual);
    case 'crit':
      return 'absent';
    case 'iss':
      return `${shown(facts.actual)} = registered issuer`;
    case 'key': {
      const { bits, alg } = facts.expected;
      return `${shown(facts.actual)} is published (RSA, ${bits} bits, ${alg === undefined ? 'any alg' : quote(alg)})`;
    }
    case 'signature':
      return `${shown(facts.actual)} verifies with key ${quote(facts.expected.kid)}`;
    case 'exp':
    case 'expt':
    case 'iat':
    case 'nbf':
      return describeTime(facts.actual, now / 1000);
    case 'expiry': {
      const { now: at, tolerance } = facts.expected;
      return `${facts.claim} ${describeTime(facts.actual, at, false)} is ahead (now ${isoSeconds(at)}, tolerance ${tolerance} s)`;
    }
    case 'not_before': {
      const { now: at, tolerance } = facts.expected;
      return `${facts.claim} ${describeTime(facts.actual, at, false)} is not ahead of now beyond the tolerance (${tolerance} s)`;
    }
    case 'lifetime': {
      const { lifetime } = facts.actual;
      return `0 < ${lifetime} s (${describeDuration(lifetime)}) ≤ maximum ${facts.expected.maximum} s`;
    }
    case 'aud':
      return `${shown(facts.actual)} names ${shown(facts.expected)}`;
    case 'sub':
      return facts.expected === null ? `${shown(facts.actual)} (not compared: the entry waives it)` : `${shown(facts.actual)} = iss`;
    case 'tenant_ern':
      return `tenant ${quote(facts.actual.id)} of product ${quote(facts.actual.product)}, in (${quoteList(facts.expected.products)})`;
    case 'scope':
      return facts.actual === undefined ? 'absent (no scopes)' : shown(facts.actual);
    default:
      return shown(facts.actual);
  }
}

function line(mark: '✓' | '✗', name: string, detail: string, code?: string): string {
  return `${mark} ${name.padEnd(12)} ${detail}${code === undefined ? '' : `  → ${code}`}\n`;
}

/** The ignored entries of a download, each with the key rule it broke: `; 1 entry ignored: "k1" modulus of…`. */
export function ignoredText(event: JwksFetchEvent): string {
  const count = event.ignoredKeys ?? 0;
  if (count === 0) return '';
  const reasons = (event.ignored ?? []).map((item) => (item.kid === undefined ? item.reason : `${quote(item.kid)} ${item.reason}`));
  if (count > reasons.length) reasons.push(`${count - reasons.length} more`);
  return `; ${count} entr${count === 1 ? 'y' : 'ies'} ignored: ${reasons.join('; ')}`;
}

/** The jwks line of a download the verifier made: where, the kids it holds, and what it ignored. */
function jwksLine(event: JwksFetchEvent, verifier: Verifier, where: string): string | undefined {
  if (event.outcome !== 'ok') return undefined;
  const held = verifier.exportKeys().issuers.find((entry) => entry.issuer === event.issuer)?.keys ?? [];
  const kids = held.length === 0 ? '' : `, kids ${quoteList(held.map((key) => key.kid))}`;
  return line(held.length === 0 ? '✗' : '✓', 'jwks', `${quote(where)}: ${held.length} usable key(s)${kids}${ignoredText(event)}`);
}

/** What {@link gatewayCheck} builds its verifier from. */
export interface GatewayCheckOptions {
  /** The registry, whose `jwksAllowedHosts` the verifier's downloads honour. */
  readonly registry: IssuerRegistry;
  /** The gateway service's audiences. */
  readonly audience: readonly string[];
  /** The moment checked, in milliseconds since the epoch (a fixed clock). */
  readonly now: number;
  /** @default the verifier's (on Node, one that refuses special-purpose addresses at connection) */
  readonly fetch?: FetchLike | undefined;
  /** Where an issuer's keys are read from, as printed on the jwks line. */
  readonly where: (issuer: string) => string;
  /**
   * The file the keys are read from (`doctor --jwks <file>`), if any: a failed download names it,
   * not the URL its answer stands in for.
   */
  readonly jwksFile?: string | undefined;
  /** Hears every JWKS download the verifier makes. */
  readonly onDownload?: (event: JwksFetchEvent) => void;
  /** Seconds a JWKS download may take, as the gateway's `jwksTimeout` (`--jwks-timeout`). @default the verifier's, 5 */
  readonly jwksTimeout?: number | undefined;
}

/** Why the verifier rejected a token: its error, and the rule that failed. */
export interface Rejection {
  readonly error: AuthError;
  readonly rule: RuleName;
}

/** The gateway's verifier, reporting in lines. */
export interface GatewayCheck {
  readonly verifier: Verifier;
  /**
   * Verifies `token` and checks the gateway's scope policy, writing a ✓ line for each rule passed
   * (a jwks line for each download), then a ✗ line with the verifier's hint and code for the rule
   * that failed.
   * @returns `null` when accepted (a known scope included), else the rejection.
   */
  check(token: string): Promise<Rejection | null>;
}

/**
 * The line of a failure: the rule's name, the verifier's hint (else its message) and the code. A
 * JWKS read from `jwksFile` that fails is named as that file, from the verifier's facts: its hint
 * would name the URL the file stands in for.
 */
function failureLine(error: AuthError, rule: RuleName, jwksFile: string | undefined, jwksTimeout: number): string {
  const facts = error.facts;
  if (facts?.code === 'jwks_unavailable' && facts.expected.reason === 'timeout') {
    // The bound is the command's: say what sets it, so that an operator in a hurry can wait longer.
    return line('✗', 'jwks', `${error.hint ?? error.message}${jwksTimeoutHint(jwksTimeout)}`, error.code);
  }
  if (jwksFile !== undefined && facts?.code === 'jwks_unavailable' && facts.expected.reason !== 'address') {
    const { issuer, failure } = facts.expected;
    const why = failure === null ? '' : ` (${failure})`;
    const text = `The keys of ${quote(issuer)} are read from the file ${quote(jwksFile)}, which failed${why}: give a JWKS file, { "keys": [...] } in JSON.`;
    return line('✗', 'jwks', text, error.code);
  }
  return line('✗', error.code === 'jwks_unavailable' ? 'jwks' : NAMES[rule], error.hint ?? error.message, error.code);
}

/**
 * The gateway's own verifier (`createVerifier`, its defaults included) on `options`, writing every
 * rule's outcome to `write`: for any command that checks a token or a JWKS as the gateway would.
 */
export function gatewayCheck(options: GatewayCheckOptions, write: (text: string) => void): GatewayCheck {
  const { now } = options;
  const jwksTimeout = options.jwksTimeout ?? DEFAULT_JWKS_TIMEOUT;
  // Where the verification running records the rule that failed (the trace reports it before the throw).
  let attempt: { failed?: RuleOutcome } = {};
  const verifier: Verifier = createVerifier({
    registry: options.registry,
    audience: options.audience,
    now: () => now,
    jwksTimeout,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    trace: (outcome) => {
      if (outcome.passed) write(line('✓', NAMES[outcome.rule], passedDetail(outcome, now)));
      else attempt.failed = outcome;
    },
    onEvent: (event) => {
      if (event.type !== 'jwks_fetch') return;
      options.onDownload?.(event);
      const text = jwksLine(event, verifier, options.where(event.issuer));
      if (text !== undefined) write(text);
    },
  });
  return {
    verifier,
    async check(token) {
      const current: { failed?: RuleOutcome } = {};
      attempt = current;
      let error: AuthError | null;
      try {
        const auth = await verifier.verify(token);
        error = scopeFailure(auth);
        if (error === null) {
          write(line('✓', NAMES.scopes, quoteList([...auth.scopes].filter(isKnownScope))));
          return null;
        }
      } catch (caught) {
        if (!isAuthError(caught)) throw caught;
        error = caught;
      }
      const rule: RuleName = current.failed?.rule ?? error.facts?.rule ?? 'format';
      write(failureLine(error, rule, options.jwksFile, jwksTimeout));
      return { error, rule };
    },
  };
}
