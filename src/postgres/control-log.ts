/**
 * The operator controls' table: one row per action (`revoke_key`, `suspend_issuer`,
 * `resume_issuer`, `refresh_keys`), each written and broadcast with `NOTIFY` in one statement, and
 * the state the rows add up to.
 *
 * @module paygate-auth/postgres
 */
import { storageFailure } from './database-errors.js';
import { CONTROLS_CHANNEL, TABLES } from './schema.js';
import { type SqlClient, type SqlRow, checkClient, numberColumn } from './sql-client.js';

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
  /** Every key refresh asked for, oldest first. */
  readonly refreshes: readonly { readonly id: number; readonly issuer: string }[];
}

const MAX_TEXT = 2048;

function checkText(where: string, name: string, value: unknown): string {
  if (typeof value !== 'string' || value === '' || value.length > MAX_TEXT || /[\s\u0000-\u001f\u007f]/.test(value)) {
    throw new TypeError(`${where}: ${name} must be 1 to ${MAX_TEXT} characters without spaces or control characters, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Checks a {@link ControlRequest}; returns its `kid` (or `null`). */
export function checkControlRequest(request: ControlRequest, where = 'recordControl'): string | null {
  if (!CONTROL_ACTIONS.includes(request?.action)) throw new TypeError(`${where}: action must be one of ${CONTROL_ACTIONS.join(', ')}`);
  checkText(where, 'issuer', request.issuer);
  if (request.action === 'revoke_key') return checkText(where, 'kid', request.kid);
  if (request.kid !== undefined) throw new TypeError(`${where}: kid is given only with revoke_key`);
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
 * is delivered when it commits).
 * @throws {TypeError} for a bad request. @throws {StorageUnavailableError} when the database is unreachable.
 */
export async function recordControl(db: SqlClient, request: ControlRequest): Promise<ControlRecord> {
  checkClient(db, 'recordControl');
  const kid = checkControlRequest(request);
  try {
    const { rows } = await db.query(
      `WITH recorded AS (
         INSERT INTO ${TABLES.controls} (action, issuer, kid) VALUES ($1, $2, $3)
         RETURNING id, action, issuer, kid, recorded_at
       )
       SELECT recorded.*, pg_notify($4, json_build_object('id', id, 'action', action, 'issuer', issuer)::text) FROM recorded`,
      [request.action, request.issuer, kid, CONTROLS_CHANNEL],
    );
    return toRecord(rows[0] as SqlRow);
  } catch (error) {
    throw storageFailure(error, 'recording an operator control');
  }
}

/** Every recorded action, oldest first. */
export async function readControlRecords(db: SqlClient): Promise<ControlRecord[]> {
  try {
    const { rows } = await db.query(`SELECT id, action, issuer, kid, recorded_at FROM ${TABLES.controls} ORDER BY id`);
    return rows.map(toRecord);
  } catch (error) {
    throw storageFailure(error, 'reading operator controls');
  }
}

/** The state `records` (oldest first) add up to. */
export function foldControls(records: readonly ControlRecord[]): ControlState {
  const revoked = new Map<string, { issuer: string; kid: string }>();
  const suspended = new Set<string>();
  const refreshes: { id: number; issuer: string }[] = [];
  for (const record of records) {
    if (record.action === 'revoke_key' && record.kid !== null) revoked.set(`${record.issuer}\u0000${record.kid}`, { issuer: record.issuer, kid: record.kid });
    else if (record.action === 'suspend_issuer') suspended.add(record.issuer);
    else if (record.action === 'resume_issuer') suspended.delete(record.issuer);
    else if (record.action === 'refresh_keys') refreshes.push({ id: record.id, issuer: record.issuer });
  }
  return { revoked: [...revoked.values()], suspended: [...suspended], refreshes };
}
