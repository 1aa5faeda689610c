/**
 * The key history table: one row per issuer and `kid`, merged from every verifier that flushes
 * into it (earliest first sighting and first use, latest use and expiry, earliest withdrawal, the
 * union of the rules broken), and read back whole, for one issuer, or as the rows changed since a
 * change id (each row carries the id of its last change, drawn by a trigger). Its retention: a
 * withdrawn key is deleted once past the verifiers' retention, an issuer keeps at most
 * `WITHDRAWN_KEPT` withdrawn keys, and the keys of an issuer no verifier trusts are deleted once
 * unused for the retention. Every statement is bounded.
 */
import type { KeyBreach, KeyHistoryEntry } from '../index.js';
import {
  MAX_KID_LENGTH,
  WITHDRAWN_KEPT,
  capHint,
  checkKeyHistoryEntry,
  describeValue,
  quote,
  rejectUnknownOptions,
  optionNames,
} from '../internal/index.js';
import { TABLES } from './schema.js';
import { MAX_CONTROL_TEXT } from './schema-names.js';
import { type SqlClient, type SqlRow, checkClient, checkStatementTimeout, numberColumn, queryWithin } from './sql-client.js';

/** The members of {@link ReadKeyHistoryOptions}: any other is refused, naming the nearest. */
const READ_KEY_HISTORY_OPTION_NAMES = optionNames<ReadKeyHistoryOptions>({ issuer: true, statementTimeout: true });

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

const COLUMNS = 'issuer, kid, first_seen, published_after, first_used, last_used, latest_expiry, withdrawn, breaches, thumbprint';

/**
 * {@link COLUMNS} as read: a `kid` cut one character past the longest a token may name, and an
 * issuer one past {@link MAX_CONTROL_TEXT}, so that a row written by hand with a huge one costs a
 * bounded read, and is still refused for its length.
 */
const READ_COLUMNS = COLUMNS.replace('issuer', `left(issuer, ${MAX_CONTROL_TEXT + 1}) AS issuer`)
  .replace('kid', `left(kid, ${MAX_KID_LENGTH + 1}) AS kid`)
  .replace('thumbprint', 'left(thumbprint, 44) AS thumbprint');

/**
 * Another key under the row's kid (both thumbprints known, and different): the entry's, first
 * seen later, replaces the row whole (the `WHERE` keeps the row when the entry's key is the older).
 */
const NEWER = 'coalesce(kept.thumbprint <> excluded.thumbprint, false)';

/** `column` merged by `merged`, or the entry's when it is {@link NEWER}. */
const set = (column: string, merged: string): string => `${column} = CASE WHEN ${NEWER} THEN excluded.${column} ELSE ${merged} END`;

/**
 * One statement: the entries as one JSON array (`jsonb_to_recordset`), each inserted or merged
 * into its row, in key order (so that instances flushing at once lock rows in one order, never
 * deadlocking). The breaches are united in the order found. An entry of another key under the
 * kid (another thumbprint) replaces the row when first seen later, and is left out otherwise.
 * One text parameter, not ten arrays: `pg` builds an array parameter's text element by element,
 * the largest part of a flush's garbage.
 */
const UPSERT = `INSERT INTO ${TABLES.keyHistory} AS kept (${COLUMNS})
  SELECT issuer, kid, first_seen, published_after, first_used, last_used, latest_expiry, withdrawn, coalesce(breaches, '{}'), thumbprint
  FROM jsonb_to_recordset($1::jsonb)
    AS given(issuer text, kid text, first_seen bigint, published_after bigint, first_used bigint, last_used bigint,
             latest_expiry bigint, withdrawn bigint, breaches text[], thumbprint text)
  ORDER BY issuer, kid
  ON CONFLICT (issuer, kid) DO UPDATE SET
    ${set('published_after', 'CASE WHEN excluded.first_seen < kept.first_seen THEN excluded.published_after ELSE kept.published_after END')},
    ${set('first_seen', 'least(kept.first_seen, excluded.first_seen)')},
    ${set('first_used', 'least(kept.first_used, excluded.first_used)')},
    ${set('last_used', 'greatest(kept.last_used, excluded.last_used)')},
    ${set('latest_expiry', 'greatest(kept.latest_expiry, excluded.latest_expiry)')},
    ${set('withdrawn', 'least(kept.withdrawn, excluded.withdrawn)')},
    ${set(
      'breaches',
      `ARRAY(
      SELECT breach FROM unnest(kept.breaches || excluded.breaches) WITH ORDINALITY AS found(breach, position)
      GROUP BY breach ORDER BY min(position)
    )`,
    )},
    thumbprint = coalesce(excluded.thumbprint, kept.thumbprint)
  WHERE NOT (${NEWER} AND excluded.first_seen <= kept.first_seen)`;

/** The members of an entry in the statement's JSON: the table's column names. */
function jsonEntry(entry: KeyHistoryEntry): Record<string, unknown> {
  return {
    issuer: entry.issuer,
    kid: entry.kid,
    first_seen: entry.firstSeen,
    published_after: entry.publishedAfter,
    first_used: entry.firstUsed,
    last_used: entry.lastUsed,
    latest_expiry: entry.latestExpiry,
    withdrawn: entry.withdrawn,
    breaches: entry.breaches,
    thumbprint: entry.thumbprint ?? null,
  };
}

/** Merges `entries` into the table in one statement (nothing to do for none). */
export async function writeKeyHistory(db: SqlClient, entries: readonly KeyHistoryEntry[], timeout: number): Promise<void> {
  if (entries.length === 0) return;
  await queryWithin(db, timeout, UPSERT, [JSON.stringify(entries.map(jsonEntry))]);
}

function nullableNumber(value: unknown): number | null {
  return value === null || value === undefined ? null : numberColumn(value);
}

function toEntry(row: SqlRow): KeyHistoryEntry {
  return Object.freeze({
    issuer: String(row.issuer),
    kid: String(row.kid),
    thumbprint: row.thumbprint === null || row.thumbprint === undefined ? null : String(row.thumbprint),
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

/** Rows of the key history table, each checked on its own. */
export interface KeyHistoryRows {
  /** The rows the verifier's rules accept, as entries. */
  readonly entries: KeyHistoryEntry[];
  /** The others, left out and named. */
  readonly refused: RefusedKeyRow[];
}

/** The rows changed since a change id, and the id of the last change among them. */
export interface ChangedKeyHistoryRows extends KeyHistoryRows {
  /** The highest change id read (the id asked for when no row changed since). */
  readonly through: number;
}

/**
 * The rows of the key history table, each checked on its own with the verifier's own rules
 * (`checkKeyHistoryEntry`): the good ones as entries, the others left out and named.
 */
export async function readKeyHistoryRows(db: SqlClient, issuer: string | null, timeout: number): Promise<KeyHistoryRows> {
  const { rows } = await queryWithin(
    db,
    timeout,
    `SELECT ${READ_COLUMNS} FROM ${TABLES.keyHistory} WHERE $1::text IS NULL OR issuer = $1 ORDER BY issuer, first_seen, kid`,
    [issuer],
  );
  return checkRows(rows);
}

/**
 * The rows changed after change id `after` (every row for `-1`), through the index on `changed`:
 * ids are drawn under one lock held until commit, so they commit in their order and a row
 * changed later always has a higher id than those read.
 */
export async function readChangedKeyHistory(db: SqlClient, after: number, timeout: number): Promise<ChangedKeyHistoryRows> {
  const { rows } = await queryWithin(
    db,
    timeout,
    `SELECT ${READ_COLUMNS}, changed FROM ${TABLES.keyHistory} WHERE changed > $1 ORDER BY changed`,
    [after],
  );
  let through = Math.max(after, 0);
  for (const row of rows) through = Math.max(through, numberColumn(row.changed));
  return { ...checkRows(rows), through };
}

function checkRows(rows: readonly SqlRow[]): KeyHistoryRows {
  const entries: KeyHistoryEntry[] = [];
  const refused: RefusedKeyRow[] = [];
  for (const row of rows) {
    const entry = toEntry(row);
    const where = `row (${quote(entry.issuer)}, ${quote(entry.kid)})`;
    try {
      // Longer than an operator control may name (so such an issuer could not be suspended
      // either): a row written by hand, say, that would cost memory without bound.
      if (entry.issuer.length > MAX_CONTROL_TEXT) {
        throw new TypeError(
          `${where}.issuer must be at most ${MAX_CONTROL_TEXT} characters, got more than ${MAX_CONTROL_TEXT} characters (read cut at ${MAX_CONTROL_TEXT + 1}): delete the row`,
        );
      }
      entries.push(checkKeyHistoryEntry(where, entry));
    } catch (error) {
      refused.push({ issuer: entry.issuer, kid: entry.kid, reason: capHint(error instanceof Error ? error.message : String(error)) });
    }
  }
  return { entries, refused };
}

/**
 * Applies the retention in one statement, each part through an index: deletes the keys withdrawn
 * before `withdrawnBefore` (ms) and, for each of `issuers` (those just written), the withdrawn
 * keys past the `WITHDRAWN_KEPT` latest withdrawn since (two disjoint sets of rows).
 */
export async function pruneKeyHistory(db: SqlClient, withdrawnBefore: number, issuers: readonly string[], timeout: number): Promise<void> {
  await queryWithin(
    db,
    timeout,
    `WITH expired AS (DELETE FROM ${TABLES.keyHistory} WHERE withdrawn < $1)
     DELETE FROM ${TABLES.keyHistory} kept USING (
       SELECT issuer, kid, row_number() OVER (PARTITION BY issuer ORDER BY withdrawn DESC, kid) AS rank
         FROM ${TABLES.keyHistory} WHERE issuer = ANY($2::text[]) AND withdrawn >= $1
     ) AS old
     WHERE kept.issuer = old.issuer AND kept.kid = old.kid AND old.rank > $3`,
    [withdrawnBefore, issuers, WITHDRAWN_KEPT],
  );
}

/**
 * Deletes the keys of every issuer not in `trusted` whose every time (first seen, last used,
 * withdrawn) is before `unusedBefore` (ms): the rows of removed issuers, and rows written by
 * hand for issuers no verifier trusts. One statement over the whole table: run it seldom.
 */
export async function sweepKeyHistory(db: SqlClient, trusted: readonly string[], unusedBefore: number, timeout: number): Promise<void> {
  await queryWithin(
    db,
    timeout,
    `DELETE FROM ${TABLES.keyHistory}
      WHERE NOT (issuer = ANY($1::text[]))
        AND greatest(first_seen, coalesce(last_used, 0), coalesce(withdrawn, 0)) < $2`,
    [trusted, unusedBefore],
  );
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
    throw new TypeError(
      `readKeyHistory: issuer must be a non-empty string (an iss), or left out for every issuer; got ${describeValue(issuer)}`,
    );
  }
  const timeout = checkStatementTimeout(options.statementTimeout, 'readKeyHistory');
  return (await readKeyHistoryRows(db, issuer ?? null, timeout)).entries;
}
