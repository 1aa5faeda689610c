/**
 * `paygate-auth keys status`: each issuer's keys as the gateway's verifiers met them (the key
 * history they share in PostgreSQL), with the key rules each broke. Every value read from the
 * database is quoted and escaped for one line.
 */
import type { KeyHistoryEntry } from '../index.js';
import { quote, quoteList } from '../internal/index.js';
import { readIssuers } from '../postgres/index.js';
import { isMissingTable, readKeyHistory } from '../postgres/internal.js';
import { type CliCommand, UsageError } from './command.js';
import { parseOptions, stringValue } from './cli-options.js';
import { type CliDatabase, DATABASE_HELP, DATABASE_OPTIONS, databaseTarget, withDatabase } from './database-url.js';
import { describeDuration, describeTime, isoSeconds, readNow } from './doctor-time.js';
import { notRegisteredHint } from './registered-issuer.js';
import { EXIT } from './run-cli.js';

/** A time in milliseconds, as a date and its distance from `now` (ms). */
function at(ms: number, now: number): string {
  return describeTime(ms / 1000, now / 1000, false);
}

/** {@link at}, or `none` for no time. */
function when(ms: number | null, now: number, none: string): string {
  return ms === null ? none : at(ms, now);
}

function describeKey(key: KeyHistoryEntry, now: number): string[] {
  return [
    `  kid ${quote(key.kid)}`,
    `    first seen    ${isoSeconds(key.firstSeen / 1000)}, age ${describeDuration((now - key.firstSeen) / 1000)}`,
    `    published     ${key.publishedAfter === null ? 'unknown (listed in the first download seen)' : `after ${at(key.publishedAfter, now)}`}`,
    `    first used    ${when(key.firstUsed, now, 'never')}`,
    `    last used     ${when(key.lastUsed, now, 'never')}`,
    `    latest expiry ${key.latestExpiry === null ? 'none (no token verified)' : describeTime(key.latestExpiry, now / 1000, false)}`,
    `    withdrawn     ${when(key.withdrawn, now, 'no (still published)')}`,
    `    breaches      ${quoteList(key.breaches)}`,
  ];
}

/**
 * Why nothing is recorded for `issuer`, when the registry table (if migrated) does not hold it:
 * `, which is not registered; the registry has "…" (a trailing slash): give that`. So a mistyped
 * issuer is never read as one whose keys broke no rule.
 */
async function unregistered(db: CliDatabase, issuer: string): Promise<string> {
  let registered: string[];
  try {
    registered = (await readIssuers(db, { statementTimeout: db.statementTimeout })).map((record) => record.issuer);
  } catch (error) {
    if (isMissingTable(error)) return '';
    throw error;
  }
  return registered.includes(issuer) ? '' : `, which is not registered; ${notRegisteredHint(issuer, registered)}`;
}

function describeHistory(keys: readonly KeyHistoryEntry[], issuer: string | undefined, now: number, why: string): string[] {
  if (keys.length === 0) return [`No key history recorded${issuer === undefined ? '' : ` for issuer ${quote(issuer)}${why}`}.`];
  const lines: string[] = [];
  let current: string | undefined;
  for (const key of keys) {
    if (key.issuer !== current) {
      current = key.issuer;
      lines.push(`Issuer ${quote(key.issuer)}`);
    }
    lines.push(...describeKey(key, now));
  }
  const breaches = keys.reduce((total, key) => total + key.breaches.length, 0);
  lines.push(`${keys.length} key${keys.length === 1 ? '' : 's'}, ${breaches} breach${breaches === 1 ? '' : 'es'}.`);
  return lines;
}

export const keysStatusCommand: CliCommand = {
  name: 'keys status',
  summary: "each issuer's keys: first seen, first and last used, age, breaches (PostgreSQL)",
  help: `Usage: paygate-auth keys status [issuer] [--json] [--now <date|seconds>] [--database-url <url>]

Prints, per issuer and kid, what the gateway's verifiers recorded in the shared key history
(postgresKeyHistory): when the key was first seen in the issuer's JWKS and its age, when it was
first and last used, the latest expiry of the tokens it verified, when it was withdrawn, and
the key rules it broke: key_used_early, key_rotation_overdue, key_withdrawn.

Arguments:
  issuer                 only this issuer's keys

Options:
  --json                 one JSON object: { "keys": [...] }, times in milliseconds since the
                         epoch (latestExpiry in seconds)
  --now <date|seconds>   ages as of this moment (ISO 8601 or seconds since the epoch)

${DATABASE_HELP}

Exit codes: 0 listed, 1 the database failed, 2 usage.
`,
  async run(args, io) {
    const parsed = parseOptions(args, { json: { type: 'boolean' }, now: { type: 'string' }, ...DATABASE_OPTIONS }, 1);
    const now = readNow(stringValue(parsed, 'now'), Date.now);
    const [issuer] = parsed.positionals;
    if (issuer === '')
      throw new UsageError('the issuer must not be empty, got "": give an issuer (its iss), or none for every issuer\'s keys');
    const { keys, why } = await withDatabase(databaseTarget(parsed, io.env), async (db) => {
      const read = await readKeyHistory(
        db,
        issuer === undefined ? { statementTimeout: db.statementTimeout } : { issuer, statementTimeout: db.statementTimeout },
      );
      return { keys: read, why: issuer === undefined || read.length > 0 ? '' : await unregistered(db, issuer) };
    });
    if (parsed.values.json === true) {
      io.stdout(`${JSON.stringify({ keys }, null, 2)}\n`);
      return EXIT.ok;
    }
    io.stdout(`${describeHistory(keys, issuer, now, why).join('\n')}\n`);
    return EXIT.ok;
  },
};
