/**
 * `paygate-auth issuers add | update | remove | list | show | import | history`: the issuer
 * registry kept in PostgreSQL (`paygate-auth/postgres`), one row of a table each. `add` and
 * `update` check the entry and its JWKS with the gateway's own verifier first
 * ({@link checkCandidate}); the database audits every change (its role, and the operator's name
 * `--by` gives, default the OS user), and every instance attached to the database
 * (`postgresRegistry`) applies it within a second. Every value read from the database is escaped for one line.
 */
import {
  type IssuerChange,
  IssuerChangeError,
  type IssuerRecord,
  addIssuer,
  importIssuers,
  readIssuerChanges,
  readIssuers,
  readLastIssuerChange,
  removeIssuer,
  updateIssuer,
} from '../postgres/index.js';
import { issuerTooLong } from '../postgres/internal.js';
import type { FetchLike, IssuerEntry } from '../index.js';
import { oneLineJson, quote } from '../internal/index.js';
import { type CliCommand, type CliIo, UsageError } from './command.js';
import {
  type ParsedOptions,
  flagMistake,
  parseOptions,
  requiredValue,
  requiredValues,
  secondsValue,
  stringValue,
  stringValues,
} from './cli-options.js';
import { type CliDatabase, DATABASE_HELP, DATABASE_OPTIONS, databaseTarget, requireKnownSchema, withDatabase } from './database-url.js';
import { readEntries } from './entry-file.js';
import { WAIT_HELP, WAIT_OPTIONS, waitBound, waitIfAsked } from './fleet-wait.js';
import { allowedJwksHosts, checkRegistry, jwksTimeoutValue, shown } from './gateway-check.js';
import { checkCandidate } from './issuer-check.js';
import { NotRegisteredError, notRegisteredError, notRegisteredHint } from './registered-issuer.js';
import { EXIT } from './run-cli.js';
import { shellWord } from './shell-word.js';
import { type StdinReader, readProcessStdin, readToken } from './token-input.js';

/** What the commands reach outside themselves; injected by tests. */
export interface IssuersDeps {
  /** The candidate verifier's `fetch`, for JWKS URLs. @default the verifier's */
  readonly fetch?: FetchLike;
  /** Milliseconds since the epoch, the sample token's clock. @default Date.now */
  readonly now?: () => number;
  /** @default reads process.stdin */
  readonly readStdin?: StdinReader;
  /** The actor when `--by` is not given. @default os.userInfo().username */
  readonly user?: () => string;
}

const STRING = { type: 'string' } as const;
const STRINGS = { type: 'string', multiple: true } as const;
const FLAG = { type: 'boolean' } as const;

/** The options naming an entry's fields, and `--entry` for a whole entry. */
const ENTRY_OPTIONS = {
  entry: STRING,
  issuer: STRING,
  'jwks-uri': STRING,
  product: STRINGS,
  tenant: STRINGS,
  'max-token-lifetime': STRING,
  'subject-must-equal-issuer': STRING,
} as const;
const FIELD_FLAGS = ['jwks-uri', 'product', 'tenant', 'max-token-lifetime', 'subject-must-equal-issuer'] as const;

const CHANGE_OPTIONS = { ...DATABASE_OPTIONS, by: STRING, json: FLAG, ...WAIT_OPTIONS } as const;
const CHECK_OPTIONS = {
  ...ENTRY_OPTIONS,
  ...CHANGE_OPTIONS,
  token: STRING,
  audience: STRINGS,
  force: FLAG,
  'allow-jwks-host': STRINGS,
  'jwks-timeout': STRING,
} as const;
const UPDATE_OPTIONS = { ...CHECK_OPTIONS, 'unchanged-since': STRING } as const;
const IMPORT_OPTIONS = { ...CHANGE_OPTIONS, 'unchanged-since': STRING, 'allow-jwks-host': STRINGS } as const;

/** The entry's fields as printed, in this order (any other member is not shown). */
const FIELDS = ['jwksUri', 'products', 'tenants', 'maxTokenLifetime', 'subjectMustEqualIssuer'] as const;

const ENTRY_HELP = `The entry, either
  --entry <file.json>          the whole entry: { "issuer", "jwksUri", "products", "tenants"?,
                               "maxTokenLifetime"?, "subjectMustEqualIssuer"? }
or
  --issuer <iss>               the issuer (its tokens' iss), e.g. https://auth.acme.example
  --jwks-uri <url>             where it publishes its JWKS (https:, or http: on loopback)
  --product <name>             a product it acts for (repeatable, or a comma list)
  --tenant <id>                for a limited integration, a tenant it may act for (repeatable,
                               or a comma list)
  --max-token-lifetime <s>     the longest token lifetime accepted, in seconds
  --subject-must-equal-issuer <true|false>`;

const CHECK_HELP = `The check (before anything is written): the gateway's own verifier, on a registry of just
this entry, downloads its JWKS (256 KiB, --jwks-timeout, no redirect) and refuses one it would not use:
unreachable, not served as JSON, or no usable key (each ignored key named with the key rule it
breaks, e.g. "k1" modulus of 1024 bits, under 2048). A JWKS host that is, or resolves to, a
special-purpose address (loopback, private, link-local, cloud metadata…) is refused, even forced.
  --force                      write it even so (the reason is printed)
  --jwks-timeout <s>           how long the download may take, as the gateway's jwksTimeout, in
                               whole seconds, 1 to 120 (default 5)
  --allow-jwks-host <host>     a JWKS host allowed although special-purpose (repeatable); every
                               instance must allow it too (jwksAllowedHosts)
  --token <file|->             a sample token of the integration ("-": standard input): it must
                               verify, as the gateway would, or nothing is written (even with --force)
  --audience <aud>             with --token: the gateway service's audience (repeatable)`;

const COMMON_HELP = `  --by <name>                  who makes the change, kept in the audit trail beside the database
                               role (default: the OS user)
${WAIT_HELP}
  --json                       print the change as one JSON line (the check's lines go to stderr)`;

function usage(name: string, text: string): string {
  return `Usage: paygate-auth issuers ${name}\n\n${text}\n\n${DATABASE_HELP}\n`;
}

/** A repeatable option's values, each also split at commas. */
function listValues(parsed: ParsedOptions, name: string): string[] {
  return stringValues(parsed, name).flatMap((value) => value.split(',').map((item) => item.trim()));
}

function booleanValue(parsed: ParsedOptions, name: string): boolean | undefined {
  const value = stringValue(parsed, name);
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') throw new UsageError(`--${name} must be true or false, got ${quote(value)}`);
  return value === 'true';
}

/** `base` (or nothing) with the fields the options give. */
function entryFromFlags(parsed: ParsedOptions, base: IssuerEntry | undefined): IssuerEntry {
  const products = listValues(parsed, 'product');
  const tenants = listValues(parsed, 'tenant');
  const maxTokenLifetime = secondsValue(parsed, 'max-token-lifetime');
  const subjectMustEqualIssuer = booleanValue(parsed, 'subject-must-equal-issuer');
  const jwksUri = base === undefined ? requiredValue(parsed, 'jwks-uri') : (stringValue(parsed, 'jwks-uri') ?? base.jwksUri);
  if (base === undefined && products.length === 0) requiredValues(parsed, 'product', 'acme', '(or --entry <file.json>)');
  return {
    ...base,
    issuer: requiredValue(parsed, 'issuer'),
    jwksUri,
    products: products.length === 0 ? (base?.products ?? []) : products,
    ...(tenants.length === 0 ? {} : { tenants }),
    ...(maxTokenLifetime === undefined ? {} : { maxTokenLifetime }),
    ...(subjectMustEqualIssuer === undefined ? {} : { subjectMustEqualIssuer }),
  };
}

/** The entry of `--entry`, which says every field. @throws {UsageError} with a field option too. */
async function entryFromFile(parsed: ParsedOptions, file: string): Promise<IssuerEntry> {
  for (const flag of ['issuer', ...FIELD_FLAGS]) {
    if (parsed.values[flag] !== undefined) throw new UsageError(`--${flag} cannot be combined with --entry (the entry says it)`);
  }
  const entries = await readEntries(file);
  if (entries.length !== 1)
    throw new UsageError(`--entry ${quote(file)}: holds ${entries.length} entries, give one (or use "issuers import")`);
  return entries[0] as IssuerEntry;
}

/**
 * @throws {UsageError} when an issuer of `entries` is longer than the registry table holds, named
 * as the operator gave it (`name(index)`: `--issuer`, or its place in a file), before any
 * connection or JWKS download: the table's own refusal names the library's function.
 */
function checkIssuerLengths(entries: readonly IssuerEntry[], name: (index: number) => string): void {
  for (const [index, entry] of entries.entries()) {
    const long = issuerTooLong(name(index), entry.issuer);
    if (long !== undefined) throw new UsageError(long);
  }
}

/** Who makes the change: `--by`, else the OS user. */
async function actor(parsed: ParsedOptions, deps: IssuersDeps): Promise<string> {
  const by = stringValue(parsed, 'by');
  if (by !== undefined) return by;
  try {
    if (deps.user !== undefined) return deps.user();
    const { userInfo } = await import('node:os');
    return userInfo().username;
  } catch {
    throw new UsageError('the OS user cannot be read: give --by <name>');
  }
}

/** Runs `work` on the database of `--database-url` or DATABASE_URL. */
function onDatabase<T>(parsed: ParsedOptions, io: CliIo, work: (db: CliDatabase) => Promise<T>): Promise<T> {
  return withDatabase(databaseTarget(parsed, io.env), work);
}

/** {@link onDatabase} for a command that changes the registry: refused on a newer schema first. */
function changeDatabase<T>(parsed: ParsedOptions, io: CliIo, work: (db: CliDatabase) => Promise<T>): Promise<T> {
  return onDatabase(parsed, io, async (db) => {
    await requireKnownSchema(db, ['registry']);
    return work(db);
  });
}

/** The flag each option of the registry's functions comes from, to name it in a usage mistake. */
const FLAG_OF_OPTION: Readonly<Record<string, string>> = {
  by: '--by',
  jwksAllowedHosts: '--allow-jwks-host',
  unchangedSince: '--unchanged-since',
};

/**
 * A change the table refuses for its options (an actor too long, say) is a usage mistake, named by
 * its flag (`--by must be…`) rather than the function's option (`importIssuers: by must be…`).
 */
async function asUsage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    const owner = /^(\w+): /.exec(error.message)?.[1];
    throw (owner === undefined ? undefined : flagMistake(error, owner, FLAG_OF_OPTION)) ?? new UsageError(error.message);
  }
}

function time(at: Date): string {
  return at.toISOString();
}

/** A field's value, escaped: a number or boolean as is. */
function fieldValue(value: unknown): string {
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : shown(value);
}

/** `products ["acme"], tenants ["t-1"], jwksUri "…"`: the fields an entry gives, escaped. */
function describeEntry(entry: IssuerEntry): string {
  const record = entry as unknown as Readonly<Record<string, unknown>>;
  return FIELDS.filter((field) => record[field] !== undefined)
    .map((field) => `${field} ${fieldValue(record[field])}`)
    .join(', ');
}

/** What a change did: the entry added or removed, or each field changed, before → after. */
function describeChange(change: IssuerChange): string {
  const { before, after } = change;
  if (before === null) return after === null ? '' : `→ ${describeEntry(after)}`;
  if (after === null) return `${describeEntry(before)} →`;
  const was = before as unknown as Readonly<Record<string, unknown>>;
  const is = after as unknown as Readonly<Record<string, unknown>>;
  return FIELDS.filter((field) => JSON.stringify(was[field]) !== JSON.stringify(is[field]))
    .map((field) => `${field} ${fieldValue(was[field])} → ${fieldValue(is[field])}`)
    .join(', ');
}

/** Who made a change: the operator's name the session gave, and the database role it made it as. */
function author(change: IssuerChange): string {
  if (change.role === null) return `by ${change.actor === null ? 'an unknown actor' : quote(change.actor)}`;
  return change.actor === null ? `by role ${quote(change.role)}` : `by ${quote(change.actor)} (role ${quote(change.role)})`;
}

function changeLine(change: IssuerChange): string {
  const what = describeChange(change);
  return `#${change.id}  ${time(change.at)}  ${change.action.padEnd(6)}  ${quote(change.issuer)}  ${author(change)}${what === '' ? '' : `: ${what}`}\n`;
}

function recordLine(record: IssuerRecord): string {
  const { entry } = record;
  const updated =
    record.updatedAt.getTime() === record.addedAt.getTime() ? '' : `, updated ${time(record.updatedAt)} by ${quote(record.updatedBy)}`;
  const added = `added ${time(record.addedAt)} by ${quote(record.addedBy)}${updated}, change #${record.change}`;
  if (record.refused !== null) {
    // Whatever the row holds, unchecked: shown whole, cut and escaped.
    return `✗ ${quote(record.issuer)}  left out by every instance (${record.refused.rule}): ${record.refused.reason}  entry ${shown(entry)}  ${added}\n`;
  }
  const tenants = entry.tenants === undefined ? 'every tenant' : shown(entry.tenants);
  return `${quote(entry.issuer)}  products ${shown(entry.products)}  tenants ${tenants}  jwksUri ${quote(entry.jwksUri)}  ${added}\n`;
}

const VERB = { add: 'Added', update: 'Updated', remove: 'Removed' } as const;

/**
 * How to undo `change`: remove what was added; add (update) back the entry removed (replaced),
 * given whole, as JSON on one escaped line, for a file of `--entry`.
 */
function undoLine(change: IssuerChange): string {
  if (change.action === 'add') return `To undo: paygate-auth issuers remove ${shellWord(change.issuer)}`;
  const command = change.action === 'remove' ? 'add' : 'update';
  return `To undo: save the entry ${change.action === 'remove' ? 'removed' : 'before'} to a file and run "paygate-auth issuers ${command} --entry <file>": ${oneLineJson(change.before)}`;
}

function printChange(change: IssuerChange, parsed: ParsedOptions, io: CliIo): void {
  if (parsed.values.json === true) io.stdout(`${oneLineJson(change)}\n`);
  else {
    io.stdout(changeLine(change));
    io.stdout(
      `${VERB[change.action]} ${quote(change.issuer)}: every instance following the database (postgresRegistry) applies it within a second.\n`,
    );
    io.stdout(`${undoLine(change)}\n`);
  }
}

/** Where the lines besides the result go: standard error when the result is JSON. */
function reportTo(parsed: ParsedOptions, io: CliIo): (text: string) => void {
  return parsed.values.json === true ? io.stderr : io.stdout;
}

/** Prints `change`, then waits for the fleet to apply it when `--wait` asks; the exit code. */
async function changed(
  db: CliDatabase,
  change: IssuerChange,
  parsed: ParsedOptions,
  io: CliIo,
  bound: number | undefined,
): Promise<number> {
  printChange(change, parsed, io);
  return waitIfAsked(db, bound, { registryChange: change.id }, reportTo(parsed, io));
}

/** `--unchanged-since <change id>`, if given. */
function unchangedSince(parsed: ParsedOptions): number | undefined {
  const value = stringValue(parsed, 'unchanged-since');
  if (value === undefined) return undefined;
  if (!/^[0-9]{1,15}$/.test(value))
    throw new UsageError(`--unchanged-since must be a change id (as "issuers list" prints it), got ${quote(value)}`);
  return Number(value);
}

/** What an update writes, and the state it was made from. */
interface Update {
  readonly entry: IssuerEntry;
  /** The entry the fields were changed on (`--issuer` with field options). */
  readonly expected?: IssuerEntry;
  /** The change it was made from: `--unchanged-since`, else the row's last change when read here. */
  readonly unchangedSince?: number;
}

/**
 * The update the options ask for, and the state it was made from: the whole entry of `--entry`,
 * or the registered entry of `--issuer` with the fields the options give. Without
 * `--unchanged-since`, the row as read now: so a change made while the JWKS is checked is not undone.
 */
async function planUpdate(db: CliDatabase, parsed: ParsedOptions, given: IssuerEntry | undefined): Promise<Update> {
  const issuer = given?.issuer ?? requiredValue(parsed, 'issuer');
  const current = await currentRecord(db, issuer, allowedJwksHosts(parsed));
  const since = unchangedSince(parsed) ?? current?.change;
  const state = since === undefined ? {} : { unchangedSince: since };
  if (given !== undefined) return { entry: given, ...state };
  if (current === undefined) throw await notRegisteredError(db, issuer);
  if (current.refused !== null) {
    throw new Error(
      `the row of ${quote(issuer)} is left out by every instance (${current.refused.rule}): ${current.refused.reason}; give the whole entry with --entry, or remove the row`,
    );
  }
  return { entry: entryFromFlags(parsed, current.entry), expected: current.entry, ...state };
}

/**
 * The record of `issuer` as read now, its row judged with its own JWKS host allowed too: the
 * update replaces it, so a row written under an allowance (`--allow-jwks-host`) is not refused
 * for it here; where the new entry's JWKS may be is checked on the new entry.
 */
async function currentRecord(db: CliDatabase, issuer: string, allowed: readonly string[]): Promise<IssuerRecord | undefined> {
  const find = async (hosts: readonly string[]) =>
    (await readIssuers(db, { jwksAllowedHosts: hosts, statementTimeout: db.statementTimeout })).find((record) => record.issuer === issuer);
  const record = await find(allowed);
  const host = record?.refused === null ? undefined : jwksHostOf(record?.entry);
  return host === undefined || allowed.includes(host) ? record : find([...allowed, host]);
}

/** The host an entry's `jwksUri` names, when it is a URL. */
function jwksHostOf(entry: unknown): string | undefined {
  const uri = typeof entry === 'object' && entry !== null ? (entry as { jwksUri?: unknown }).jwksUri : undefined;
  if (typeof uri !== 'string' || !URL.canParse(uri)) return undefined;
  const { hostname } = new URL(uri);
  return hostname === '' ? undefined : hostname;
}

/**
 * Rejects an `add` of an issuer the table holds already (`issuer_exists`), saying whether the entry
 * is the one registered (a repeat: nothing to do) or how it differs (use `issuers update`).
 */
async function refuseRegistered(db: CliDatabase, entry: IssuerEntry): Promise<void> {
  const current = await currentRecord(db, entry.issuer, []);
  if (current === undefined) return;
  const held = { before: current.entry, after: entry } as unknown as IssuerChange;
  const differs = describeChange(held);
  const how =
    differs === ''
      ? 'with this same entry: nothing to do'
      : `with another entry (${differs}): give the change to "paygate-auth issuers update" (--unchanged-since ${current.change})`;
  throw new RegisteredAlreadyError(`issuer ${quote(entry.issuer)} is registered already (change #${current.change}), ${how}`);
}

/** `issuers add` of an issuer registered already. */
class RegisteredAlreadyError extends Error {
  override readonly name = 'RegisteredAlreadyError';
  readonly code = 'issuer_exists' as const;
}

/** `add` or `update`: the entry checked by the gateway's verifier, then written. */
function checkedChange(action: 'add' | 'update', deps: IssuersDeps): CliCommand['run'] {
  return async (args, io) => {
    const parsed = parseOptions(args, action === 'add' ? CHECK_OPTIONS : UPDATE_OPTIONS, 0);
    unchangedSince(parsed);
    const bound = waitBound(parsed);
    const by = await actor(parsed, deps);
    const audience = stringValues(parsed, 'audience');
    const tokenSource = stringValue(parsed, 'token');
    if (tokenSource !== undefined)
      requiredValues(parsed, 'audience', 'https://payments.example', 'with --token (the gateway service the token is for)');
    const entryFile = stringValue(parsed, 'entry');
    // The whole entry when the options say it (a usage mistake is found before connecting).
    const given =
      entryFile !== undefined ? await entryFromFile(parsed, entryFile) : action === 'add' ? entryFromFlags(parsed, undefined) : undefined;
    const allowedHosts = allowedJwksHosts(parsed);
    const jwksTimeout = jwksTimeoutValue(parsed);
    if (given === undefined) requiredValue(parsed, 'issuer');
    else {
      checkRegistry([given], allowedHosts);
      checkIssuerLengths([given], () => (entryFile === undefined ? '--issuer' : `the issuer of --entry ${quote(entryFile)}`));
    }
    const token =
      tokenSource === undefined
        ? undefined
        : await readToken(
            tokenSource === '-' ? '-' : undefined,
            tokenSource === '-' ? undefined : tokenSource,
            deps.readStdin ?? readProcessStdin,
            false,
            '--token',
          );
    const report = reportTo(parsed, io);
    return changeDatabase(parsed, io, async (db) => {
      // Written only if nobody changed the issuer since the state it was made from.
      const { entry, ...from } = action === 'add' ? { entry: given as IssuerEntry } : await planUpdate(db, parsed, given);
      // Registered already: said before the JWKS is downloaded, with how the entries differ.
      if (action === 'add') await refuseRegistered(db, entry);
      await checkCandidate({
        entry,
        token,
        audience,
        force: parsed.values.force === true,
        allowedHosts,
        fetch: deps.fetch,
        now: (deps.now ?? Date.now)(),
        jwksTimeout,
        write: report,
      });
      const options = { by, jwksAllowedHosts: allowedHosts, statementTimeout: db.statementTimeout };
      const change = await asUsage(() =>
        action === 'add' ? addIssuer(db, entry, options) : updateIssuer(db, entry, { ...options, ...from }),
      );
      return changed(db, change, parsed, io, bound);
    });
  };
}

/**
 * The refusal of a second `remove` of `issuer`: when its last change removed it, that change (so a
 * repeat reads as done already, not as a mistyped issuer); else `undefined`.
 */
async function removedAlready(db: CliDatabase, issuer: string): Promise<NotRegisteredError | undefined> {
  const last = (await readIssuerChanges(db, { issuer, statementTimeout: db.statementTimeout })).at(-1);
  if (last?.action !== 'remove') return undefined;
  return new NotRegisteredError(
    `issuer ${quote(issuer)} is not registered: it was removed already, by change #${last.id} (${time(last.at)}, ${author(last)}); nothing was changed`,
  );
}

async function runRemove(args: readonly string[], io: CliIo, deps: IssuersDeps): Promise<number> {
  const parsed = parseOptions(args, { issuer: STRING, ...CHANGE_OPTIONS }, 1);
  const issuer = parsed.positionals[0] ?? requiredValue(parsed, 'issuer');
  if (parsed.positionals[0] !== undefined && parsed.values.issuer !== undefined) throw new UsageError('give the issuer once');
  const by = await actor(parsed, deps);
  const bound = waitBound(parsed);
  return changeDatabase(parsed, io, async (db) => {
    const change = await asUsage(() => removeIssuer(db, issuer, { by, statementTimeout: db.statementTimeout })).catch(
      async (error: unknown) => {
        if (!(error instanceof IssuerChangeError && error.code === 'issuer_not_found')) throw error;
        throw (await removedAlready(db, issuer)) ?? (await notRegisteredError(db, issuer));
      },
    );
    return changed(db, change, parsed, io, bound);
  });
}

async function runList(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseOptions(args, { ...DATABASE_OPTIONS, json: FLAG, 'allow-jwks-host': STRINGS }, 0);
  const jwksAllowedHosts = allowedJwksHosts(parsed);
  // The change id first: the rows read after it are as new as it, or newer (refused, never lost).
  const { last, records } = await onDatabase(parsed, io, async (db) => ({
    last: await readLastIssuerChange(db, { statementTimeout: db.statementTimeout }),
    records: await readIssuers(db, { jwksAllowedHosts, statementTimeout: db.statementTimeout }),
  }));
  if (parsed.values.json === true) io.stdout(`${oneLineJson(records)}\n`);
  else if (records.length === 0) io.stdout('No issuer is registered in the database.\n');
  else {
    io.stdout(`The registry as of change #${last} (an update or import made from this list: --unchanged-since ${last}):\n`);
    for (const record of records) io.stdout(recordLine(record));
    const refused = records.filter((record) => record.refused !== null).length;
    if (refused > 0) {
      io.stdout(
        `${refused} row(s) left out by every instance (✗): their issuers are refused as unknown until each row is fixed ("issuers update") or removed ("issuers remove <key>").\n`,
      );
    }
  }
  return EXIT.ok;
}

/** Changes `show` prints under the entry. */
const SHOWN_CHANGES = 10;

async function runShow(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseOptions(args, { issuer: STRING, ...DATABASE_OPTIONS, json: FLAG }, 1);
  const issuer = parsed.positionals[0] ?? requiredValue(parsed, 'issuer');
  const { records, changes } = await onDatabase(parsed, io, async (db) => ({
    records: await readIssuers(db, { statementTimeout: db.statementTimeout }),
    changes: await readIssuerChanges(db, { issuer, statementTimeout: db.statementTimeout }),
  }));
  const record = records.find((item) => item.issuer === issuer);
  const issuers = records.map((item) => item.issuer);
  const last = changes.slice(-SHOWN_CHANGES);
  if (parsed.values.json === true) {
    io.stdout(`${oneLineJson({ record: record ?? null, changes: last })}\n`);
    return record === undefined ? EXIT.failed : EXIT.ok;
  }
  if (record === undefined) {
    io.stderr(`paygate-auth issuers show: issuer ${quote(issuer)} is not registered; ${notRegisteredHint(issuer, issuers)}.\n`);
  } else {
    io.stdout(recordLine(record));
    io.stdout(`  entry: ${oneLineJson(record.entry)}\n`);
  }
  if (last.length > 0) io.stdout(`Last ${last.length} of ${changes.length} change(s):\n${last.map(changeLine).join('')}`);
  return record === undefined ? EXIT.failed : EXIT.ok;
}

async function runHistory(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseOptions(args, { ...DATABASE_OPTIONS, json: FLAG }, 1);
  const issuer = parsed.positionals[0];
  const changes = await onDatabase(parsed, io, (db) =>
    readIssuerChanges(
      db,
      issuer === undefined ? { statementTimeout: db.statementTimeout } : { issuer, statementTimeout: db.statementTimeout },
    ),
  );
  if (parsed.values.json === true) io.stdout(`${oneLineJson(changes)}\n`);
  else if (changes.length === 0) io.stdout('No change is recorded.\n');
  else for (const change of changes) io.stdout(changeLine(change));
  return EXIT.ok;
}

async function runImport(args: readonly string[], io: CliIo, deps: IssuersDeps): Promise<number> {
  const parsed = parseOptions(args, IMPORT_OPTIONS, 1);
  const file = parsed.positionals[0];
  if (file === undefined) throw new UsageError('give the file of entries: paygate-auth issuers import <file.json>');
  const given = unchangedSince(parsed);
  const bound = waitBound(parsed);
  const entries = await readEntries(file, 'the file of entries');
  const jwksAllowedHosts = allowedJwksHosts(parsed);
  checkRegistry(entries, jwksAllowedHosts);
  checkIssuerLengths(entries, (index) => `entries[${index}].issuer of ${quote(file)}`);
  const by = await actor(parsed, deps);
  return changeDatabase(parsed, io, async (db) => {
    // Made from the registry as of --unchanged-since, else as it is now.
    const since = given ?? (await readLastIssuerChange(db, { statementTimeout: db.statementTimeout }));
    const report = await asUsage(() =>
      importIssuers(db, entries, { by, jwksAllowedHosts, unchangedSince: since, statementTimeout: db.statementTimeout }),
    );
    if (parsed.values.json === true) io.stdout(`${oneLineJson(report)}\n`);
    else {
      for (const change of report.changes) io.stdout(changeLine(change));
      const count = (list: readonly string[], what: string) => `${list.length} ${what}`;
      io.stdout(
        `Imported ${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}: ${count(report.added, 'added')}, ${count(report.updated, 'updated')}, ${count(report.unchanged, 'unchanged')}.\n`,
      );
    }
    const last = report.changes.at(-1);
    return waitIfAsked(db, bound, last === undefined ? {} : { registryChange: last.id }, reportTo(parsed, io));
  });
}

/** The `issuers` commands, reaching out through `deps`, in the order `--help` lists them. */
export function createIssuersCommands(deps: IssuersDeps = {}): readonly CliCommand[] {
  return [
    {
      name: 'issuers add',
      summary: 'check an issuer and its JWKS with the verifier, then register it (PostgreSQL)',
      help: usage(
        'add (--entry <file.json> | --issuer <iss> --jwks-uri <url> --product <name> …) [options]',
        `Registers an issuer in the database after checking it, so every gateway instance following the
database accepts its tokens within a second. An issuer registered already is refused (update it).

${ENTRY_HELP}

${CHECK_HELP}
${COMMON_HELP}

Exit codes: 0 added, 1 refused (the check, or registered already), the database failed, or an
instance had not applied it within --wait-timeout, 2 usage.`,
      ),
      run: checkedChange('add', deps),
    },
    {
      name: 'issuers update',
      summary: "check and change a registered issuer's entry (PostgreSQL)",
      help: usage(
        'update (--entry <file.json> | --issuer <iss> [field options]) [options]',
        `Replaces a registered issuer's entry, after the same check as "add". With --entry the file is the
whole new entry; with --issuer each field option given replaces that field of the entry registered
(the others stay). Either way it is refused (issuer_changed_meanwhile, nothing written) if someone
changed the issuer since the state it was made from: the row as this command reads it, or
--unchanged-since. Read it again and run it again. A new jwksUri drops the keys held from the old
one on every instance.

${ENTRY_HELP}

${CHECK_HELP}
  --unchanged-since <change>   the registry's change the new entry was made from, as "issuers
                               list" or "issuers show" prints it (change #N): refused if the
                               issuer changed after it
${COMMON_HELP}

Exit codes: 0 updated, 1 refused (the check, not registered, unchanged, or changed meanwhile),
the database failed, or an instance had not applied it within --wait-timeout, 2 usage.`,
      ),
      run: checkedChange('update', deps),
    },
    {
      name: 'issuers remove',
      summary: 'cut an issuer off on every instance (PostgreSQL)',
      help: usage(
        'remove <iss> | --issuer <iss> [--by <name>] [--json] [--database-url <url>]',
        `Removes the issuer: every instance following the database drops its keys and cached results and
refuses its tokens (unknown_issuer) within a second, verifications in flight included. Its JWKS
is not read.

${COMMON_HELP}

Exit codes: 0 removed, 1 not registered, the database failed, or an instance had not applied it
within --wait-timeout, 2 usage.`,
      ),
      run: (args, io) => runRemove(args, io, deps),
    },
    {
      name: 'issuers list',
      summary: 'the registered issuers: products, tenants, jwksUri, added when and by whom (PostgreSQL)',
      help: usage(
        'list [--allow-jwks-host <host>]… [--json] [--database-url <url>]',
        `Prints each registered issuer, by iss: its products, its tenants (or every tenant), its jwksUri,
when it was added and by whom (and last updated). A row every instance leaves out (an entry the
registry refuses, a key that is not its entry's issuer, an issuer two rows name) is marked ✗ with
the rule it breaks: its issuer is refused as unknown until the row is fixed or removed.
  --allow-jwks-host <host>     a JWKS host the instances allow although special-purpose
                               (repeatable; their jwksAllowedHosts), so its rows are not marked
  --json                       one JSON line: the records

Exit codes: 0 listed, 1 the database failed, 2 usage.`,
      ),
      run: (args, io) => runList(args, io),
    },
    {
      name: 'issuers show',
      summary: "one issuer's entry and its last changes (PostgreSQL)",
      help: usage(
        'show <iss> | --issuer <iss> [--json] [--database-url <url>]',
        `Prints the issuer's record and whole entry, then its last ${SHOWN_CHANGES} changes from the audit trail.
  --json                       one JSON line: { "record", "changes" }

Exit codes: 0 shown, 1 not registered (its changes are still printed) or the database failed, 2 usage.`,
      ),
      run: (args, io) => runShow(args, io),
    },
    {
      name: 'issuers import',
      summary: 'load a JSON file of registry entries into the database (PostgreSQL)',
      help: usage(
        'import <file.json> [--unchanged-since <change>] [--allow-jwks-host <host>]… [--by <name>] [--json] [--database-url <url>]',
        `Loads an array of registry entries (the IssuerRegistry configuration in code, as JSON) in one
transaction: new issuers are added, changed ones updated, equal ones left; none is removed. The
entries are checked by the registry's rules (a bad field is named and nothing is written; a
jwksUri naming a special-purpose address or name is refused); their JWKS are not downloaded (use
"add" or "update" for that check). If an issuer of the file changed since the registry the file
was made from (--unchanged-since, else the registry as this command reads it), nothing is written
(issuer_changed_meanwhile, naming it).
  --unchanged-since <change>   the registry's change the file was made from (change #N, as
                               "issuers list" prints it)
  --allow-jwks-host <host>     a JWKS host allowed although special-purpose (repeatable); every
                               instance must allow it too (jwksAllowedHosts)

${COMMON_HELP}

Exit codes: 0 imported, 1 changed meanwhile, the database failed, or an instance had not applied
it within --wait-timeout, 2 usage (the file, or an entry the registry refuses).`,
      ),
      run: (args, io) => runImport(args, io, deps),
    },
    {
      name: 'issuers history',
      summary: "the registry's audit trail: each change, before → after, when, by whom (PostgreSQL)",
      help: usage(
        'history [<iss>] [--json] [--database-url <url>]',
        `Prints every change of the registry (or of one issuer), in order: its number, time, action,
issuer, who made it (the operator's name the session gave, as --by does, and the database role,
kept by the database itself), then the entry added or removed, or each field changed as before → after.
  --json                       one JSON line: the changes

Exit codes: 0 printed, 1 the database failed, 2 usage.`,
      ),
      run: (args, io) => runHistory(args, io),
    },
  ];
}

/** `paygate-auth issuers …`. */
export const ISSUERS_COMMANDS: readonly CliCommand[] = createIssuersCommands();
