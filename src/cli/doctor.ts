/**
 * `paygate-auth doctor`: why would the gateway reject this token? Runs every check the gateway
 * runs, in its order, prints each with ✓/✗ and the values compared, stops at the first failure, and
 * checks its verdict against the gateway's own verifier (`createVerifier`) on the same inputs.
 * Never prints the token: a SHA-256 fingerprint names it.
 *
 * @module paygate-auth/cli
 */
import { type AuthErrorCode, type IssuerEntry, IssuerRegistry, createVerifier, isAuthError, scopeFailure } from '../index.js';
import { type CliCommand, type CliIo, UsageError } from './command.js';
import { type ParsedOptions, parseOptions, requiredValue, secondsValue, stringValue, stringValues } from './cli-options.js';
import { type DoctorCheck, runDoctorChecks } from './doctor-checks.js';
import { type DoctorFetch, type JwksLoad, isUrl, loadJwks } from './doctor-jwks.js';
import { EXIT } from './run-cli.js';
import { type StdinReader, fingerprint, readProcessStdin, readToken } from './token-input.js';

/** What the doctor reaches outside itself; injected by tests. */
export interface DoctorDeps {
  /** @default globalThis.fetch */
  readonly fetch?: DoctorFetch;
  /** Milliseconds since the epoch, unless `--now` is given. @default Date.now */
  readonly now?: () => number;
  /** @default reads process.stdin */
  readonly readStdin?: StdinReader;
  /** @default process.stdin.isTTY */
  readonly stdinIsTerminal?: boolean;
}

const HELP = `Usage: paygate-auth doctor [<token> | -] [options]

Explains why the gateway would accept or reject a token: every check in the gateway's order, with
the values compared, stopping at the first failure. The token is never printed (a fingerprint names it).

The token: an argument, "-" or nothing for standard input, or --token-file <path>
("Bearer " in front is ignored).

The gateway's side, either
  --entry <file.json>        the gateway's registry entry for the issuer (or an array of entries):
                             { "issuer", "jwksUri", "products", "tenants"?, "maxTokenLifetime"? }
  --jwks <url|file>          with --entry: read the keys here instead of the entry's jwksUri
or
  --issuer <iss>             the registered issuer
  --product <name>           a product it is registered for (repeatable)
  --jwks <url|file>          its JWKS
  --tenant <id>              for a limited integration, a tenant it may act for (repeatable)
  --max-lifetime <seconds>   the entry's maximum token lifetime (default 86400)
and
  --audience <aud>           the gateway service's audience (repeatable; required)
  --now <date|seconds>       check as of this moment (ISO 8601 or seconds since the epoch)

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
} as const;

/** Where the keys come from when `--jwks` is a file and no entry names a URL. */
const FILE_JWKS_URI = 'https://jwks.file.invalid/jwks.json';

const GATEWAY_DEFAULTS = { maxTokenBytes: 8192, clockTolerance: 30, maxTokenLifetime: 86_400 } as const;

function readNow(value: string | undefined, fallback: () => number): number {
  if (value === undefined) return fallback();
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value);
  if (!Number.isFinite(ms)) throw new UsageError(`--now must be an ISO 8601 date or seconds since the epoch, got "${value}"`);
  return ms;
}

async function readEntries(file: string): Promise<IssuerEntry[]> {
  const { readFile } = await import('node:fs/promises');
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`--entry ${file}: ${error instanceof SyntaxError ? 'not JSON' : (error as Error).message}`);
  }
  return (Array.isArray(value) ? value : [value]) as IssuerEntry[];
}

async function gatewayEntries(parsed: ParsedOptions): Promise<IssuerEntry[]> {
  const entryFile = stringValue(parsed, 'entry');
  if (entryFile !== undefined) {
    for (const flag of ['issuer', 'product', 'tenant', 'max-lifetime']) {
      if (parsed.values[flag] !== undefined) throw new UsageError(`--${flag} cannot be combined with --entry (the entry says it)`);
    }
    return readEntries(entryFile);
  }
  const jwks = requiredValue(parsed, 'jwks');
  const products = stringValues(parsed, 'product');
  if (products.length === 0) throw new UsageError('--product is required without --entry');
  const tenants = stringValues(parsed, 'tenant');
  const maxTokenLifetime = secondsValue(parsed, 'max-lifetime');
  return [
    {
      issuer: requiredValue(parsed, 'issuer'),
      jwksUri: isUrl(jwks) ? jwks : FILE_JWKS_URI,
      products,
      ...(tenants.length === 0 ? {} : { tenants }),
      ...(maxTokenLifetime === undefined ? {} : { maxTokenLifetime }),
    },
  ];
}

function checkRegistry(entries: readonly IssuerEntry[]): IssuerRegistry {
  try {
    return new IssuerRegistry(entries);
  } catch (error) {
    throw new UsageError(`the registry entry is not one the gateway would accept: ${(error as Error).message}`);
  }
}

function line(check: DoctorCheck): string {
  const mark = check.status === 'pass' ? '✓' : check.status === 'fail' ? '✗' : '–';
  const code = check.code === undefined ? '' : `  → ${check.code}`;
  return `${mark} ${check.name.padEnd(12)} ${check.detail}${code}\n`;
}

/** The gateway verifier's answer for `token`: `null` when it accepts it (default scope policy included). */
async function verifierVerdict(token: string, registry: IssuerRegistry, audiences: readonly string[], now: number, fetch: DoctorFetch): Promise<AuthErrorCode | null> {
  const verifier = createVerifier({ registry, audience: audiences, now: () => now, fetch, cache: false });
  try {
    const auth = await verifier.verify(token);
    return scopeFailure(auth)?.code ?? null;
  } catch (error) {
    if (isAuthError(error)) return error.code;
    throw error;
  }
}

async function runDoctor(args: readonly string[], io: CliIo, deps: DoctorDeps): Promise<number> {
  const parsed = parseOptions(args, OPTIONS, 1);
  const audiences = stringValues(parsed, 'audience');
  if (audiences.length === 0) throw new UsageError('--audience is required (the gateway service the token is for)');
  const entries = await gatewayEntries(parsed);
  const registry = checkRegistry(entries);
  const nowMs = readNow(stringValue(parsed, 'now'), deps.now ?? Date.now);
  const token = await readToken(parsed.positionals[0], stringValue(parsed, 'token-file'), deps.readStdin ?? readProcessStdin, deps.stdinIsTerminal ?? process.stdin.isTTY === true);
  const download: DoctorFetch = deps.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const jwksOverride = stringValue(parsed, 'jwks');
  const loads = new Map<string, Promise<JwksLoad>>();
  const loadFor = (entry: IssuerEntry): Promise<JwksLoad> => {
    let load = loads.get(entry.issuer);
    if (load === undefined) {
      load = loadJwks(jwksOverride ?? entry.jwksUri, download);
      loads.set(entry.issuer, load);
    }
    return load;
  };
  // The verifier reads the very document the checks read.
  const replay: DoctorFetch = async (input) => {
    const entry = entries.find((candidate) => candidate.jwksUri === input);
    const load = entry === undefined ? undefined : await loadFor(entry);
    if (load?.text === undefined) return new Response('', { status: 503 });
    return new Response(load.text, { status: 200, headers: { 'content-type': 'application/json' } });
  };

  io.stdout(`paygate-auth doctor: token ${await fingerprint(token)} (${token.length} characters), as of ${new Date(nowMs).toISOString()}\n`);
  const failure = await runDoctorChecks(
    { token, entries, audiences, now: nowMs / 1000, loadJwks: loadFor, ...GATEWAY_DEFAULTS },
    (check) => io.stdout(line(check)),
  );
  const verdict = await verifierVerdict(token, registry, audiences, nowMs, replay);
  const expected = failure?.code ?? null;
  if (verdict !== expected) {
    io.stdout(`The gateway's verifier (createVerifier) answers ${verdict ?? 'accepted'} where these checks found ${expected ?? 'nothing wrong'}: please report this mismatch.\n`);
    return EXIT.failed;
  }
  if (failure === null) {
    io.stdout("Accepted. The gateway's verifier (createVerifier) accepts it too.\n");
    return EXIT.ok;
  }
  io.stdout(`Rejected: ${expected}. The gateway's verifier (createVerifier) answers ${verdict} too.\n`);
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
