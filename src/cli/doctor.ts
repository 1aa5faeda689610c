/**
 * `paygate-auth doctor`: why would the gateway reject this token? The doctor is the gateway's
 * verifier: it builds one with `createVerifier` (the registry entry, the audiences, the clock, the
 * JWKS given) and prints each rule's outcome as the verifier's trace reports it, ✓ with the values
 * compared, then ✗ for the rule that failed with the verifier's own hint. There is no second rule
 * set, so its verdict is the verifier's by construction. The JWKS is downloaded by the verifier's
 * own fetcher (its size limit, timeout and redirect rule). Everything printed from the token or
 * the JWKS is cut and escaped. Never prints the token: a SHA-256 fingerprint names it.
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
import { type CliCommand, type CliIo, UsageError } from './command.js';
import { type ParsedOptions, parseOptions, requiredValue, secondsValue, stringValue, stringValues } from './cli-options.js';
import { describeDuration, describeTime, isoSeconds, readNow } from './doctor-time.js';
import { EXIT } from './run-cli.js';
import { type StdinReader, fingerprint, readProcessStdin, readToken } from './token-input.js';

/** What the doctor reaches outside itself; injected by tests. */
export interface DoctorDeps {
  /** The verifier's `fetch`, for JWKS URLs. @default the verifier's */
  readonly fetch?: FetchLike;
  /** Milliseconds since the epoch, unless `--now` is given. @default Date.now */
  readonly now?: () => number;
  /** @default reads process.stdin */
  readonly readStdin?: StdinReader;
  /** @default process.stdin.isTTY */
  readonly stdinIsTerminal?: boolean;
}

const HELP = `Usage: paygate-auth doctor [<token> | -] [options]

Explains why the gateway would accept or reject a token: it runs the gateway's own verifier and
prints every rule in its order, with the values compared, up to the first failure. The token is
never printed (a fingerprint names it).

The token: an argument, "-" or nothing for standard input, or --token-file <path>
("Bearer " in front is ignored).

The gateway's side, either
  --entry <file.json>        the gateway's registry entry for the issuer (or an array of entries):
                             { "issuer", "jwksUri", "products", "tenants"?, "maxTokenLifetime"? }
  --jwks <url|file>          with --entry: read the keys here instead of the entry's jwksUri
                             (a URL is downloaded as the gateway does: https:, or http: on
                             loopback; no special-purpose address; 256 KiB; 5 s; no redirect
                             followed)
or
  --issuer <iss>             the registered issuer
  --product <name>           a product it is registered for (repeatable)
  --jwks <url|file>          its JWKS
  --tenant <id>              for a limited integration, a tenant it may act for (repeatable)
  --max-lifetime <seconds>   the entry's maximum token lifetime (default 86400)
and
  --audience <aud>           the gateway service's audience (repeatable; required)
  --now <date|seconds>       check as of this moment (ISO 8601 or seconds since the epoch)
  --allow-jwks-host <host>   a JWKS host to download from although it is, or resolves to, a
                             special-purpose address (loopback, private, link-local, cloud
                             metadata…), as the gateway's jwksAllowedHosts would (repeatable)

Exit codes: 0 accepted, 1 rejected (or the JWKS could not be loaded), 2 usage mistake.
`;

const OPTIONS = {
  'token-file': { type: 'string' },
  entry: { type: 'string' },
  jwks: { type: 'string' },
  issuer: { type: 'string' },
  product: { type: 'string', multiple: true },
  tenant: { type: 'string', multiple: true },
  'max-lifetime': { type: 'string' },
  audience: { type: 'string', multiple: true },
  now: { type: 'string' },
  'allow-jwks-host': { type: 'string', multiple: true },
} as const;

/** Where the keys come from when `--jwks` is a file and no entry names a URL. */
const FILE_JWKS_URI = 'https://jwks.file.invalid/jwks.json';

/** `true` when `source` is an `http:` or `https:` URL (else it is a file path). */
function isUrl(source: string): boolean {
  const scheme = source.slice(0, 8).toLowerCase();
  return scheme.startsWith('http://') || scheme.startsWith('https://');
}

/**
 * The registry entries of a JSON file (one entry, or an array of them), unchecked.
 * @param label how the file is named in an error (`--entry <file>`)
 * @throws {UsageError} when it cannot be read or is not JSON.
 */
export async function readEntries(file: string, label = `--entry ${file}`): Promise<IssuerEntry[]> {
  const { readFile } = await import('node:fs/promises');
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`${label}: ${error instanceof SyntaxError ? 'not JSON' : (error as Error).message}`);
  }
  return (Array.isArray(value) ? value : [value]) as IssuerEntry[];
}

/** The gateway's entries, each reading its keys from `--jwks` when it is a URL. */
async function gatewayEntries(parsed: ParsedOptions): Promise<IssuerEntry[]> {
  const entryFile = stringValue(parsed, 'entry');
  const jwks = stringValue(parsed, 'jwks');
  const jwksUri = jwks !== undefined && isUrl(jwks) ? jwks : undefined;
  if (entryFile !== undefined) {
    for (const flag of ['issuer', 'product', 'tenant', 'max-lifetime']) {
      if (parsed.values[flag] !== undefined) throw new UsageError(`--${flag} cannot be combined with --entry (the entry says it)`);
    }
    const entries = await readEntries(entryFile);
    return jwksUri === undefined ? entries : entries.map((entry) => ({ ...entry, jwksUri }));
  }
  requiredValue(parsed, 'jwks');
  const products = stringValues(parsed, 'product');
  if (products.length === 0) throw new UsageError('--product is required without --entry');
  const tenants = stringValues(parsed, 'tenant');
  const maxTokenLifetime = secondsValue(parsed, 'max-lifetime');
  return [
    {
      issuer: requiredValue(parsed, 'issuer'),
      jwksUri: jwksUri ?? FILE_JWKS_URI,
      products,
      ...(tenants.length === 0 ? {} : { tenants }),
      ...(maxTokenLifetime === undefined ? {} : { maxTokenLifetime }),
    },
  ];
}

/**
 * The `fetch` of a `--jwks` file: its bytes streamed as a JSON answer, so the verifier's own
 * download reads them (its size limit stops reading a file that is too large).
 */
async function fileFetch(file: string): Promise<FetchLike> {
  const { open } = await import('node:fs/promises');
  try {
    await (await open(file)).close();
  } catch (error) {
    throw new UsageError(`cannot read --jwks ${file}: ${(error as { code?: string }).code ?? 'error'}`);
  }
  const { createReadStream } = await import('node:fs');
  const { Readable } = await import('node:stream');
  return async () => {
    const body = Readable.toWeb(createReadStream(file)) as ReadableStream<Uint8Array>;
    return new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
  };
}

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

/** A value the token (or a stored entry) carried, escaped for the terminal, or `absent`. */
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

/** What {@link tracedVerifier} builds its verifier from. */
export interface TracedVerifierOptions {
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

/** The gateway's verifier, reporting as the doctor does. */
export interface TracedVerifier {
  readonly verifier: Verifier;
  /**
   * Verifies `token`, writing a ✓ line for each rule passed (a jwks line for each download),
   * then a ✗ line with the verifier's hint and code for the rule that failed.
   * @returns `null` when accepted (a known scope included), else the rejection.
   */
  check(token: string): Promise<Rejection | null>;
}

/**
 * The gateway's own verifier (`createVerifier`, its defaults included) on `options`, writing
 * every rule's outcome to `write`: the doctor's machinery, for any command that checks a token or
 * a JWKS as the gateway would.
 */
export function tracedVerifier(options: TracedVerifierOptions, write: (text: string) => void): TracedVerifier {
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
      write(line('✗', error.code === 'jwks_unavailable' ? 'jwks' : NAMES[rule], error.hint ?? error.message, error.code));
      return { error, rule };
    },
  };
}

async function runDoctor(args: readonly string[], io: CliIo, deps: DoctorDeps): Promise<number> {
  const parsed = parseOptions(args, OPTIONS, 1);
  const audiences = stringValues(parsed, 'audience');
  if (audiences.length === 0) throw new UsageError('--audience is required (the gateway service the token is for)');
  const entries = await gatewayEntries(parsed);
  const registry = checkRegistry(entries, allowedJwksHosts(parsed));
  const nowMs = readNow(stringValue(parsed, 'now'), deps.now ?? Date.now);
  const token = await readToken(
    parsed.positionals[0],
    stringValue(parsed, 'token-file'),
    deps.readStdin ?? readProcessStdin,
    deps.stdinIsTerminal ?? process.stdin.isTTY === true,
  );
  const jwks = stringValue(parsed, 'jwks');
  const fromFile = jwks !== undefined && !isUrl(jwks);
  const fetch = fromFile ? await fileFetch(jwks) : deps.fetch;

  io.stdout(
    `paygate-auth doctor: token ${await fingerprint(token)} (${token.length} characters), as of ${new Date(nowMs).toISOString()}\n`,
  );
  // The gateway's own verifier, its defaults included: every line below is one of its rules.
  const traced = tracedVerifier(
    {
      registry,
      audience: audiences,
      now: nowMs,
      fetch,
      where: (issuer) => (fromFile ? jwks : (registry.get(issuer)?.jwksUri ?? issuer)),
    },
    io.stdout,
  );
  const rejection = await traced.check(token);
  if (rejection === null) {
    io.stdout("Accepted. The gateway's verifier (createVerifier) accepts it too.\n");
    return EXIT.ok;
  }
  io.stdout(`Rejected: ${rejection.error.code} (rule ${rejection.rule}), as the gateway's verifier (createVerifier) answers.\n`);
  return EXIT.failed;
}

/** The `doctor` command, reaching out through `deps`. */
export function createDoctorCommand(deps: DoctorDeps = {}): CliCommand {
  return {
    name: 'doctor',
    summary: 'explain why the gateway would accept or reject a token',
    help: HELP,
    run: (args, io) => runDoctor(args, io, deps),
  };
}

/** `paygate-auth doctor`. */
export const doctorCommand: CliCommand = createDoctorCommand();
