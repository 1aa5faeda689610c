/**
 * The operator controls' table: one row per action (`revoke_key`, `suspend_issuer`,
 * `resume_issuer`, `refresh_keys`), each written and broadcast with `NOTIFY` in one statement, and
 * the state the rows add up to.
 */
import { describeValue } from '../internal/index.js';
import { storageFailure } from './database-errors.js';
import { COMPACT_CONTROLS, CONTROLS_CHANNEL, CONTROLS_LOCK, TABLES } from './schema.js';
import { MAX_CONTROL_TEXT } from './schema-names.js';
import { DEFAULT_STATEMENT_TIMEOUT, type SqlClient, type SqlRow, checkClient, numberColumn, queryWithin } from './sql-client.js';

/** The actions an operator records. */
export type ControlAction = 'revoke_key' | 'suspend_issuer' | 'resume_issuer' | 'refresh_keys';

/** The actions, in the order the command line lists them. */
export const CONTROL_ACTIONS: readonly ControlAction[] = Object.freeze(['revoke_key', 'suspend_issuer', 'resume_issuer', 'refresh_keys']);

/** An action to record. `kid` is required by `revoke_key` and refused by the others. */
export interface ControlRequest {
  readonly action: ControlAction;
  /** The issuer (`iss`) as registered. */
  readonly issuer: string;
  readonly kid?: string;
}

/** A recorded action. */
export interface ControlRecord {
  /** Increasing with every action recorded. */
  readonly id: number;
  readonly action: ControlAction;
  readonly issuer: string;
  /** The key of `revoke_key`; `null` for the others. */
  readonly kid: string | null;
  /** When it was recorded (the database's clock). */
  readonly recordedAt: Date;
}

/** What the recorded actions add up to. */
export interface ControlState {
  /** Every revoked key, in the order of revocation. A revocation is never lifted. */
  readonly revoked: readonly { readonly issuer: string; readonly kid: string }[];
  /** Issuers whose last suspend/resume action is a suspension. */
  readonly suspended: readonly string[];
  /** The id of the last action folded in; `0` for none. */
  readonly through: number;
}

/** The state of no action at all. */
export const NO_CONTROLS: ControlState = Object.freeze({
  revoked: Object.freeze([]),
  suspended: Object.freeze([]),
  through: 0,
});

function checkText(where: string, name: string, value: unknown): string {
  if (typeof value !== 'string' || value === '' || value.length > MAX_CONTROL_TEXT || /[\s\u0000-\u001f\u007f]/.test(value)) {
    throw new TypeError(
      `${where}: ${name} must be 1 to ${MAX_CONTROL_TEXT} characters without spaces or control characters, got ${describeValue(value)}`,
    );
  }
  return value;
}

/** Checks a {@link ControlRequest}; returns its `kid` (or `null`). */
export function checkControlRequest(request: ControlRequest, where = 'recordControl'): string | null {
  const action: unknown = request?.action;
  if (!CONTROL_ACTIONS.includes(action as ControlAction)) {
    throw new TypeError(`${where}: action must be one of ${CONTROL_ACTIONS.join(', ')}, got ${describeValue(action)}`);
  }
  checkText(where, 'issuer', request.issuer);
  if (request.action === 'revoke_key') return checkText(where, 'kid', request.kid);
  if (request.kid !== undefined) {
    throw new TypeError(
      `${where}: kid is given only with revoke_key, got kid ${describeValue(request.kid)} with ${request.action}: leave kid out, or record revoke_key`,
    );
  }
  return null;
}

function toRecord(row: SqlRow): ControlRecord {
  const recordedAt = row.recorded_at instanceof Date ? row.recorded_at : new Date(String(row.recorded_at));
  return {
    id: numberColumn(row.id),
    action: row.action as ControlAction,
    issuer: String(row.issuer),
    kid: row.kid === null || row.kid === undefined ? null : String(row.kid),
    recordedAt,
  };
}

/**
 * Records an action and notifies every listening instance, in one statement (the notification
 * is delivered when it commits). Writes take one advisory lock, so ids become visible in their
 * order and a reader that has seen id n has seen every id below it.
 * @param timeout Milliseconds the statement may take, the wait for a pooled connection included.
 * @throws {TypeError} for a bad request. @throws {StorageUnavailableError} when the database is unreachable.
 */
export async function recordControl(db: SqlClient, request: ControlRequest, timeout = DEFAULT_STATEMENT_TIMEOUT): Promise<ControlRecord> {
  checkClient(db, 'recordControl');
  const kid = checkControlRequest(request);
  try {
    const { rows } = await queryWithin(
      db,
      timeout,
      `WITH locked AS (SELECT pg_advisory_xact_lock($5)), recorded AS (
         INSERT INTO ${TABLES.controls} (action, issuer, kid) SELECT $1, $2, $3 FROM locked
         RETURNING id, action, issuer, kid, recorded_at
       )
       SELECT recorded.*, pg_notify($4, json_build_object('id', id, 'action', action, 'issuer', issuer)::text) FROM recorded`,
      [request.action, request.issuer, kid, CONTROLS_CHANNEL, CONTROLS_LOCK],
    );
    return toRecord(rows[0] as SqlRow);
  } catch (error) {
    throw storageFailure(error, 'recording an operator control');
  }
}

/** Every recorded action, oldest first. */
export async function readControlRecords(db: SqlClient, timeout = DEFAULT_STATEMENT_TIMEOUT): Promise<ControlRecord[]> {
  try {
    const { rows } = await queryWithin(db, timeout, `SELECT id, action, issuer, kid, recorded_at FROM ${TABLES.controls} ORDER BY id`);
    return rows.map(toRecord);
  } catch (error) {
    throw storageFailure(error, 'reading operator controls');
  }
}

/** What {@link readControlsAfter} found. */
export interface ControlsRead {
  /** Actions after the id asked for, oldest first, at most the batch asked for. */
  readonly records: readonly ControlRecord[];
  /**
   * The compaction mark: actions up to this id may have been folded and deleted. A reader that
   * has folded in less than this must read from `0` again.
   */
  readonly compactedThrough: number;
}

/**
 * The actions after id `after` (at most `batch`), and the compaction mark, in one statement: an
 * instance reads only what it has not applied, however long the table's history.
 */
export async function readControlsAfter(
  db: SqlClient,
  after: number,
  batch: number,
  timeout = DEFAULT_STATEMENT_TIMEOUT,
): Promise<ControlsRead> {
  let rows: SqlRow[];
  try {
    ({ rows } = await queryWithin(
      db,
      timeout,
      `(SELECT through AS compacted_through, NULL::bigint AS id, NULL AS action, NULL AS issuer, NULL AS kid, NULL::timestamptz AS recorded_at
          FROM ${TABLES.controlsCompacted})
       UNION ALL
       (SELECT NULL, id, action, issuer, kid, recorded_at FROM ${TABLES.controls} WHERE id > $1 ORDER BY id LIMIT $2)`,
      [after, batch],
    ));
  } catch (error) {
    throw storageFailure(error, 'reading operator controls');
  }
  const mark = rows.find((row) => row.id === null);
  const records = rows.filter((row) => row.id !== null).map(toRecord);
  records.sort((a, b) => a.id - b.id);
  return { records, compactedThrough: numberColumn(mark?.compacted_through ?? 0) };
}

/**
 * The state `records` (oldest first, each after `from.through`) add up to, starting from `from`.
 * `refresh_keys` actions leave no state: they are applied when read.
 */
export function foldControls(records: readonly ControlRecord[], from: ControlState = NO_CONTROLS): ControlState {
  const revoked = new Map(from.revoked.map((key) => [`${key.issuer}\u0000${key.kid}`, key]));
  const suspended = new Set(from.suspended);
  let through = from.through;
  for (const record of records) {
    through = Math.max(through, record.id);
    if (record.action === 'revoke_key' && record.kid !== null) {
      const id = `${record.issuer}\u0000${record.kid}`;
      if (!revoked.has(id)) revoked.set(id, { issuer: record.issuer, kid: record.kid });
    } else if (record.action === 'suspend_issuer') suspended.add(record.issuer);
    else if (record.action === 'resume_issuer') suspended.delete(record.issuer);
  }
  return { revoked: [...revoked.values()], suspended: [...suspended], through };
}

/** What {@link compactControls} did. */
export interface CompactionReport {
  /** Rows deleted. */
  readonly deleted: number;
  /** Rows left: one per revoked key and one per suspended issuer. */
  readonly kept: number;
  /** The new compaction mark (the newest id when it ran). */
  readonly through: number;
}

/**
 * Folds the table into its current state: keeps one row per revoked key (its first revocation)
 * and one per suspended issuer (its last suspension), deletes every other row (resumptions,
 * superseded suspensions, key refreshes already broadcast), and moves the compaction mark to the
 * newest id, so that an instance that had not read that far reads the small table whole. One
 * statement (the function `paygate_compact_controls()`, run as the tables' owner): writes are
 * serialized (each holds one advisory lock), so its snapshot holds every id up to the newest it
 * sees. Safe to run from many instances at once.
 */
export async function compactControls(db: SqlClient, timeout = DEFAULT_STATEMENT_TIMEOUT): Promise<CompactionReport> {
  checkClient(db, 'compactControls');
  let rows: SqlRow[];
  try {
    // The database's own function (controls schema version 3): a role that may only read the
    // table (the gateway's) may still compact it, and can delete nothing else.
    ({ rows } = await queryWithin(db, timeout, `SELECT deleted, kept, through FROM ${COMPACT_CONTROLS}()`));
  } catch (error) {
    throw storageFailure(error, 'compacting operator controls');
  }
  const row = rows[0] as SqlRow;
  return { deleted: numberColumn(row.deleted), kept: numberColumn(row.kept), through: numberColumn(row.through) };
}
