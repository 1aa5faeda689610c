/**
 * The issuer registry's tables: one row per trusted issuer (its entry as given, when and by whom
 * it was added and last changed), and the audit trail, one row per change with the entry before
 * and after. The database writes the audit row and sends the notification itself (a trigger on
 * the registry table), whoever writes; these functions only write the registry table, naming
 * their operator to the trigger (`paygate.actor`). Writes queue on one advisory lock, so change
 * ids become visible in their order.
 */
import { type IssuerEntry, IssuerRegistry } from '../index.js';
import { checkAllowedHosts, deepFreeze, describeValue, quote, rejectUnknownOptions, optionNames } from '../internal/index.js';
import { storageFailure } from './database-errors.js';
import { type RefusedRow, type RegistryRow, checkRegistryRows, issuerTooLong } from './registry-rows.js';
import { ACTOR_SETTING, MAX_ACTOR, REGISTRY_LOCK, TABLES } from './schema.js';
import {
  type SqlClient,
  type SqlRow,
  checkClient,
  checkStatementTimeout,
  inTransaction,
  jsonColumn,
  numberColumn,
  queryWithin,
} from './sql-client.js';

/** The members of {@link ReadIssuerChangesOptions}: any other is refused, naming the nearest. */
const READ_ISSUER_CHANGES_OPTION_NAMES = optionNames<ReadIssuerChangesOptions>({
  issuer: true,
  statementTimeout: true,
  jwksAllowedHosts: true,
});

/** The members of {@link ReadIssuersOptions}: any other is refused, naming the nearest. */
const READ_ISSUERS_OPTION_NAMES = optionNames<ReadIssuersOptions>({ statementTimeout: true, jwksAllowedHosts: true });

/** The members of {@link ImportIssuersOptions}: any other is refused, naming the nearest. */
const IMPORT_ISSUERS_OPTION_NAMES = optionNames<ImportIssuersOptions>({
  by: true,
  statementTimeout: true,
  jwksAllowedHosts: true,
  unchangedSince: true,
});

/** The members of {@link UpdateIssuerOptions}: any other is refused, naming the nearest. */
const UPDATE_ISSUER_OPTION_NAMES = optionNames<UpdateIssuerOptions>({
  expected: true,
  by: true,
  statementTimeout: true,
  jwksAllowedHosts: true,
  unchangedSince: true,
});

/** The members of {@link ChangeOptions}: any other is refused, naming the nearest. */
const CHANGE_OPTION_NAMES = optionNames<ChangeOptions>({ by: true, statementTimeout: true, jwksAllowedHosts: true });

/** A registered issuer as the table holds it. */
export interface IssuerRecord {
  /** The row's key (its `issuer` column): its entry's issuer, unless the row is refused for it. */
  readonly issuer: string;
  /**
   * The entry as it was given (frozen). For a row the registry refuses (see `refused`), whatever
   * JSON the row holds, unchecked.
   */
  readonly entry: IssuerEntry;
  /**
   * `null` when every instance applies the row; else the rule it breaks and why: it is left out
   * and its issuer refused as unknown (see `checkRegistryRows`).
   */
  readonly refused: Omit<RefusedRow, 'row'> | null;
  /** The id of the row's last change in the audit (`0` for none): the state this record is. */
  readonly change: number;
  /** When it was added (the database's clock). */
  readonly addedAt: Date;
  /** Who added it (`by` of the change). */
  readonly addedBy: string;
  /** When it was last added or updated. */
  readonly updatedAt: Date;
  /** Who last added or updated it. */
  readonly updatedBy: string;
}

/** One change of the registry, as the audit trail keeps it. */
export interface IssuerChange {
  /** Increasing with every change. */
  readonly id: number;
  readonly issuer: string;
  readonly action: 'add' | 'update' | 'remove';
  /** The entry before the change; `null` for `add`. */
  readonly before: IssuerEntry | null;
  /** The entry after the change; `null` for `remove`. */
  readonly after: IssuerEntry | null;
  /** When it was made (the database's clock). */
  readonly at: Date;
  /**
   * The operator's name, as the session that made it set it (`by` of these functions, or
   * `SET LOCAL paygate.actor = 'alice'`): what the writer says of itself. `null` when the session
   * set none.
   */
  readonly actor: string | null;
  /**
   * The database role that made it (`session_user`), kept by the database itself. `null` for the
   * changes recorded before the registry schema version 2.
   */
  readonly role: string | null;
}

/** Options of every change to the registry table. */
export interface ChangeOptions {
  /** Who makes the change, kept in the audit trail: 1 to 200 characters, no control characters. */
  readonly by: string;
  /**
   * Milliseconds each statement may take, the wait for a pooled connection included. 10 to 600 000.
   * @default 5000
   */
  readonly statementTimeout?: number | undefined;
  /**
   * Hosts an entry's `jwksUri` may name although they are special-purpose addresses or names, as
   * `new IssuerRegistry(entries, { jwksAllowedHosts })` takes them; every instance must allow them
   * too (`postgresRegistry(db, { jwksAllowedHosts })`, and the verifier's `jwksAllowedHosts`).
   * @default [] (none)
   */
  readonly jwksAllowedHosts?: readonly string[] | undefined;
}

/** The precondition of a change made from the registry as it was read. */
export interface UnchangedSinceOption {
  /**
   * The id of the registry's last change when the entries written were read (an
   * `IssuerRecord.change`, or `readLastIssuerChange()`): when an issuer written has a change
   * after it, nothing is written and the call is refused (`issuer_changed_meanwhile`), rather than
   * undo a change made since. Give it whenever the entries were made from what the table held.
   * @default undefined (written whatever happened since)
   */
  readonly unchangedSince?: number | undefined;
}

/** Options of {@link importIssuers}. */
export interface ImportIssuersOptions extends ChangeOptions, UnchangedSinceOption {}

/** Options of {@link updateIssuer}. */
export interface UpdateIssuerOptions extends ChangeOptions, UnchangedSinceOption {
  /**
   * The entry the new one was made from (read a moment before): when the table no longer holds
   * an entry with its rules, the update is refused (`issuer_changed_meanwhile`) rather than undo
   * a change made since. Give it whenever the new entry is the old one edited.
   * @default undefined (the entry is replaced whatever it holds now)
   */
  readonly expected?: IssuerEntry | undefined;
}

/** Options of the reads of the registry table. */
export interface ReadIssuersOptions {
  /**
   * Milliseconds the read may take, the wait for a pooled connection included. 10 to 600 000.
   * @default 5000
   */
  readonly statementTimeout?: number | undefined;
  /**
   * Hosts an entry's `jwksUri` may name although special-purpose, as the instances allow them
   * (`postgresRegistry(db, { jwksAllowedHosts })`): a row naming another such host is marked refused.
   * @default [] (none)
   */
  readonly jwksAllowedHosts?: readonly string[] | undefined;
}

/** Options of {@link readIssuerChanges}. */
export interface ReadIssuerChangesOptions extends ReadIssuersOptions {
  /**
   * Only the changes of this issuer (`iss`, exact).
   * @default every issuer's
   */
  readonly issuer?: string | undefined;
}

/** Why a change was refused: the stable `code`, and the issuer it names. */
export type IssuerChangeErrorCode = 'issuer_exists' | 'issuer_not_found' | 'issuer_unchanged' | 'issuer_changed_meanwhile';

/** A change refused by the table's state (nothing was written). */
export class IssuerChangeError extends Error {
  override readonly name = 'IssuerChangeError';
  readonly code: IssuerChangeErrorCode;
  /** The issuer (`iss`) the change named. */
  readonly issuer: string;

  constructor(code: IssuerChangeErrorCode, issuer: string) {
    const why = {
      issuer_exists: 'is registered already (update it instead)',
      issuer_not_found: 'is not registered',
      issuer_unchanged: 'is registered with this entry already',
      issuer_changed_meanwhile: 'was changed by someone else since it was read (read it again)',
    }[code];
    super(`issuer ${quote(issuer)} ${why}`);
    this.code = code;
    this.issuer = issuer;
  }
}

/** What {@link importIssuers} did, each list by `iss` in the order given. */
export interface ImportReport {
  readonly added: string[];
  readonly updated: string[];
  /** Registered with an equivalent entry already: left as they were. */
  readonly unchanged: string[];
  /** The changes written, in order. */
  readonly changes: IssuerChange[];
}

/** `by` as found: its length when it is too long, otherwise the value, escaped for one line. */
function describeActor(by: unknown): string {
  if (typeof by !== 'string') return describeValue(by);
  return by.length > MAX_ACTOR ? `${by.length} characters` : quote(by);
}

function checkActor(where: string, options: ChangeOptions): { by: string; timeout: number } {
  const by = (options as Partial<ChangeOptions> | undefined)?.by;
  if (typeof by !== 'string' || by === '' || by.length > MAX_ACTOR || /[\u0000-\u001f\u007f]/.test(by)) {
    throw new TypeError(
      `${where}: by must be 1 to ${MAX_ACTOR} characters without control characters (the operator making the change), got ${describeActor(by)}`,
    );
  }
  return { by, timeout: checkStatementTimeout(options.statementTimeout, where) };
}

function checkUnchangedSince(where: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`${where}: unchangedSince must be a change id (a whole number from 0), got ${describeValue(value)}`);
  }
  return value;
}

/**
 * Refuses (`issuer_changed_meanwhile`, naming the first) the write when one of `issuers` has a
 * change after `since`; nothing to check without it. Run under the registry's lock.
 */
async function checkUnchanged(session: SqlClient, issuers: readonly string[], since: number | undefined): Promise<void> {
  if (since === undefined) return;
  const { rows } = await session.query(
    `SELECT issuer FROM ${TABLES.issuerChanges} WHERE issuer = ANY($1) AND id > $2 ORDER BY id LIMIT 1`,
    [issuers, since],
  );
  if (rows.length > 0) throw new IssuerChangeError('issuer_changed_meanwhile', String(rows[0]?.issuer));
}

function checkIssuer(where: string, issuer: unknown): string {
  if (typeof issuer !== 'string' || issuer === '') {
    throw new TypeError(`${where}: issuer must be a non-empty string (the entry's iss), got ${describeValue(issuer)}`);
  }
  return issuer;
}

/**
 * The registry's own checks of `entries` (a `TypeError` naming the entry and field), with the
 * change's `jwksAllowedHosts`, and the table's bound on an issuer's length (a `TypeError` from
 * `where` naming the entry, the length found and the limit); the frozen entries.
 */
function checkEntries(where: string, entries: readonly IssuerEntry[], options: ChangeOptions): readonly IssuerEntry[] {
  const checked = new IssuerRegistry(entries, { allowEmpty: true, jwksAllowedHosts: options.jwksAllowedHosts }).entries();
  for (const [index, entry] of checked.entries()) {
    const long = issuerTooLong(`entries[${index}].issuer`, entry.issuer);
    if (long !== undefined) throw new TypeError(`${where}: ${long}`);
  }
  return checked;
}

/**
 * `entry` alone as a registry, its own JWKS host allowed: for comparing rules, not for deciding
 * where a JWKS may be (a row written under another `jwksAllowedHosts` still compares).
 */
function comparable(entry: IssuerEntry): IssuerRegistry {
  let hosts: string[] = [];
  try {
    const { hostname } = new URL(entry.jwksUri);
    if (hostname !== '') hosts = [hostname];
  } catch {
    // Not a URL: the registry names the field.
  }
  return new IssuerRegistry([entry], { jwksAllowedHosts: hosts });
}

/**
 * `true` when `after` registers the same rules as `before` (the registry's own comparison); `false`
 * when `before`, read from the table, is an entry the registry refuses.
 */
function sameEntry(before: IssuerEntry, after: IssuerEntry): boolean {
  let held: IssuerRegistry;
  try {
    held = comparable(before);
  } catch {
    return false;
  }
  return held.changesTo(comparable(after)).updated.length === 0;
}

/** An entry column, frozen as the registry freezes entries. */
function entryColumn(value: unknown): IssuerEntry | null {
  if (value === null || value === undefined) return null;
  return deepFreeze(jsonColumn(value) as IssuerEntry);
}

function dateColumn(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

function textColumn(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

function toChange(row: SqlRow): IssuerChange {
  return Object.freeze({
    id: numberColumn(row.id),
    issuer: String(row.issuer),
    action: row.action as IssuerChange['action'],
    before: entryColumn(row.before),
    after: entryColumn(row.after),
    at: dateColumn(row.at),
    actor: textColumn(row.actor),
    role: textColumn(row.role),
  });
}

function toRecord(row: SqlRow, refused: ReadonlyMap<string, RefusedRow>): IssuerRecord {
  const issuer = String(row.issuer);
  const refusal = refused.get(issuer);
  return Object.freeze({
    issuer,
    entry: entryColumn(row.entry) as IssuerEntry,
    refused: refusal === undefined ? null : Object.freeze({ rule: refusal.rule, reason: refusal.reason }),
    change: numberColumn(row.change ?? 0),
    addedAt: dateColumn(row.added_at),
    addedBy: String(row.added_by),
    updatedAt: dateColumn(row.updated_at),
    updatedBy: String(row.updated_by),
  });
}

const CHANGE_COLUMNS = 'id, issuer, action, before, after, at, actor, role';

/**
 * Runs `work` in one transaction holding the registry's lock (the one the audit trigger takes, so
 * taken first here), with the operator `by` named to the trigger, each statement (the wait for
 * the lock included) bounded by `timeout`.
 */
async function changing<T>(
  db: SqlClient,
  timeout: number,
  doing: string,
  by: string,
  work: (session: SqlClient) => Promise<T>,
): Promise<T> {
  try {
    return await inTransaction(db, timeout, async (session) => {
      await session.query(`SELECT pg_advisory_xact_lock($1), set_config('${ACTOR_SETTING}', $2, true)`, [REGISTRY_LOCK, by]);
      return work(session);
    });
  } catch (error) {
    throw error instanceof IssuerChangeError ? error : storageFailure(error, doing);
  }
}

/**
 * The change the trigger just logged for `issuer` in this transaction: the newest of that issuer,
 * as the registry's lock, held since the transaction began, lets no other change in between.
 */
async function loggedChange(session: SqlClient, issuer: string): Promise<IssuerChange> {
  const { rows } = await session.query(`SELECT ${CHANGE_COLUMNS} FROM ${TABLES.issuerChanges} WHERE issuer = $1 ORDER BY id DESC LIMIT 1`, [
    issuer,
  ]);
  return toChange(rows[0] as SqlRow);
}

/** The current entries of `issuers`, locked until the transaction ends. */
async function lockEntries(session: SqlClient, issuers: readonly string[]): Promise<Map<string, IssuerEntry>> {
  const { rows } = await session.query(`SELECT issuer, entry FROM ${TABLES.issuers} WHERE issuer = ANY($1) FOR UPDATE`, [issuers]);
  return new Map(rows.map((row) => [String(row.issuer), entryColumn(row.entry) as IssuerEntry]));
}

/** Inserts the row (its times and authors are the trigger's); the change logged. */
async function insertEntry(session: SqlClient, entry: IssuerEntry): Promise<IssuerChange> {
  await session.query(`INSERT INTO ${TABLES.issuers} (issuer, entry) VALUES ($1, $2::jsonb)`, [entry.issuer, JSON.stringify(entry)]);
  return loggedChange(session, entry.issuer);
}

/** Replaces the row's entry; the change logged. */
async function replaceEntry(session: SqlClient, entry: IssuerEntry): Promise<IssuerChange> {
  await session.query(`UPDATE ${TABLES.issuers} SET entry = $2::jsonb WHERE issuer = $1`, [entry.issuer, JSON.stringify(entry)]);
  return loggedChange(session, entry.issuer);
}

/**
 * Registers a new issuer, logs the change and notifies every instance, in one transaction.
 * @throws {TypeError} for a bad entry (naming its field, as `new IssuerRegistry()` does) or bad
 * options; nothing is written. @throws {IssuerChangeError} `issuer_exists`.
 * @throws {StorageUnavailableError} when the database is unreachable.
 */
export async function addIssuer(db: SqlClient, entry: IssuerEntry, options: ChangeOptions): Promise<IssuerChange> {
  rejectUnknownOptions('addIssuer', options, CHANGE_OPTION_NAMES);
  checkClient(db, 'addIssuer');
  const { by, timeout } = checkActor('addIssuer', options);
  const [checked] = checkEntries('addIssuer', [entry], options) as [IssuerEntry];
  return changing(db, timeout, 'adding an issuer', by, async (session) => {
    if ((await lockEntries(session, [checked.issuer])).has(checked.issuer)) throw new IssuerChangeError('issuer_exists', checked.issuer);
    return insertEntry(session, checked);
  });
}

/**
 * Replaces the whole entry of a registered issuer, logs the change and notifies every instance,
 * in one transaction.
 * @throws {TypeError} for a bad entry or bad options; nothing is written.
 * @throws {IssuerChangeError} `issuer_not_found`; `issuer_changed_meanwhile` when the table no
 * longer holds `expected`, or the issuer has a change after `unchangedSince`; `issuer_unchanged`
 * when the entry registers the same rules already. @throws {StorageUnavailableError} when the
 * database is unreachable.
 */
export async function updateIssuer(db: SqlClient, entry: IssuerEntry, options: UpdateIssuerOptions): Promise<IssuerChange> {
  rejectUnknownOptions('updateIssuer', options, UPDATE_ISSUER_OPTION_NAMES);
  checkClient(db, 'updateIssuer');
  const { by, timeout } = checkActor('updateIssuer', options);
  const [checked] = checkEntries('updateIssuer', [entry], options) as [IssuerEntry];
  // Only compared: where its JWKS may be was decided when it was written.
  const expected = options.expected === undefined ? undefined : comparable(options.expected).entries()[0];
  if (expected !== undefined && expected.issuer !== checked.issuer) {
    throw new TypeError(
      `updateIssuer: expected.issuer must be the entry's issuer, ${quote(checked.issuer)}, got ${quote(expected.issuer)}`,
    );
  }
  const since = checkUnchangedSince('updateIssuer', options.unchangedSince);
  return changing(db, timeout, 'updating an issuer', by, async (session) => {
    const before = (await lockEntries(session, [checked.issuer])).get(checked.issuer);
    await checkUnchanged(session, [checked.issuer], since);
    if (before === undefined) throw new IssuerChangeError('issuer_not_found', checked.issuer);
    if (expected !== undefined && !sameEntry(before, expected)) throw new IssuerChangeError('issuer_changed_meanwhile', checked.issuer);
    if (sameEntry(before, checked)) throw new IssuerChangeError('issuer_unchanged', checked.issuer);
    return replaceEntry(session, checked);
  });
}

/**
 * Removes an issuer, logs the change and notifies every instance, in one transaction.
 * @throws {IssuerChangeError} `issuer_not_found`. @throws {StorageUnavailableError} when the
 * database is unreachable.
 */
export async function removeIssuer(db: SqlClient, issuer: string, options: ChangeOptions): Promise<IssuerChange> {
  rejectUnknownOptions('removeIssuer', options, CHANGE_OPTION_NAMES);
  checkClient(db, 'removeIssuer');
  const { by, timeout } = checkActor('removeIssuer', options);
  checkIssuer('removeIssuer', issuer);
  return changing(db, timeout, 'removing an issuer', by, async (session) => {
    const { rows } = await session.query(`DELETE FROM ${TABLES.issuers} WHERE issuer = $1 RETURNING issuer`, [issuer]);
    if (rows.length === 0) throw new IssuerChangeError('issuer_not_found', issuer);
    return loggedChange(session, issuer);
  });
}

/**
 * Adds the issuers not registered and updates those registered with other rules, in one
 * transaction (all or nothing); never removes one. Every entry is checked first, as
 * `new IssuerRegistry(entries)` does (a repeated issuer included). With `unchangedSince`, an
 * issuer of the file changed since then refuses the whole import.
 * @throws {TypeError} for a bad entry or bad options; nothing is written.
 * @throws {IssuerChangeError} `issuer_changed_meanwhile`, naming the first issuer changed since
 * `unchangedSince`. @throws {StorageUnavailableError} when the database is unreachable.
 */
export async function importIssuers(db: SqlClient, entries: readonly IssuerEntry[], options: ImportIssuersOptions): Promise<ImportReport> {
  rejectUnknownOptions('importIssuers', options, IMPORT_ISSUERS_OPTION_NAMES);
  checkClient(db, 'importIssuers');
  const { by, timeout } = checkActor('importIssuers', options);
  const since = checkUnchangedSince('importIssuers', options.unchangedSince);
  const checked = checkEntries('importIssuers', entries, options);
  const report: ImportReport = { added: [], updated: [], unchanged: [], changes: [] };
  if (checked.length === 0) return report;
  return changing(db, timeout, 'importing issuers', by, async (session) => {
    const issuers = checked.map((entry) => entry.issuer);
    const held = await lockEntries(session, issuers);
    await checkUnchanged(session, issuers, since);
    for (const entry of checked) {
      const before = held.get(entry.issuer);
      if (before === undefined) {
        report.changes.push(await insertEntry(session, entry));
        report.added.push(entry.issuer);
      } else if (sameEntry(before, entry)) {
        report.unchanged.push(entry.issuer);
      } else {
        report.changes.push(await replaceEntry(session, entry));
        report.updated.push(entry.issuer);
      }
    }
    return report;
  });
}

/** A row of the registry table as read: its key and its entry, unchecked. */
function registryRow(row: SqlRow): RegistryRow {
  return { issuer: String(row.issuer), entry: entryColumn(row.entry) };
}

/**
 * Every row of the registry table, by key, each marked `refused` when every instance leaves it
 * out (judged as the instances judge it).
 * @throws {StorageUnavailableError} when the database is unreachable.
 */
export async function readIssuers(db: SqlClient, options: ReadIssuersOptions = {}): Promise<IssuerRecord[]> {
  rejectUnknownOptions('readIssuers', options, READ_ISSUERS_OPTION_NAMES);
  checkClient(db, 'readIssuers');
  const timeout = checkStatementTimeout(options.statementTimeout, 'readIssuers');
  let rows: SqlRow[];
  try {
    ({ rows } = await queryWithin(
      db,
      timeout,
      `SELECT issuer, entry, added_at, added_by, updated_at, updated_by,
              (SELECT coalesce(max(id), 0) FROM ${TABLES.issuerChanges} c WHERE c.issuer = i.issuer) AS change
         FROM ${TABLES.issuers} i ORDER BY issuer`,
    ));
  } catch (error) {
    throw storageFailure(error, 'reading issuers');
  }
  const hosts = checkAllowedHosts('readIssuers', 'jwksAllowedHosts', options.jwksAllowedHosts);
  const { refused } = checkRegistryRows(rows.map(registryRow), [...hosts]);
  const byRow = new Map(refused.map((refusal) => [refusal.row, refusal]));
  return rows.map((row) => toRecord(row, byRow));
}

/**
 * The audit trail, oldest first: every change, or those of one issuer.
 * @throws {StorageUnavailableError} when the database is unreachable.
 */
export async function readIssuerChanges(db: SqlClient, options: ReadIssuerChangesOptions = {}): Promise<IssuerChange[]> {
  rejectUnknownOptions('readIssuerChanges', options, READ_ISSUER_CHANGES_OPTION_NAMES);
  checkClient(db, 'readIssuerChanges');
  const timeout = checkStatementTimeout(options.statementTimeout, 'readIssuerChanges');
  const issuer = options.issuer === undefined ? null : checkIssuer('readIssuerChanges', options.issuer);
  try {
    const { rows } = await queryWithin(
      db,
      timeout,
      `SELECT ${CHANGE_COLUMNS} FROM ${TABLES.issuerChanges} WHERE $1::text IS NULL OR issuer = $1 ORDER BY id`,
      [issuer],
    );
    return rows.map(toChange);
  } catch (error) {
    throw storageFailure(error, 'reading issuer changes');
  }
}

/**
 * The rows of the registry table (unchecked), and the id of the last change they include, in one
 * statement (one snapshot): for the instances that follow the table.
 */
export async function readRegistrySnapshot(db: SqlClient, timeout: number): Promise<{ rows: RegistryRow[]; through: number }> {
  const { rows } = await queryWithin(
    db,
    timeout,
    `SELECT c.through, i.issuer, i.entry FROM (SELECT coalesce(max(id), 0) AS through FROM ${TABLES.issuerChanges}) c
       LEFT JOIN ${TABLES.issuers} i ON true ORDER BY i.issuer`,
  );
  return {
    through: numberColumn(rows[0]?.through ?? 0),
    rows: rows.filter((row) => row.issuer !== null && row.issuer !== undefined).map(registryRow),
  };
}

/** What changed in the registry table after a change id: the rows as they are now. */
export interface RegistryChanges {
  /** The id of the registry's last change (below the id asked for when the audit was replaced: read the table whole). */
  readonly through: number;
  /** How many changes there were after the id asked for (counted up to one past the limit). */
  readonly changes: number;
  /**
   * The rows of the issuers those changes name, as the table holds them now; `null` when there
   * were more changes than the limit (read the table whole instead).
   */
  readonly rows: readonly RegistryRow[] | null;
  /** The keys those changes name that the table no longer holds (`null` with `rows`). */
  readonly removed: readonly string[] | null;
}

/**
 * In one statement (one snapshot): the id of the last change, and when there are at most `limit`
 * changes after `after`, the current rows of the issuers they name, found through the audit's
 * primary key and the registry's. Every write of the table is audited (a trigger) and change ids
 * commit in their order, so the rows not named are as they were at `after`.
 */
export async function readRegistryChanges(db: SqlClient, after: number, limit: number, timeout: number): Promise<RegistryChanges> {
  const { rows } = await queryWithin(
    db,
    timeout,
    `WITH since AS (SELECT id, issuer FROM ${TABLES.issuerChanges} WHERE id > $1 ORDER BY id LIMIT $2 + 1),
          head AS (SELECT (SELECT coalesce(max(id), 0) FROM ${TABLES.issuerChanges}) AS through, count(*) AS changes FROM since)
     SELECT true AS head, head.through, head.changes, NULL AS issuer, NULL::jsonb AS entry, false AS present FROM head
     UNION ALL
     SELECT false, NULL, NULL, named.issuer, i.entry, i.issuer IS NOT NULL
       FROM (SELECT DISTINCT issuer FROM since) named LEFT JOIN ${TABLES.issuers} i ON i.issuer = named.issuer
      WHERE (SELECT changes FROM head) <= $2`,
    [after, limit],
  );
  const head = rows.find((row) => row.head === true);
  const named = rows.filter((row) => row.head !== true);
  const through = numberColumn(head?.through ?? after);
  const changes = numberColumn(head?.changes ?? 0);
  if (changes > limit) return { through, changes, rows: null, removed: null };
  return {
    through,
    changes,
    rows: named.filter((row) => row.present === true).map(registryRow),
    removed: named.filter((row) => row.present !== true).map((row) => String(row.issuer)),
  };
}

/**
 * The id of the registry's last change (`0` for none): the state the table is in, for
 * `unchangedSince`.
 * @throws {StorageUnavailableError} when the database is unreachable.
 */
export async function readLastIssuerChange(db: SqlClient, options: ReadIssuersOptions = {}): Promise<number> {
  rejectUnknownOptions('readLastIssuerChange', options, READ_ISSUERS_OPTION_NAMES);
  checkClient(db, 'readLastIssuerChange');
  const timeout = checkStatementTimeout(options.statementTimeout, 'readLastIssuerChange');
  try {
    return await readLastChange(db, timeout);
  } catch (error) {
    throw storageFailure(error, 'reading the last issuer change');
  }
}

/** The id of the last change; `0` for none. */
export async function readLastChange(db: SqlClient, timeout: number): Promise<number> {
  const { rows } = await queryWithin(db, timeout, `SELECT coalesce(max(id), 0) AS through FROM ${TABLES.issuerChanges}`);
  return numberColumn(rows[0]?.through ?? 0);
}
