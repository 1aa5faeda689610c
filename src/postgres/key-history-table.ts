/**
 * The key history table: one row per issuer and `kid`, merged from every verifier that flushes
 * into it (earliest first sighting and first use, latest use and expiry, earliest withdrawal, the
 * union of the rules broken), and read back whole or for one issuer. Every statement is bounded.
 */
import type { KeyBreach, KeyHistoryEntry } from '../index.js';
import { capHint, checkKeyHistoryEntry, quote, rejectUnknownOptions } from '../internal/index.js';
import { TABLES } from './schema.js';
import { type SqlClient, type SqlRow, checkClient, checkStatementTimeout, numberColumn, queryWithin } from './sql-client.js';

/** The members of {@link ReadKeyHistoryOptions}: any other is refused, naming the nearest. */
const READ_KEY_HISTORY_OPTION_NAMES: ReadonlySet<string> = new Set(['issuer', 'statementTimeout']);

/** Options of {@link readKeyHistory}. */
export interface ReadKeyHistoryOptions {
  /** Only this issuer's keys. @default every issuer */
  readonly issuer?: string;
  /**
   * Milliseconds the read may take, the wait for a pooled connection included. 10 to 600 000.
   * @default 5000
   */
  readonly statementTimeout?: number;
}

const COLUMNS = 'issuer, kid, first_seen, published_after, first_used, last_used, latest_expiry, withdrawn, breaches';

/**
 * One statement: the entries as arrays of columns (`unnest`), each inserted or merged into its
 * row, in key order (so that instances flushing at once lock rows in one order, never
 * deadlocking). Breaches travel as one comma-separated text per entry (the codes hold no comma)
 * and are united in the order found.
 */
const UPSERT = `INSERT INTO ${TABLES.keyHistory} AS kept (${COLUMNS})
  SELECT issuer, kid, first_seen, published_after, first_used, last_used, latest_expiry, withdrawn,
         coalesce(string_to_array(nullif(breaches, ''), ','), '{}')
  FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::text[])
    AS given(issuer, kid, first_seen, published_after, first_used, last_used, latest_expiry, withdrawn, breaches)
  ORDER BY issuer, kid
  ON CONFLICT (issuer, kid) DO UPDATE SET
    published_after = CASE WHEN excluded.first_seen < kept.first_seen THEN excluded.published_after ELSE kept.published_after END,
    first_seen = least(kept.first_seen, excluded.first_seen),
    first_used = least(kept.first_used, excluded.first_used),
    last_used = greatest(kept.last_used, excluded.last_used),
    latest_expiry = greatest(kept.latest_expiry, excluded.latest_expiry),
    withdrawn = least(kept.withdrawn, excluded.withdrawn),
    breaches = ARRAY(
      SELECT breach FROM unnest(kept.breaches || excluded.breaches) WITH ORDINALITY AS found(breach, position)
      GROUP BY breach ORDER BY min(position)
    )`;

/** Merges `entries` into the table in one statement (nothing to do for none). */
export async function writeKeyHistory(db: SqlClient, entries: readonly KeyHistoryEntry[], timeout: number): Promise<void> {
  if (entries.length === 0) return;
  const column = <T>(pick: (entry: KeyHistoryEntry) => T): T[] => entries.map(pick);
  await queryWithin(db, timeout, UPSERT, [
    column((entry) => entry.issuer),
    column((entry) => entry.kid),
    column((entry) => entry.firstSeen),
    column((entry) => entry.publishedAfter),
    column((entry) => entry.firstUsed),
    column((entry) => entry.lastUsed),
    column((entry) => entry.latestExpiry),
    column((entry) => entry.withdrawn),
    column((entry) => entry.breaches.join(',')),
  ]);
}

function nullableNumber(value: unknown): number | null {
  return value === null || value === undefined ? null : numberColumn(value);
}

function toEntry(row: SqlRow): KeyHistoryEntry {
  return Object.freeze({
    issuer: String(row.issuer),
    kid: String(row.kid),
    firstSeen: numberColumn(row.first_seen),
    publishedAfter: nullableNumber(row.published_after),
    firstUsed: nullableNumber(row.first_used),
    lastUsed: nullableNumber(row.last_used),
    latestExpiry: nullableNumber(row.latest_expiry),
    withdrawn: nullableNumber(row.withdrawn),
    breaches: Object.freeze([...(Array.isArray(row.breaches) ? (row.breaches as KeyBreach[]) : [])]),
  });
}

/** A row of the key history table the verifier's rules refuse: left out, and why. */
export interface RefusedKeyRow {
  /** The row's issuer and `kid`, as stored: hostile text. */
  readonly issuer: string;
  readonly kid: string;
  /** The rule it breaks, naming the field, on one line (cut and escaped). */
  readonly reason: string;
}

/**
 * The rows of the key history table, each checked on its own with the verifier's own rules
 * (`checkKeyHistoryEntry`): the good ones as entries, the others left out and named.
 */
export async function readKeyHistoryRows(
  db: SqlClient,
  issuer: string | null,
  timeout: number,
): Promise<{ entries: KeyHistoryEntry[]; refused: RefusedKeyRow[] }> {
  const { rows } = await queryWithin(
    db,
    timeout,
    `SELECT ${COLUMNS} FROM ${TABLES.keyHistory} WHERE $1::text IS NULL OR issuer = $1 ORDER BY issuer, first_seen, kid`,
    [issuer],
  );
  const entries: KeyHistoryEntry[] = [];
  const refused: RefusedKeyRow[] = [];
  for (const row of rows) {
    const entry = toEntry(row);
    try {
      entries.push(checkKeyHistoryEntry(`row (${quote(entry.issuer)}, ${quote(entry.kid)})`, entry));
    } catch (error) {
      refused.push({ issuer: entry.issuer, kid: entry.kid, reason: capHint(error instanceof Error ? error.message : String(error)) });
    }
  }
  return { entries, refused };
}

/**
 * The key history the verifiers attached with `postgresKeyHistory` have written: per issuer and
 * `kid`, when any of them first saw it and first used it, when one last used it, and the key rules
 * it broke. By issuer, then first sighting. A row the verifier's rules refuse (a negative time,
 * written by hand) is left out.
 * @param db A `pg.Pool`, a `pg.Client` or PGlite, migrated (`migrate(db, { only: 'keys' })`).
 * @throws {TypeError} (rejects) for a bad option.
 * @example
 * ```ts
 * for (const key of await readKeyHistory(pool, { issuer: 'https://auth.acme.example' })) {
 *   if (key.breaches.length > 0) console.log(key.kid, key.breaches);
 * }
 * ```
 */
export async function readKeyHistory(db: SqlClient, options: ReadKeyHistoryOptions = {}): Promise<KeyHistoryEntry[]> {
  rejectUnknownOptions('readKeyHistory', options, READ_KEY_HISTORY_OPTION_NAMES);
  checkClient(db, 'readKeyHistory');
  const { issuer } = options;
  if (issuer !== undefined && (typeof issuer !== 'string' || issuer === '')) {
    throw new TypeError('readKeyHistory: issuer must be a non-empty string');
  }
  const timeout = checkStatementTimeout(options.statementTimeout, 'readKeyHistory');
  return (await readKeyHistoryRows(db, issuer ?? null, timeout)).entries;
}
