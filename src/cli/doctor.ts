/**
 * `paygate-auth doctor`: why would the gateway reject this token? The command reads the gateway's
 * side (a registry entry or its fields, the JWKS, the audiences, the moment) and the token, then
 * runs the gateway's own check (`gateway-check.ts`: `createVerifier` with a trace, each rule's facts
 * as a line, the failing one with the value found against the value expected). It has no rule of
 * its own. A `--jwks` file is read by the verifier's own download (its size limit). Never prints
 * the token: a SHA-256 fingerprint names it.
 */
import type { FetchLike, IssuerEntry } from '../index.js';
import { quote } from '../internal/index.js';
import { type CliCommand, type CliIo, UsageError } from './command.js';
import { type ParsedOptions, parseOptions, requiredValue, requiredValues, secondsValue, stringValue, stringValues } from './cli-options.js';
import { readNow } from './doctor-time.js';
import { describeFileError } from './file-errors.js';
import { readEntries } from './entry-file.js';
import { allowedJwksHosts, checkRegistry, gatewayCheck, jwksTimeoutValue } from './gateway-check.js';
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
                             loopback; no special-purpose address; 256 KiB; --jwks-timeout; no
                             redirect followed)
or
  --issuer <iss>             the registered issuer
  --product <name>           a product it is registered for (repeatable)
  --jwks <url|file>          its JWKS
  --tenant <id>              for a limited integration, a tenant it may act for (repeatable)
  --max-lifetime <seconds>   the entry's maximum token lifetime (default 86400)
and
  --audience <aud>           the gateway service's audience (repeatable; required)
  --now <date|seconds>       check as of this moment (ISO 8601 or seconds since the epoch)
  --jwks-timeout <s>         how long a JWKS download may take, as the gateway's jwksTimeout,
                             in whole seconds, 1 to 120 (default 5): a host that goes silent
                             fails the download after it
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
  'jwks-timeout': { type: 'string' },
} as const;

/** Where the keys come from when `--jwks` is a file and no entry names a URL. */
const FILE_JWKS_URI = 'https://jwks.file.invalid/jwks.json';

/** `true` when `source` is an `http:` or `https:` URL (else it is a file path). */
function isUrl(source: string): boolean {
  const scheme = source.slice(0, 8).toLowerCase();
  return scheme.startsWith('http://') || scheme.startsWith('https://');
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
  const products = requiredValues(parsed, 'product', 'acme', 'without --entry');
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
    // Its first byte read, not only opened: a directory opens, and would fail later as a download.
    const handle = await open(file);
    try {
      await handle.read(new Uint8Array(1), 0, 1, 0);
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw new UsageError(`cannot read ${describeFileError(error, '--jwks', file) ?? `--jwks ${quote(file)}: ${String(error)}`}`);
  }
  const { createReadStream } = await import('node:fs');
  const { Readable } = await import('node:stream');
  return async () => {
    const body = Readable.toWeb(createReadStream(file)) as ReadableStream<Uint8Array>;
    return new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
  };
}

async function runDoctor(args: readonly string[], io: CliIo, deps: DoctorDeps): Promise<number> {
  const parsed = parseOptions(args, OPTIONS, 1);
  const audiences = requiredValues(parsed, 'audience', 'https://payments.example', '(the gateway service the token is for)');
  const entries = await gatewayEntries(parsed);
  const registry = checkRegistry(entries, allowedJwksHosts(parsed));
  const jwksTimeout = jwksTimeoutValue(parsed);
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
  const check = gatewayCheck(
    {
      registry,
      audience: audiences,
      now: nowMs,
      fetch,
      where: (issuer) => (fromFile ? jwks : (registry.get(issuer)?.jwksUri ?? issuer)),
      jwksFile: fromFile ? jwks : undefined,
      jwksTimeout,
    },
    io.stdout,
  );
  const rejection = await check.check(token);
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
