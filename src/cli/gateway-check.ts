/**
 * The gateway's own check of a token or a JWKS, as lines: the gateway's verifier (`createVerifier`,
 * its defaults included) on a registry the gateway would accept, its trace and events turned into
 * lines. A rule that passed is a ✓ line with the values it compared, read from its facts; a
 * JWKS download is a jwks line (the kids held, and why each ignored entry was ignored); the rule
 * that failed is a ✗ line with the verifier's own hint and the code the gateway answers. `doctor` and the `issuers` pre-check both run this
 * module; neither has a rule of its own, so neither can disagree with the gateway. Everything
 * printed from a token, a JWKS or an entry is cut and escaped for one line.
 */
import {
  type AuthError,
  type FetchLike,
  type IssuerEntry,
  IssuerRegistry,
  type JwksFetchEvent,
  type RuleName,
  type RuleOutcome,
  type TenantErn,
  type Verifier,
  createVerifier,
  isAuthError,
  isKnownScope,
} from '../index.js';
import { checkAllowedHosts, quote, quoteList, scopeFailure } from '../internal/index.js';
import { UsageError } from './command.js';
import { type ParsedOptions, stringValues } from './cli-options.js';
import { describeDuration, describeTime, isoSeconds } from './doctor-time.js';

/**
 * The hosts of `--allow-jwks-host`, as the gateway's `jwksAllowedHosts` holds them.
 * @throws {UsageError} naming the value that is not a bare host.
 */
export function allowedJwksHosts(parsed: ParsedOptions): readonly string[] {
  try {
    return [...checkAllowedHosts('paygate-auth', '--allow-jwks-host', stringValues(parsed, 'allow-jwks-host'))];
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
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

/** What a rule that passed compared, from the verifier's trace. */
function passed(outcome: RuleOutcome, now: number): string {
  const { actual, expected } = outcome;
  switch (outcome.rule) {
    case 'size':
      return `${(actual as { length: number }).length} characters, within ${String(expected)} bytes`;
    case 'format':
      return 'three canonical base64url segments; header and payload are JSON objects, no member repeated';
    case 'typ':
      return actual === undefined ? 'absent (allowed; "JWT" expected)' : shown(actual);
    case 'crit':
      return 'absent';
    case 'iss':
      return `${shown(actual)} = registered issuer`;
    case 'key': {
      const { bits, alg } = expected as { bits: number; alg?: string };
      return `${shown(actual)} is published (RSA, ${bits} bits, ${alg === undefined ? 'any alg' : quote(alg)})`;
    }
    case 'signature':
      return `${shown(actual)} verifies with key ${quote((expected as { kid: string }).kid)}`;
    case 'exp':
    case 'expt':
    case 'iat':
    case 'nbf':
      return describeTime(actual as number, now / 1000);
    case 'expiry': {
      const { now: at, tolerance } = expected as { now: number; tolerance: number };
      return `${String(outcome.claim)} ${describeTime(actual as number, at, false)} is ahead (now ${isoSeconds(at)}, tolerance ${tolerance} s)`;
    }
    case 'not_before':
      return `${String(outcome.claim)} is not in the future`;
    case 'lifetime': {
      const { lifetime } = actual as { lifetime: number };
      const { maximum } = expected as { maximum: number };
      return `${lifetime} s (${describeDuration(lifetime)}) ≤ maximum ${maximum} s`;
    }
    case 'aud':
      return `${shown(actual)} names ${shown(expected)}`;
    case 'sub':
      return expected === null ? `${shown(actual)} (not compared: the entry waives it)` : `${shown(actual)} = iss`;
    case 'tenant_ern': {
      const tenant = actual as TenantErn;
      return `${quote(tenant.ern)}: product ${quote(tenant.product)} in (${quoteList((expected as { products: string[] }).products)})`;
    }
    case 'scope':
      return actual === undefined ? 'absent (no scopes)' : shown(actual);
    case 'scopes':
      return quoteList(actual as string[]);
    default:
      return shown(actual);
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
  /** Hears every JWKS download the verifier makes. */
  readonly onDownload?: (event: JwksFetchEvent) => void;
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

/** The line of a failure: the rule's name, the verifier's hint (else its message) and the code. */
function failureLine(error: AuthError, rule: RuleName): string {
  return line('✗', error.code === 'jwks_unavailable' ? 'jwks' : NAMES[rule], error.hint ?? error.message, error.code);
}

/**
 * The gateway's own verifier (`createVerifier`, its defaults included) on `options`, writing every
 * rule's outcome to `write`: for any command that checks a token or a JWKS as the gateway would.
 */
export function gatewayCheck(options: GatewayCheckOptions, write: (text: string) => void): GatewayCheck {
  const { now } = options;
  // Where the verification running records the rule that failed (the trace reports it before the throw).
  let attempt: { failed?: RuleOutcome } = {};
  const verifier: Verifier = createVerifier({
    registry: options.registry,
    audience: options.audience,
    now: () => now,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    trace: (outcome) => {
      if (outcome.passed) write(line('✓', NAMES[outcome.rule], passed(outcome, now)));
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
          write(line('✓', NAMES.scopes, passed({ rule: 'scopes', passed: true, actual: [...auth.scopes].filter(isKnownScope) }, now)));
          return null;
        }
      } catch (caught) {
        if (!isAuthError(caught)) throw caught;
        error = caught;
      }
      const rule: RuleName = current.failed?.rule ?? error.facts?.rule ?? 'format';
      write(failureLine(error, rule));
      return { error, rule };
    },
  };
}
