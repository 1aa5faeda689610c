/**
 * The schema of paygate-auth/postgres, in areas that are installed and versioned each on its
 * own (`links`, `controls`, `directory`, `registry`, `keys`), and `migrate()`, which creates or
 * upgrades them:
 * idempotent, and safe to run from many instances at once (they queue on one advisory lock, and
 * each version is applied in the transaction that records it).
 */
import { capHint, describeListFault, describeValue, quote, rejectUnknownOptions, optionNames } from '../internal/index.js';
import {
  COMPACT_CONTROLS,
  DIRECTORY_CHANNEL,
  MAX_CONTROL_TEXT,
  MAX_ISSUER_LENGTH,
  REGISTRY_CHANNEL,
  SCHEMA_AREAS,
  type SchemaArea,
  TABLES,
} from './schema-names.js';
import { errorState } from './database-errors.js';
import { MigrationError } from './migration-error.js';
import { type RolesReport, type SchemaRoles, checkRoles, setUpRoles } from './schema-roles.js';
import { type SqlClient, StatementTimeoutError, checkClient, checkStatementTimeout, inTransaction, numberColumn } from './sql-client.js';

/** The members of {@link MigrateOptions}: any other is refused, naming the nearest. */
const MIGRATE_OPTION_NAMES = optionNames<MigrateOptions>({ only: true, statementTimeout: true, roles: true });

export { COMPACT_CONTROLS, CONTROLS_CHANNEL, REGISTRY_CHANNEL, SCHEMA_AREAS, type SchemaArea, TABLES } from './schema-names.js';

/** SQLSTATE of a statement the role may not run (`permission denied`, `must be owner`). */
const INSUFFICIENT_PRIVILEGE = '42501';

/**
 * SQLSTATEs of an object that exists already (a table or index, a constraint or trigger, a
 * function, a column): what a version creates is there while the ledger does not record it.
 */
const ALREADY_EXISTS: ReadonlySet<string> = new Set(['42P07', '42710', '42723', '42701']);

/** SQLSTATE of a statement the server cancelled (`statement_timeout`, or a cancel request). */
const QUERY_CANCELED = '57014';

/** The advisory lock `migrate()` holds while it runs ("payg"). */
export const MIGRATION_LOCK = 1_885_436_263;

/** What a migration's statements may name: the schema the tables are created in. */
interface MigrationContext {
  /** `current_schema()` of the migrating session, quoted as an identifier. */
  readonly schema: string;
}

/** One version of one area. */
interface Migration {
  readonly version: number;
  readonly description: string;
  readonly statements: readonly string[] | ((context: MigrationContext) => readonly string[]);
}

/** `name` quoted as an SQL identifier. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The advisory lock each change to the registry holds until it commits ("pgir"): taken by the audit trigger. */
export const REGISTRY_LOCK = 1_885_825_394;

/** The advisory lock each operator control written holds until it commits ("pgoc"): taken by its stamp trigger. */
export const CONTROLS_LOCK = 1_885_826_915;

/**
 * Controls version 4: each action's id is drawn by a trigger under {@link CONTROLS_LOCK}, held
 * until commit, however the row is written (`recordControl`, or an operator's `INSERT` in
 * `psql`): ids then commit in their order, and an instance reading the actions past the last id
 * it applied skips none. (The identity's own value, drawn before the trigger, was replaced, and
 * wasted, until version 6.)
 */
function changeStampedControls({ schema }: MigrationContext): readonly string[] {
  return [
    `CREATE FUNCTION paygate_operator_controls_stamp() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
       SET search_path = ${schema}, pg_temp AS $$
     BEGIN
       PERFORM pg_advisory_xact_lock(${CONTROLS_LOCK});
       NEW.id := nextval(pg_get_serial_sequence('${TABLES.controls}', 'id'));
       RETURN NEW;
     END $$`,
    `CREATE TRIGGER paygate_operator_controls_stamp BEFORE INSERT ON ${TABLES.controls}
       FOR EACH ROW EXECUTE FUNCTION paygate_operator_controls_stamp()`,
  ];
}

/**
 * Controls version 6: one id drawn per action. The identity drew a value of its own before the
 * stamp trigger drew the id kept, so ids went up by 2 per action; the identity is dropped for a
 * sequence only the trigger draws from, started past every value the identity drew.
 */
function singleDrawControls({ schema }: MigrationContext): readonly string[] {
  const ids = `${TABLES.controls}_ids`;
  return [
    // No action is written while the sequence is taken over (none may draw from the identity).
    `LOCK TABLE ${TABLES.controls} IN ACCESS EXCLUSIVE MODE`,
    `CREATE SEQUENCE ${ids}`,
    `SELECT setval('${ids}', drawn) FROM (
       SELECT pg_sequence_last_value(pg_get_serial_sequence('${TABLES.controls}', 'id')::regclass) AS drawn
     ) AS identity WHERE drawn IS NOT NULL`,
    `ALTER TABLE ${TABLES.controls} ALTER COLUMN id DROP IDENTITY`,
    `ALTER SEQUENCE ${ids} OWNED BY ${TABLES.controls}.id`,
    `CREATE OR REPLACE FUNCTION paygate_operator_controls_stamp() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
       SET search_path = ${schema}, pg_temp AS $$
     BEGIN
       PERFORM pg_advisory_xact_lock(${CONTROLS_LOCK});
       NEW.id := nextval('${ids}');
       RETURN NEW;
     END $$`,
  ];
}

/**
 * Controls version 7: an action, once recorded, is never changed. An `UPDATE` by hand (in `psql`)
 * is refused, whoever runs it: one moving a row's id past the others made every running instance,
 * which reads the actions past the last id it applied, skip each action recorded after it; one
 * changing a revoked key left it revoked on the running instances and not on those started later.
 * Rows written before are kept as they are. Record a new action instead (a resumption, say).
 */
function unchangedControls({ schema }: MigrationContext): readonly string[] {
  return [
    `CREATE FUNCTION paygate_operator_controls_unchanged() RETURNS trigger LANGUAGE plpgsql SET search_path = ${schema}, pg_temp AS $$
     BEGIN
       RAISE EXCEPTION '% holds recorded actions: UPDATE is refused (a changed id or key is missed by running instances); record a new action instead',
         TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
     END $$`,
    `CREATE TRIGGER paygate_operator_controls_unchanged BEFORE UPDATE ON ${TABLES.controls}
       FOR EACH STATEMENT EXECUTE FUNCTION paygate_operator_controls_unchanged()`,
  ];
}

/**
 * Controls version 8: the compaction mark, however written, only moves forward and never past the
 * newest id drawn; its row cannot be deleted. An instance that had not read up to a compaction
 * reads the table whole when the mark is past what it applied: a mark moved back (or deleted) by
 * hand hid a compaction, so that instance kept an issuer suspended after its resumption was folded
 * away; a mark moved past every id made each read of every instance read the table whole. A mark
 * written before is brought back to the newest id drawn, and a missing one put back there (safe:
 * an instance then reads the compacted table whole once).
 */
function guardedCompactionMark({ schema }: MigrationContext): readonly string[] {
  const drawn = `(SELECT last_value FROM ${TABLES.controls}_ids)`;
  return [
    `UPDATE ${TABLES.controlsCompacted} SET through = least(through, ${drawn})`,
    `INSERT INTO ${TABLES.controlsCompacted} (through) SELECT ${drawn} WHERE NOT EXISTS (SELECT 1 FROM ${TABLES.controlsCompacted})`,
    `CREATE FUNCTION paygate_operator_controls_mark() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
       SET search_path = ${schema}, pg_temp AS $$
     BEGIN
       IF TG_OP = 'UPDATE' THEN
         NEW.through := greatest(OLD.through, least(NEW.through, ${drawn}));
         RETURN NEW;
       END IF;
       RAISE EXCEPTION '% holds the compaction mark: % is refused (instances behind a compaction would miss it); run paygate_compact_controls() instead',
         TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
     END $$`,
    `CREATE TRIGGER paygate_operator_controls_mark BEFORE UPDATE ON ${TABLES.controlsCompacted}
       FOR EACH ROW EXECUTE FUNCTION paygate_operator_controls_mark()`,
    `CREATE TRIGGER paygate_operator_controls_mark_kept BEFORE DELETE OR TRUNCATE ON ${TABLES.controlsCompacted}
       FOR EACH STATEMENT EXECUTE FUNCTION paygate_operator_controls_mark()`,
  ];
}

/**
 * Controls version 9: a recorded action is deleted only when the table still adds up to the same
 * controls without it (what the compaction deletes), however the delete is written; `TRUNCATE` is
 * refused. A revocation or suspension deleted by hand in `psql` stayed in force on every running
 * instance (which had applied it) and not on those started later: the fleet split. What a delete
 * takes away counts as folded away: the compaction mark moves past it, so an instance that had
 * not read it reads the table whole, as after a compaction. Rows deleted before are gone.
 */
function keptControls({ schema }: MigrationContext): readonly string[] {
  const ids = `${TABLES.controls}_ids`;
  const turns = `action IN ('suspend_issuer', 'resume_issuer')`;
  return [
    `CREATE FUNCTION paygate_operator_controls_kept() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
       SET search_path = ${schema}, pg_temp AS $$
     DECLARE
       lost record;
       newest bigint;
     BEGIN
       IF TG_OP = 'TRUNCATE' THEN
         RAISE EXCEPTION '% holds recorded actions: TRUNCATE is refused (instances that applied a revocation or suspension would keep it, those started later would not); run paygate_compact_controls() instead',
           TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege';
       END IF;
       SELECT g.issuer, g.kid INTO lost FROM gone g WHERE g.action = 'revoke_key' AND NOT EXISTS (
         SELECT 1 FROM ${TABLES.controls} c WHERE c.action = 'revoke_key' AND c.issuer = g.issuer AND c.kid = g.kid) LIMIT 1;
       IF FOUND THEN
         RAISE EXCEPTION '% holds recorded actions: deleting the revocation of kid % of issuer % is refused (instances that applied it keep the key revoked, those started later would not); a revocation is never lifted',
           TG_TABLE_NAME, quote_literal(left(lost.kid, 100)), quote_literal(left(lost.issuer, 200)) USING ERRCODE = 'insufficient_privilege';
       END IF;
       WITH touched AS (SELECT DISTINCT issuer FROM gone WHERE ${turns}),
       was AS (
         SELECT DISTINCT ON (issuer) issuer, action FROM (
           SELECT id, issuer, action FROM ${TABLES.controls} WHERE ${turns} AND issuer IN (SELECT issuer FROM touched)
           UNION ALL SELECT id, issuer, action FROM gone WHERE ${turns}
         ) turned ORDER BY issuer, id DESC
       ),
       left_now AS (
         SELECT DISTINCT ON (issuer) issuer, action FROM ${TABLES.controls}
          WHERE ${turns} AND issuer IN (SELECT issuer FROM touched) ORDER BY issuer, id DESC
       )
       SELECT was.issuer, was.action = 'suspend_issuer' AS suspended INTO lost FROM was LEFT JOIN left_now USING (issuer)
        WHERE (was.action = 'suspend_issuer') IS DISTINCT FROM coalesce(left_now.action = 'suspend_issuer', false) LIMIT 1;
       IF FOUND THEN
         RAISE EXCEPTION '% holds recorded actions: this delete would % issuer % (instances that applied its rows would not, those started later would); record a % instead',
           TG_TABLE_NAME, CASE WHEN lost.suspended THEN 'lift the suspension of' ELSE 'suspend again' END, quote_literal(left(lost.issuer, 200)),
           CASE WHEN lost.suspended THEN 'resume_issuer' ELSE 'suspend_issuer' END USING ERRCODE = 'insufficient_privilege';
       END IF;
       -- What was deleted counts as folded away: an instance that had not read it reads the table whole.
       SELECT max(id) INTO newest FROM gone;
       IF newest IS NOT NULL THEN
         PERFORM setval('${ids}', newest) FROM ${ids} WHERE last_value < newest;
         UPDATE ${TABLES.controlsCompacted} SET through = greatest(through, newest);
       END IF;
       RETURN NULL;
     END $$`,
    `CREATE TRIGGER paygate_operator_controls_kept AFTER DELETE ON ${TABLES.controls}
       REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION paygate_operator_controls_kept()`,
    `CREATE TRIGGER paygate_operator_controls_not_truncated BEFORE TRUNCATE ON ${TABLES.controls}
       FOR EACH STATEMENT EXECUTE FUNCTION paygate_operator_controls_kept()`,
  ];
}

/**
 * Controls version 10: an action's id is past every id an instance may have applied, even after
 * the id sequence was moved back by hand (`setval`): an instance reads the actions past the last
 * id it applied, so one drawn at or below it was never read by any running instance. Every id
 * applied is a row's or at most the compaction mark (a delete moves the mark past what it takes
 * away), so an id drawn at or below the greater of the two moves the sequence past it and is
 * drawn again, under the lock the ids are drawn under.
 */
function unskippedControls({ schema }: MigrationContext): readonly string[] {
  const ids = `${TABLES.controls}_ids`;
  return [
    `CREATE OR REPLACE FUNCTION paygate_operator_controls_stamp() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
       SET search_path = ${schema}, pg_temp AS $$
     DECLARE
       applied bigint;
     BEGIN
       PERFORM pg_advisory_xact_lock(${CONTROLS_LOCK});
       NEW.id := nextval('${ids}');
       SELECT greatest((SELECT max(id) FROM ${TABLES.controls}), (SELECT max(through) FROM ${TABLES.controlsCompacted})) INTO applied;
       IF NEW.id <= applied THEN
         PERFORM setval('${ids}', applied);
         NEW.id := nextval('${ids}');
       END IF;
       RETURN NEW;
     END $$`,
  ];
}

/**
 * Registry version 5: a change's id is past every id recorded, even after the audit's id sequence
 * was moved back by hand (`setval`), which made every later change of the registry fail on the
 * audit's primary key. The id is drawn by a function under the registry's lock (the audit trigger
 * takes it first): one at or below the newest recorded moves the sequence past it.
 */
function unskippedRegistry({ schema }: MigrationContext): readonly string[] {
  const ids = `${TABLES.issuerChanges}_id_seq`;
  return [
    `CREATE FUNCTION paygate_issuer_change_id() RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER
       SET search_path = ${schema}, pg_temp AS $$
     DECLARE
       drawn bigint := nextval('${ids}');
       newest bigint := (SELECT max(id) FROM ${TABLES.issuerChanges});
     BEGIN
       IF drawn <= newest THEN
         PERFORM setval('${ids}', newest);
         drawn := nextval('${ids}');
       END IF;
       RETURN drawn;
     END $$`,
    `REVOKE EXECUTE ON FUNCTION paygate_issuer_change_id() FROM PUBLIC`,
    `ALTER TABLE ${TABLES.issuerChanges} ALTER COLUMN id SET DEFAULT paygate_issuer_change_id()`,
  ];
}

/** The advisory lock each write of the key history holds until it commits ("pgkh"): taken by its stamp trigger. */
export const KEY_HISTORY_LOCK = 1_885_825_896;

/**
 * Key history version 3: each row carries the id of its last change (`changed`), drawn by a
 * trigger under one advisory lock held until commit, so ids commit in their order and a reader
 * reads the rows changed since the last id it read, whoever wrote them (a row written by hand
 * is stamped too: its id cannot be forged). Withdrawn keys are found by an index, for the
 * retention.
 */
function changeStampedKeyHistory({ schema }: MigrationContext): readonly string[] {
  return [
    `CREATE SEQUENCE ${TABLES.keyHistory}_changes`,
    `ALTER TABLE ${TABLES.keyHistory} ADD COLUMN changed bigint NOT NULL DEFAULT 0`,
    `CREATE FUNCTION paygate_key_history_stamp() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
       SET search_path = ${schema}, pg_temp AS $$
     BEGIN
       PERFORM pg_advisory_xact_lock(${KEY_HISTORY_LOCK});
       NEW.changed := nextval('${TABLES.keyHistory}_changes');
       RETURN NEW;
     END $$`,
    `CREATE TRIGGER paygate_key_history_stamp BEFORE INSERT OR UPDATE ON ${TABLES.keyHistory}
       FOR EACH ROW EXECUTE FUNCTION paygate_key_history_stamp()`,
    `CREATE INDEX ${TABLES.keyHistory}_changed ON ${TABLES.keyHistory} (changed)`,
    `CREATE INDEX ${TABLES.keyHistory}_withdrawn ON ${TABLES.keyHistory} (withdrawn) WHERE withdrawn IS NOT NULL`,
  ];
}

/**
 * Key history version 4: a row's change id is past every id a reader may have read, even after
 * the change sequence was moved back by hand (`setval`): a reader reads the rows changed past the
 * last id it read, so a row stamped at or below it was skipped by every running instance. Every
 * id read is a row's, or one deleted since: a delete (or truncate) moves a second sequence, the
 * high-water mark of the ids deleted, past them. An id drawn at or below the greater of the
 * newest row's and that mark moves the change sequence past it and is drawn again, under the lock
 * the ids are drawn under. Rows written before are kept as they are.
 */
function unskippedKeyHistory({ schema }: MigrationContext): readonly string[] {
  const ids = `${TABLES.keyHistory}_changes`;
  const deleted = `${TABLES.keyHistory}_deleted`;
  return [
    `CREATE SEQUENCE ${deleted} MINVALUE 0 START 0`,
    // Ids drawn before this version may belong to rows deleted since: the mark starts at the
    // newest id drawn (or the newest row's, the sequence moved back already).
    `SELECT setval('${deleted}', greatest(
       (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM ${ids}),
       (SELECT coalesce(max(changed), 0) FROM ${TABLES.keyHistory})))`,
    `CREATE OR REPLACE FUNCTION paygate_key_history_stamp() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
       SET search_path = ${schema}, pg_temp AS $$
     DECLARE
       read_up_to bigint;
     BEGIN
       PERFORM pg_advisory_xact_lock(${KEY_HISTORY_LOCK});
       NEW.changed := nextval('${ids}');
       SELECT greatest((SELECT max(changed) FROM ${TABLES.keyHistory}), (SELECT last_value FROM ${deleted})) INTO read_up_to;
       IF NEW.changed <= read_up_to THEN
         PERFORM setval('${ids}', read_up_to);
         NEW.changed := nextval('${ids}');
       END IF;
       RETURN NEW;
     END $$`,
    `CREATE FUNCTION paygate_key_history_deleted() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
       SET search_path = ${schema}, pg_temp AS $$
     DECLARE
       newest bigint;
     BEGIN
       IF TG_OP = 'TRUNCATE' THEN
         SELECT max(changed) INTO newest FROM ${TABLES.keyHistory};
       ELSE
         SELECT max(changed) INTO newest FROM gone;
       END IF;
       PERFORM setval('${deleted}', newest) FROM ${deleted} WHERE last_value < newest;
       RETURN NULL;
     END $$`,
    `CREATE TRIGGER paygate_key_history_deleted AFTER DELETE ON ${TABLES.keyHistory}
       REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION paygate_key_history_deleted()`,
    `CREATE TRIGGER paygate_key_history_truncated BEFORE TRUNCATE ON ${TABLES.keyHistory}
       FOR EACH STATEMENT EXECUTE FUNCTION paygate_key_history_deleted()`,
  ];
}

/** The longest operator name the audit keeps (`paygate.actor`); longer ones are cut. */
export const MAX_ACTOR = 200;

/** The session setting naming the operator who makes a change (`SET LOCAL paygate.actor = 'alice'`). */
export const ACTOR_SETTING = 'paygate.actor';

/**
 * Registry version 2: the database audits every change of the registry table itself. A
 * trigger writes the audit row (before, after, time, `session_user` and the operator's name
 * when the session sets `paygate.actor`) and sends the notification, whoever writes and
 * however; the audit refuses `UPDATE`, `DELETE` and `TRUNCATE`, and an `INSERT` that does
 * not come from that trigger. Change ids are drawn under one advisory lock held until commit,
 * so they commit in their order. The functions run with the schema pinned (and `pg_temp` last),
 * so no caller's temporary table can stand in for a table of ours.
 */
function auditedRegistry({ schema }: MigrationContext): readonly string[] {
  const path = `SET search_path = ${schema}, pg_temp`;
  const actor = `left(nullif(current_setting('${ACTOR_SETTING}', true), ''), ${MAX_ACTOR})`;
  const log = (issuer: string, action: string, before: string, after: string) =>
    `INSERT INTO ${TABLES.issuerChanges} (issuer, action, before, after, actor, role)
       VALUES (${issuer}, ${action}, ${before}, ${after}, named, session_user) RETURNING id INTO change;
     PERFORM pg_notify('${REGISTRY_CHANNEL}', change::text);`;
  return [
    `ALTER TABLE ${TABLES.issuerChanges} ALTER COLUMN actor DROP NOT NULL, ADD COLUMN role text`,
    // Who added and last changed a row: the operator's name, else the database role.
    `CREATE FUNCTION paygate_issuers_stamp() RETURNS trigger LANGUAGE plpgsql ${path} AS $$
     DECLARE who text := coalesce(${actor}, session_user);
     BEGIN
       IF TG_OP = 'INSERT' THEN
         NEW.added_at := now();
         NEW.added_by := who;
       ELSE
         NEW.added_at := OLD.added_at;
         NEW.added_by := OLD.added_by;
       END IF;
       NEW.updated_at := now();
       NEW.updated_by := who;
       RETURN NEW;
     END $$`,
    `CREATE TRIGGER paygate_issuers_stamp BEFORE INSERT OR UPDATE ON ${TABLES.issuers}
       FOR EACH ROW EXECUTE FUNCTION paygate_issuers_stamp()`,
    `CREATE FUNCTION paygate_issuers_audit() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER ${path} AS $$
     DECLARE
       named text := ${actor};
       change bigint;
     BEGIN
       PERFORM pg_advisory_xact_lock(${REGISTRY_LOCK});
       IF TG_OP = 'INSERT' THEN
         ${log('NEW.issuer', `'add'`, 'NULL', 'NEW.entry')}
       ELSIF TG_OP = 'DELETE' THEN
         ${log('OLD.issuer', `'remove'`, 'OLD.entry', 'NULL')}
       ELSIF OLD.issuer IS DISTINCT FROM NEW.issuer THEN
         ${log('OLD.issuer', `'remove'`, 'OLD.entry', 'NULL')}
         ${log('NEW.issuer', `'add'`, 'NULL', 'NEW.entry')}
       ELSIF OLD IS DISTINCT FROM NEW THEN
         ${log('NEW.issuer', `'update'`, 'OLD.entry', 'NEW.entry')}
       END IF;
       RETURN NULL;
     END $$`,
    `CREATE TRIGGER paygate_issuers_audit AFTER INSERT OR UPDATE OR DELETE ON ${TABLES.issuers}
       FOR EACH ROW EXECUTE FUNCTION paygate_issuers_audit()`,
    `CREATE FUNCTION paygate_refuse_truncate() RETURNS trigger LANGUAGE plpgsql ${path} AS $$
     BEGIN
       RAISE EXCEPTION '% cannot be truncated: delete its rows instead, so that each removal is audited', TG_TABLE_NAME
         USING ERRCODE = 'insufficient_privilege';
     END $$`,
    `CREATE TRIGGER paygate_issuers_no_truncate BEFORE TRUNCATE ON ${TABLES.issuers}
       FOR EACH STATEMENT EXECUTE FUNCTION paygate_refuse_truncate()`,
    `CREATE FUNCTION paygate_audit_append_only() RETURNS trigger LANGUAGE plpgsql ${path} AS $$
     BEGIN
       IF TG_OP = 'INSERT' AND pg_trigger_depth() > 1 THEN
         RETURN NEW;
       END IF;
       RAISE EXCEPTION '% is the audit trail: % is refused (it is written only by the registry table''s trigger, and never changed)',
         TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
     END $$`,
    `CREATE TRIGGER paygate_issuer_changes_insert BEFORE INSERT ON ${TABLES.issuerChanges}
       FOR EACH ROW EXECUTE FUNCTION paygate_audit_append_only()`,
    `CREATE TRIGGER paygate_issuer_changes_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON ${TABLES.issuerChanges}
       FOR EACH STATEMENT EXECUTE FUNCTION paygate_audit_append_only()`,
  ];
}

/**
 * Directory version 2: a change to the tenants, stores or departments, and a shopper's UUID
 * changed or removed, sends {@link DIRECTORY_CHANNEL} at commit, however it is written (seeding,
 * an operator's SQL), so that every instance empties its cache. A new shopper sends nothing: an
 * instance that does not know it reads it.
 */
function notifiedDirectory({ schema }: MigrationContext): readonly string[] {
  const tables = [TABLES.tenants, TABLES.stores, TABLES.departments];
  return [
    `CREATE FUNCTION paygate_directory_changed() RETURNS trigger LANGUAGE plpgsql SET search_path = ${schema}, pg_temp AS $$
     BEGIN
       PERFORM pg_notify('${DIRECTORY_CHANNEL}', '');
       RETURN NULL;
     END $$`,
    ...tables.map(
      (table) => `CREATE TRIGGER ${table}_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${table}
       FOR EACH STATEMENT EXECUTE FUNCTION paygate_directory_changed()`,
    ),
    `CREATE TRIGGER ${TABLES.shoppers}_changed AFTER UPDATE OR DELETE OR TRUNCATE ON ${TABLES.shoppers}
       FOR EACH STATEMENT EXECUTE FUNCTION paygate_directory_changed()`,
  ];
}

/**
 * Fleet version 2: a row's `seen_at` is never ahead of the database's clock when it was written,
 * whatever the writer gave (a heartbeat writes `now()`; a hand-made row saying `infinity` was
 * live for ever and never reached by the retention, so that every wait named it). Rows written
 * before ahead of the clock are brought back to now, so the retention reaches them.
 */
function stampedHeartbeats({ schema }: MigrationContext): readonly string[] {
  return [
    `UPDATE ${TABLES.instances} SET seen_at = now() WHERE seen_at > now()`,
    `CREATE FUNCTION paygate_instances_stamp() RETURNS trigger LANGUAGE plpgsql SET search_path = ${schema}, pg_temp AS $$
     BEGIN
       NEW.seen_at := least(NEW.seen_at, now());
       RETURN NEW;
     END $$`,
    `CREATE TRIGGER paygate_instances_stamp BEFORE INSERT OR UPDATE ON ${TABLES.instances}
       FOR EACH ROW EXECUTE FUNCTION paygate_instances_stamp()`,
  ];
}

const MIGRATIONS: Readonly<Record<SchemaArea, readonly Migration[]>> = {
  links: [
    {
      version: 1,
      description: 'payment links, idempotency keys',
      statements: [
        `CREATE TABLE ${TABLES.links} (
          id uuid PRIMARY KEY,
          tenant text NOT NULL,
          link_code text NOT NULL UNIQUE,
          seq bigint GENERATED ALWAYS AS IDENTITY,
          record json NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now()
        )`,
        `CREATE INDEX ${TABLES.links}_tenant ON ${TABLES.links} (tenant, seq)`,
        `CREATE TABLE ${TABLES.idempotency} (
          tenant text NOT NULL,
          key text NOT NULL,
          state text NOT NULL CHECK (state IN ('pending', 'completed')),
          fingerprint text NOT NULL,
          lease text,
          lease_expires_at bigint,
          expires_at bigint NOT NULL,
          response json,
          PRIMARY KEY (tenant, key),
          CHECK ((state = 'pending') = (response IS NULL))
        )`,
        `CREATE INDEX ${TABLES.idempotency}_expiry ON ${TABLES.idempotency} (expires_at)`,
      ],
    },
    {
      version: 2,
      description: 'an idempotency key names the link it created instead of copying it',
      statements: [
        // The recorded response's body is then the link's own record, read back at a replay:
        // each link is written once. Rows recorded before keep their whole response.
        `ALTER TABLE ${TABLES.idempotency} ADD COLUMN link_id uuid`,
      ],
    },
    {
      version: 3,
      description: 'a payment link row holds its own record, an idempotency response is an object',
      statements: [
        // What the stores write: a link's record is a JSON object naming the row's id, tenant and
        // code, and a recorded response a JSON object. A row written by hand holding another
        // tenant's link, or JSON null, was refused only when read. As for the registry: held at
        // once for new rows; a validation that finds an older row breaking it is skipped (the
        // readers refuse such a row as before), as is one that cannot read a field of an older
        // record: `->>` refuses a whole record holding U+0000 or a lone surrogate anywhere (a
        // description the handler stored before it refused them), which reads back whole.
        `ALTER TABLE ${TABLES.links} ADD CONSTRAINT ${TABLES.links}_record CHECK (coalesce(
           json_typeof(record) = 'object' AND lower(record ->> 'id') = id::text
           AND record ->> 'tenant' = tenant AND record ->> 'link_code' = link_code, false)) NOT VALID`,
        `ALTER TABLE ${TABLES.idempotency} ADD CONSTRAINT ${TABLES.idempotency}_response CHECK (
           response IS NULL OR json_typeof(response) = 'object') NOT VALID`,
        `DO $$ BEGIN
           ALTER TABLE ${TABLES.links} VALIDATE CONSTRAINT ${TABLES.links}_record;
         EXCEPTION WHEN check_violation OR untranslatable_character OR invalid_text_representation THEN NULL;
         END $$`,
        `DO $$ BEGIN
           ALTER TABLE ${TABLES.idempotency} VALIDATE CONSTRAINT ${TABLES.idempotency}_response;
         EXCEPTION WHEN check_violation THEN NULL;
         END $$`,
      ],
    },
  ],
  controls: [
    {
      version: 1,
      description: 'operator controls',
      statements: [
        `CREATE TABLE ${TABLES.controls} (
          id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          action text NOT NULL CHECK (action IN ('revoke_key', 'suspend_issuer', 'resume_issuer', 'refresh_keys')),
          issuer text NOT NULL,
          kid text,
          recorded_at timestamptz NOT NULL DEFAULT now(),
          CHECK ((action = 'revoke_key') = (kid IS NOT NULL))
        )`,
      ],
    },
    {
      version: 2,
      description: 'operator controls compaction mark',
      statements: [
        `CREATE TABLE ${TABLES.controlsCompacted} (
          only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
          through bigint NOT NULL
        )`,
        `INSERT INTO ${TABLES.controlsCompacted} (through) VALUES (0)`,
      ],
    },
    {
      version: 3,
      description: 'operator controls compacted by a function of their own',
      statements: ({ schema }) => [
        // Run as its owner: a role that may only read the controls (a gateway's) compacts them
        // through it, and can delete nothing else.
        `CREATE FUNCTION ${COMPACT_CONTROLS}() RETURNS TABLE (deleted integer, kept integer, through bigint)
           LANGUAGE sql SECURITY DEFINER SET search_path = ${schema}, pg_temp AS $$
         WITH mark AS (SELECT coalesce(max(id), 0) AS through FROM ${TABLES.controls}),
         keep AS (
           (SELECT DISTINCT ON (issuer, kid) id FROM ${TABLES.controls} WHERE action = 'revoke_key' ORDER BY issuer, kid, id)
           UNION ALL
           SELECT id FROM (
             SELECT DISTINCT ON (issuer) id, action FROM ${TABLES.controls}
              WHERE action IN ('suspend_issuer', 'resume_issuer') ORDER BY issuer, id DESC
           ) last WHERE action = 'suspend_issuer'
         ),
         gone AS (DELETE FROM ${TABLES.controls} WHERE id <= (SELECT through FROM mark) AND id NOT IN (SELECT id FROM keep) RETURNING 1),
         marked AS (UPDATE ${TABLES.controlsCompacted} SET through = greatest(through, (SELECT through FROM mark)) RETURNING through)
         SELECT (SELECT count(*) FROM gone)::int, (SELECT count(*) FROM keep)::int, (SELECT through FROM marked)
         $$`,
        `REVOKE EXECUTE ON FUNCTION ${COMPACT_CONTROLS}() FROM PUBLIC`,
      ],
    },
    { version: 4, description: 'operator control ids drawn in commit order, however a row is written', statements: changeStampedControls },
    {
      version: 5,
      description: "an operator control's issuer and kid hold what recordControl takes",
      statements: [
        // 1 to MAX_CONTROL_TEXT characters without spaces or control characters, as recordControl
        // checks them: a row made in psql with a huge or blank issuer or kid was read by every
        // instance at every change. As for the registry: held at once for new rows; a validation
        // that finds an older row breaking it is skipped.
        `ALTER TABLE ${TABLES.controls} ADD CONSTRAINT ${TABLES.controls}_text CHECK (
           length(issuer) BETWEEN 1 AND ${MAX_CONTROL_TEXT} AND issuer !~ '[\\s\\x01-\\x1f\\x7f]'
           AND coalesce(length(kid) BETWEEN 1 AND ${MAX_CONTROL_TEXT} AND kid !~ '[\\s\\x01-\\x1f\\x7f]', true)
         ) NOT VALID`,
        `DO $$ BEGIN
           ALTER TABLE ${TABLES.controls} VALIDATE CONSTRAINT ${TABLES.controls}_text;
         EXCEPTION WHEN check_violation THEN NULL;
         END $$`,
      ],
    },
    { version: 6, description: 'one operator control id drawn per action', statements: singleDrawControls },
    { version: 7, description: 'a recorded operator control is never changed', statements: unchangedControls },
    {
      version: 8,
      description: 'the operator controls compaction mark only moves forward, to an id drawn',
      statements: guardedCompactionMark,
    },
    {
      version: 9,
      description: 'a recorded operator control is deleted only when the controls in force stay the same',
      statements: keptControls,
    },
    {
      version: 10,
      description: "an operator control's id is past every id applied, the sequence moved back or not",
      statements: unskippedControls,
    },
  ],
  directory: [
    {
      version: 1,
      description: 'directory: tenants, stores, departments, shoppers',
      statements: [
        `CREATE TABLE ${TABLES.tenants} (
          tenant text PRIMARY KEY,
          allowed_methods json NOT NULL,
          blocked_methods json NOT NULL
        )`,
        `CREATE TABLE ${TABLES.stores} (
          tenant text NOT NULL REFERENCES ${TABLES.tenants} ON DELETE CASCADE,
          id uuid NOT NULL,
          name text NOT NULL,
          position integer NOT NULL,
          PRIMARY KEY (tenant, id),
          UNIQUE (tenant, position)
        )`,
        `CREATE TABLE ${TABLES.departments} (
          tenant text NOT NULL REFERENCES ${TABLES.tenants} ON DELETE CASCADE,
          ref text NOT NULL,
          id uuid NOT NULL,
          store_id uuid,
          PRIMARY KEY (tenant, ref)
        )`,
        `CREATE TABLE ${TABLES.shoppers} (
          tenant text NOT NULL,
          ref text NOT NULL,
          id uuid NOT NULL,
          PRIMARY KEY (tenant, ref)
        )`,
      ],
    },
    { version: 2, description: 'the directory notifies its changes', statements: notifiedDirectory },
  ],
  registry: [
    {
      version: 1,
      description: 'issuer registry and its audit trail',
      statements: [
        `CREATE TABLE ${TABLES.issuers} (
          issuer text PRIMARY KEY,
          entry jsonb NOT NULL,
          added_at timestamptz NOT NULL,
          added_by text NOT NULL,
          updated_at timestamptz NOT NULL,
          updated_by text NOT NULL
        )`,
        `CREATE TABLE ${TABLES.issuerChanges} (
          id bigserial PRIMARY KEY,
          issuer text NOT NULL,
          action text NOT NULL CHECK (action IN ('add', 'update', 'remove')),
          before jsonb,
          after jsonb,
          at timestamptz NOT NULL DEFAULT now(),
          actor text NOT NULL
        )`,
        `CREATE INDEX ${TABLES.issuerChanges}_issuer ON ${TABLES.issuerChanges} (issuer, id)`,
      ],
    },
    { version: 2, description: 'the registry audited by the database itself', statements: auditedRegistry },
    {
      version: 3,
      description: "a registry row's key is its entry's issuer",
      statements: [
        // New and changed rows are held to it at once; rows written before are checked by a
        // validation that is skipped when one breaks it (every instance leaves such a row out).
        `ALTER TABLE ${TABLES.issuers} ADD CONSTRAINT ${TABLES.issuers}_key_is_issuer
           CHECK (coalesce(entry ->> 'issuer' = issuer, false)) NOT VALID`,
        `DO $$ BEGIN
           ALTER TABLE ${TABLES.issuers} VALIDATE CONSTRAINT ${TABLES.issuers}_key_is_issuer;
         EXCEPTION WHEN check_violation THEN NULL;
         END $$`,
      ],
    },
    {
      version: 4,
      description: "a registry row's issuer is at most as long as an operator control's",
      statements: [
        // 1 to MAX_ISSUER_LENGTH characters, as addIssuer checks it: an issuer registered longer
        // could be neither suspended nor revoked (recordControl refuses it), and its key history
        // was refused. As for version 3: held at once for new rows; a validation that finds an
        // older row breaking it is skipped (every instance leaves such a row out).
        `ALTER TABLE ${TABLES.issuers} ADD CONSTRAINT ${TABLES.issuers}_issuer_length
           CHECK (length(issuer) BETWEEN 1 AND ${MAX_ISSUER_LENGTH}) NOT VALID`,
        `DO $$ BEGIN
           ALTER TABLE ${TABLES.issuers} VALIDATE CONSTRAINT ${TABLES.issuers}_issuer_length;
         EXCEPTION WHEN check_violation THEN NULL;
         END $$`,
      ],
    },
    {
      version: 5,
      description: 'a registry change id is past every id recorded, the sequence moved back or not',
      statements: unskippedRegistry,
    },
  ],
  keys: [
    {
      version: 1,
      description: 'key history',
      statements: [
        // Times in milliseconds since the epoch, but latest_expiry in seconds (a token's exp).
        `CREATE TABLE ${TABLES.keyHistory} (
          issuer text NOT NULL,
          kid text NOT NULL,
          first_seen bigint NOT NULL,
          published_after bigint,
          first_used bigint,
          last_used bigint,
          latest_expiry bigint,
          withdrawn bigint,
          breaches text[] NOT NULL DEFAULT '{}'
            CHECK (breaches <@ ARRAY['key_used_early', 'key_rotation_overdue', 'key_withdrawn']),
          PRIMARY KEY (issuer, kid)
        )`,
      ],
    },
    {
      version: 2,
      description: 'key history times are never negative',
      statements: [
        // As for the registry: held at once for new rows; older rows are skipped by the readers.
        `ALTER TABLE ${TABLES.keyHistory} ADD CONSTRAINT ${TABLES.keyHistory}_times CHECK (
           first_seen >= 0 AND coalesce(published_after, 0) >= 0 AND coalesce(first_used, 0) >= 0
           AND coalesce(last_used, 0) >= 0 AND coalesce(latest_expiry, 0) >= 0 AND coalesce(withdrawn, 0) >= 0
         ) NOT VALID`,
        `DO $$ BEGIN
           ALTER TABLE ${TABLES.keyHistory} VALIDATE CONSTRAINT ${TABLES.keyHistory}_times;
         EXCEPTION WHEN check_violation THEN NULL;
         END $$`,
      ],
    },
    {
      version: 3,
      description: 'key history rows stamped with their last change, for reads of what changed',
      statements: changeStampedKeyHistory,
    },
    {
      version: 4,
      description: "a key history row's change id is past every id read, the sequence moved back or not",
      statements: unskippedKeyHistory,
    },
    {
      version: 5,
      description: "a key history row holds its key's thumbprint, so a new key under an old kid is a new key",
      statements: [
        // NULL for the rows written before (and by older versions): their key is their kid's.
        `ALTER TABLE ${TABLES.keyHistory} ADD COLUMN thumbprint text`,
        // What keyThumbprint gives (43 base64url characters). As for the times: held at once for
        // new rows; the column is new, so no row written before breaks it.
        `ALTER TABLE ${TABLES.keyHistory} ADD CONSTRAINT ${TABLES.keyHistory}_thumbprint
           CHECK (thumbprint ~ '^[A-Za-z0-9_-]{43}$')`,
      ],
    },
  ],
  fleet: [
    {
      version: 1,
      description: 'a heartbeat row per instance',
      statements: [
        // What each instance has applied, as of its last heartbeat (the database's clock).
        `CREATE TABLE ${TABLES.instances} (
          name text PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 200),
          started_at timestamptz NOT NULL,
          seen_at timestamptz NOT NULL DEFAULT now(),
          interval_ms integer NOT NULL CHECK (interval_ms > 0),
          registry_change bigint,
          registry_digest text,
          registry_issuers integer,
          registry_refused integer,
          control bigint
        )`,
        `CREATE INDEX ${TABLES.instances}_seen ON ${TABLES.instances} (seen_at)`,
      ],
    },
    { version: 2, description: "a heartbeat row's seen_at is never ahead of the database's clock", statements: stampedHeartbeats },
    {
      version: 3,
      description: 'a heartbeat row holds what a heartbeat writes',
      statements: [
        // What postgresHeartbeat writes: its interval (100 ms to 10 min; a row of 2^31 ms was live
        // until the retention), a name without control characters, a finite start, a SHA-256
        // digest in hex (printed by `fleet`) and ids and counts from 0. As for the registry: held
        // at once for new rows; a validation that finds an older row breaking it is skipped.
        `ALTER TABLE ${TABLES.instances} ADD CONSTRAINT ${TABLES.instances}_heartbeat CHECK (
           interval_ms BETWEEN 100 AND 600000 AND name !~ '[\\x01-\\x1f\\x7f]' AND isfinite(started_at)
           AND coalesce(registry_digest ~ '^[0-9a-f]{64}$', true)
           AND coalesce(registry_change, 0) >= 0 AND coalesce(registry_issuers, 0) >= 0
           AND coalesce(registry_refused, 0) >= 0 AND coalesce(control, 0) >= 0
         ) NOT VALID`,
        `DO $$ BEGIN
           ALTER TABLE ${TABLES.instances} VALIDATE CONSTRAINT ${TABLES.instances}_heartbeat;
         EXCEPTION WHEN check_violation THEN NULL;
         END $$`,
      ],
    },
  ],
};

/** The newest version of each area this package knows. */
export const SCHEMA_VERSIONS: Readonly<Record<SchemaArea, number>> = Object.freeze(
  Object.fromEntries(SCHEMA_AREAS.map((area) => [area, Math.max(...MIGRATIONS[area].map((migration) => migration.version))])) as Record<
    SchemaArea,
    number
  >,
);

/** Options of {@link migrate}. */
export interface MigrateOptions {
  /**
   * The areas to create or upgrade; the others are left as they are.
   * @default every area (`SCHEMA_AREAS`)
   */
  readonly only?: SchemaArea | readonly SchemaArea[] | undefined;
  /**
   * Milliseconds each statement may take on a pool, the wait for its connection (first statement)
   * and for the migration lock included. Past it, the connection is destroyed, nothing is
   * committed, and `migrate()` rejects with a `StatementTimeoutError`; the server, told the same
   * bound, rolls back a transaction whose client went silent. A `pg.Client` or PGlite is bounded
   * by its own settings instead. Whole milliseconds, 10 to 600 000.
   * @default 5000
   */
  readonly statementTimeout?: number | undefined;
  /**
   * Sets up the two roles of least privilege for the areas asked for: the gateway's (reads the
   * registry and the controls; writes links, idempotency keys, the directory and the key history)
   * and the operator's (writes the registry and the controls). `true` for the default names, or
   * the names: roles belong to the whole server, so databases of one server need names of their
   * own. Missing roles are created `NOLOGIN` (the migrating role then needs `CREATEROLE`); grant
   * them to the roles that log in. Run again after each upgrade, so new tables are granted too.
   * @default undefined (no role is created, nothing is granted)
   */
  readonly roles?: boolean | SchemaRoles | undefined;
}

/** What {@link migrate} did. */
export interface MigrationReport {
  /** Versions applied by this call, in order; `[]` when every area asked for was current. */
  readonly applied: readonly { readonly area: SchemaArea; readonly version: number }[];
  /** The version of each area asked for, now. */
  readonly versions: Readonly<Partial<Record<SchemaArea, number>>>;
  /** The roles set up, when `roles` asked for them. */
  readonly roles?: RolesReport;
}

function checkAreas(only: MigrateOptions['only']): readonly SchemaArea[] {
  if (only === undefined) return SCHEMA_AREAS;
  const areas = typeof only === 'string' ? [only] : only;
  if (!Array.isArray(areas) || areas.length === 0 || !areas.every((area) => SCHEMA_AREAS.includes(area))) {
    throw new TypeError(
      `migrate: only must name one or more of ${SCHEMA_AREAS.join(', ')}, got ${typeof only === 'string' ? describeValue(only) : describeListFault(areas, (area) => SCHEMA_AREAS.includes(area as SchemaArea))}`,
    );
  }
  return SCHEMA_AREAS.filter((area) => areas.includes(area));
}

/**
 * The ledger of applied versions, one row per (area, version). A database migrated by an earlier
 * paygate-auth holds one row per version with no area: its version 1 was today's `links` 1 and
 * `controls` 1 together, and is recorded as those two rows (their time of application kept).
 * `true` when the ledger was missing and is created now.
 */
async function ensureLedger(session: SqlClient, role: string, schema: string): Promise<boolean> {
  // The catalog, not information_schema: that lists only the tables the role has a privilege on.
  const { rows } = await session.query(
    `SELECT a.attname AS column_name FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace AND a.attnum > 0 AND NOT a.attisdropped`,
    [TABLES.migrations],
  );
  if (rows.length === 0) {
    await onLedger(role, 'create', schema, () =>
      session.query(
        `CREATE TABLE ${TABLES.migrations} (
        area text NOT NULL,
        version integer NOT NULL,
        description text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (area, version)
      )`,
      ),
    );
    return true;
  }
  if (rows.some((row) => row.column_name === 'area')) return false;
  const { rows: versions } = await onLedger(role, 'read', schema, () => session.query(`SELECT version FROM ${TABLES.migrations}`));
  const unknown = versions.map((row) => numberColumn(row.version)).find((version) => version !== 1);
  if (unknown !== undefined) {
    throw new MigrationError(
      'schema_newer',
      `migrate: the database's single-version ledger ${TABLES.migrations} holds schema version ${describeValue(unknown)}, where this paygate-auth knows version 1 alone of that ledger (later versions are recorded per area); upgrade paygate-auth to the version that migrated this database`,
      { found: unknown, known: 1, tables: [TABLES.migrations] },
    );
  }
  await onLedger(role, 'write', schema, () => upgradeLedger(session));
  return false;
}

/** The single-version ledger rewritten as one row per (area, version), its version 1 as `links` 1 and `controls` 1. */
async function upgradeLedger(session: SqlClient): Promise<void> {
  await session.query(`ALTER TABLE ${TABLES.migrations} DROP CONSTRAINT ${TABLES.migrations}_pkey`);
  await session.query(`ALTER TABLE ${TABLES.migrations} ADD COLUMN area text`);
  await session.query(
    `INSERT INTO ${TABLES.migrations} (area, version, description, applied_at)
     SELECT 'controls', version, $1, applied_at FROM ${TABLES.migrations} WHERE version = 1`,
    [MIGRATIONS.controls[0]?.description],
  );
  await session.query(`UPDATE ${TABLES.migrations} SET area = 'links', description = $1 WHERE area IS NULL`, [
    MIGRATIONS.links[0]?.description,
  ]);
  await session.query(`ALTER TABLE ${TABLES.migrations} ALTER COLUMN area SET NOT NULL, ADD PRIMARY KEY (area, version)`);
}

/**
 * The first schema `searchPath` names other than `$user`, as written there (an identifier, quoted
 * where it needs it), cut and escaped for one line; `<schema>` when it names none.
 */
function firstNamedSchema(searchPath: string): string {
  const named = (searchPath.match(/"(?:[^"]|"")*"|[^,]+/g) ?? []).map((entry) => entry.trim());
  const schema = named.find((entry) => entry !== '' && entry !== '$user' && entry !== '"$user"');
  return schema === undefined ? '<schema>' : capHint(schema);
}

/** The refusal of `role`, which may use no existing schema of its `searchPath`. */
function noSchema(role: string, searchPath: string): MigrationError {
  const schema = firstNamedSchema(searchPath);
  return new MigrationError(
    'no_schema',
    `migrate: role ${quote(role)} may use no existing schema of its search_path ${quote(searchPath)}, where migrate needs one to find or create its tables in: grant it USAGE on the schema (and CREATE, to create the tables: GRANT USAGE, CREATE ON SCHEMA ${schema} TO ${quote(role)}), or set its search_path to a schema it may use`,
    { role, searchPath },
  );
}

/** What `migrate` does to the ledger: read it, create it, or record a version in it. */
type LedgerStep = 'read' | 'create' | 'write';

/**
 * `work` on the ledger; the server's refusal for lack of privilege (SQLSTATE 42501: permission
 * denied for the table, or for the schema it is created in) a `ledger_denied` {@link MigrationError}
 * naming `role`, the ledger and what to grant or run, the refusal as its `cause`.
 */
async function onLedger<T>(role: string, step: LedgerStep, schema: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (errorState(error) !== INSUFFICIENT_PRIVILEGE) throw error;
    const found = `role ${quote(role)} may not ${step} the ledger ${TABLES.migrations}${step === 'create' ? ` in schema ${schema}` : ''} (${capHint((error as Error).message)}, SQLSTATE ${INSUFFICIENT_PRIVILEGE})`;
    const remedy = {
      read: `grant it SELECT on ${TABLES.migrations} (migrate with roles grants it to the roles it sets up), or run migrate as the tables' owner (npx paygate-auth migrate)`,
      create: `run migrate first as a role that may create tables in schema ${schema} (its owner: npx paygate-auth migrate), or grant this role CREATE on that schema`,
      write: `run migrate as the tables' owner (npx paygate-auth migrate), then start again`,
    }[step];
    throw new MigrationError(
      'ledger_denied',
      `migrate: ${found}, where migrate needs to ${step} it: ${remedy}`,
      { role, tables: [TABLES.migrations] },
      error,
    );
  }
}

/**
 * The error of a version whose objects exist already while the ledger does not record it: the
 * ledger was dropped (`created`: this run made it anew) or emptied, or the tables were made
 * without it. Its `cause` is the server's refusal.
 */
function ledgerBehind(area: SchemaArea, version: number, newest: number, created: boolean, error: unknown): MigrationError {
  const ledger = created
    ? `the ledger ${TABLES.migrations} was missing`
    : `the ledger ${TABLES.migrations} records ${area} version ${newest}`;
  return new MigrationError(
    created ? 'ledger_missing' : 'ledger_behind',
    `migrate: ${area} schema version ${version} is not applied by the ledger's account (${ledger}), but what it creates exists already (${capHint((error as Error).message)}, SQLSTATE ${errorState(error)}): the ledger was dropped or emptied, or the tables were made without it; restore ${TABLES.migrations} from a backup, or drop the ${area} tables if they hold nothing to keep, then run migrate again`,
    { area, version, found: newest, known: SCHEMA_VERSIONS[area], tables: [TABLES.migrations] },
    error,
  );
}

/**
 * Creates the tables of the areas asked for (all by default), or upgrades them to
 * {@link SCHEMA_VERSIONS}. Safe to run at every start of every instance: concurrent runs wait for
 * each other, and a version is applied at most once. A failure rolls the whole call back.
 * @param db A `pg.Pool` (one connection is checked out), a `pg.Client` or PGlite.
 * @throws {TypeError} for an unknown area, a bad `statementTimeout` or bad `roles`.
 * @throws {MigrationError} with a stable `code` and the facts as fields (its message names them and
 * the remedy): `no_schema` when the migrating role may use no existing schema of its
 * `search_path` (`role`, `searchPath`); `schema_newer` when the database holds a newer version of an area than this package
 * knows (`area`, `found`, `known`); `upgrade_denied` when the migrating role may not apply a version
 * it lacks (a gateway's role before the owner upgraded: `role`, `area`, `found`, `known`,
 * `version`); `ledger_denied` when it may not read, create or write the ledger (`role`, `tables`);
 * `ledger_missing` / `ledger_behind` when what a version creates exists already while the ledger
 * was missing / does not record it (`area`, `version`, `found`); `not_owner` when `roles` asks as a
 * role that does not own the tables, whose `GRANT`s would grant nothing (`role`, `tables`,
 * `owner`); `create_role_denied` when `roles` names a missing role it may not create (`role`,
 * `createRole`). Where the server refused, its error is the `cause`.
 * @throws {StatementTimeoutError} when a statement on a pooled connection got no answer within
 * `statementTimeout`, or the server cancelled one (SQLSTATE 57014, its `statement_timeout`, which
 * may fire first while waiting for the migration lock; `cause` is the server's error). Nothing was
 * committed; run it again.
 * @example
 * ```ts
 * await migrate(pool);                        // every area
 * await migrate(pool, { only: 'controls' });  // only the operator-controls table
 * await migrate(pool, { roles: true });       // and the roles paygate_gateway, paygate_operator
 * ```
 */
export async function migrate(db: SqlClient, options: MigrateOptions = {}): Promise<MigrationReport> {
  rejectUnknownOptions('migrate', options, MIGRATE_OPTION_NAMES);
  checkClient(db, 'migrate');
  const areas = checkAreas(options.only);
  const timeout = checkStatementTimeout(options.statementTimeout, 'migrate');
  const roles = checkRoles(options.roles);
  try {
    return await migrateWithin(db, timeout, areas, roles);
  } catch (error) {
    if (errorState(error) !== QUERY_CANCELED) throw error;
    // The server's statement_timeout (ours on a pool, the session's on a single connection) may
    // fire before our own bound, waiting on the migration lock above all.
    throw new StatementTimeoutError(
      `migrate: the server cancelled a statement (SQLSTATE 57014, ${capHint((error as Error).message)}) before migrate finished; nothing was committed: run it again once the migration lock is free (another migrate may hold it), or raise statementTimeout (${timeout} ms) or the connection's statement_timeout`,
      { cause: error },
    );
  }
}

/** {@link migrate}'s work, its options checked: one transaction under the migration lock. */
async function migrateWithin(
  db: SqlClient,
  timeout: number,
  areas: readonly SchemaArea[],
  roles: Required<SchemaRoles> | undefined,
): Promise<MigrationReport> {
  return inTransaction(db, timeout, async (session) => {
    await session.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    const { rows: schemas } = await session.query(
      `SELECT current_schema() AS schema, current_user AS role, current_setting('search_path') AS search_path`,
    );
    const role = String(schemas[0]?.role);
    // No schema of the search_path exists that the role may use: nowhere to find or make the tables.
    if (schemas[0]?.schema == null) throw noSchema(role, String(schemas[0]?.search_path));
    const context: MigrationContext = { schema: quoteIdentifier(String(schemas[0].schema)) };
    const ledgerCreated = await ensureLedger(session, role, context.schema);
    const { rows } = await onLedger(role, 'read', context.schema, () => session.query(`SELECT area, version FROM ${TABLES.migrations}`));
    const applied: { area: SchemaArea; version: number }[] = [];
    const versions: Partial<Record<SchemaArea, number>> = {};
    for (const area of areas) {
      const done = new Set(rows.filter((row) => row.area === area).map((row) => numberColumn(row.version)));
      const newest = Math.max(0, ...done);
      if (newest > SCHEMA_VERSIONS[area]) {
        throw new MigrationError(
          'schema_newer',
          `migrate: the database has ${area} schema version ${newest}, newer than ${SCHEMA_VERSIONS[area]}, the newest this paygate-auth knows; upgrade paygate-auth`,
          { area, found: newest, known: SCHEMA_VERSIONS[area], tables: [TABLES.migrations] },
        );
      }
      for (const migration of MIGRATIONS[area]) {
        if (done.has(migration.version)) continue;
        const statements = typeof migration.statements === 'function' ? migration.statements(context) : migration.statements;
        try {
          for (const statement of statements) await session.query(statement);
        } catch (error) {
          if (ALREADY_EXISTS.has(errorState(error) ?? '')) throw ledgerBehind(area, migration.version, newest, ledgerCreated, error);
          if (errorState(error) !== INSUFFICIENT_PRIVILEGE) throw error;
          // A role of least privilege (a gateway's) migrating at start, before the owner upgraded.
          throw new MigrationError(
            'upgrade_denied',
            `migrate: the database has ${area} schema version ${newest}, ${SCHEMA_VERSIONS[area]} needed by this paygate-auth, and role ${quote(role)} may not apply version ${migration.version} (${capHint((error as Error).message)}, SQLSTATE ${INSUFFICIENT_PRIVILEGE}): run migrate as the tables' owner (npx paygate-auth migrate), then start again`,
            { role, area, found: newest, known: SCHEMA_VERSIONS[area], version: migration.version },
            error,
          );
        }
        await onLedger(role, 'write', context.schema, () =>
          session.query(`INSERT INTO ${TABLES.migrations} (area, version, description) VALUES ($1, $2, $3)`, [
            area,
            migration.version,
            migration.description,
          ]),
        );
        applied.push({ area, version: migration.version });
      }
      versions[area] = Math.max(newest, ...applied.filter((entry) => entry.area === area).map((entry) => entry.version));
    }
    if (roles === undefined) return { applied, versions };
    return { applied, versions, roles: await setUpRoles(session, roles, areas, context.schema, role) };
  });
}
