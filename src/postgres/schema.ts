/**
 * The schema of the PostgreSQL stores and operator controls, and `migrate()`, which creates or
 * upgrades it: versioned, idempotent, and safe to run from many instances at once (they queue on
 * one advisory lock, and each version is applied in the transaction that records it).
 *
 * @module paygate-auth/postgres
 */
import { type SqlClient, checkClient, inTransaction, numberColumn } from './sql-client.js';

/** Table names, shared by the stores, the controls and the command line. */
export const TABLES = Object.freeze({
  migrations: 'paygate_schema_migrations',
  links: 'paygate_payment_links',
  idempotency: 'paygate_idempotency_keys',
  controls: 'paygate_operator_controls',
} as const);

/** The `NOTIFY` channel of operator controls. */
export const CONTROLS_CHANNEL = 'paygate_operator_controls';

/** The advisory lock `migrate()` holds while it runs ("payg"). */
export const MIGRATION_LOCK = 1_885_436_263;

/** One version of the schema. */
interface Migration {
  readonly version: number;
  readonly description: string;
  readonly statements: readonly string[];
}

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'payment links, idempotency keys, operator controls',
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
];

/** The newest schema version this package knows. */
export const SCHEMA_VERSION = MIGRATIONS.reduce((newest, migration) => Math.max(newest, migration.version), 0);

/** What {@link migrate} did. */
export interface MigrationReport {
  /** Versions applied by this call, oldest first; `[]` when the schema was current. */
  readonly applied: readonly number[];
  /** The schema's version now. */
  readonly version: number;
}

/**
 * Creates the tables, or upgrades them to {@link SCHEMA_VERSION}. Safe to run at every start of
 * every instance: concurrent runs wait for each other, and a version is applied at most once.
 * A failure rolls its version back whole.
 * @param db A `pg.Pool` (one connection is checked out), a `pg.Client` or PGlite.
 * @throws {Error} when the database holds a newer schema than this package knows.
 */
export async function migrate(db: SqlClient): Promise<MigrationReport> {
  checkClient(db, 'migrate');
  return inTransaction(db, async (session) => {
    await session.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await session.query(
      `CREATE TABLE IF NOT EXISTS ${TABLES.migrations} (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const { rows } = await session.query(`SELECT version FROM ${TABLES.migrations}`);
    const done = new Set(rows.map((row) => numberColumn(row.version)));
    const newest = Math.max(0, ...done);
    if (newest > SCHEMA_VERSION) {
      throw new Error(`migrate: the database has schema version ${newest}, newer than ${SCHEMA_VERSION}, the newest this paygate-auth knows; upgrade paygate-auth`);
    }
    const applied: number[] = [];
    for (const migration of MIGRATIONS) {
      if (done.has(migration.version)) continue;
      for (const statement of migration.statements) await session.query(statement);
      await session.query(`INSERT INTO ${TABLES.migrations} (version, description) VALUES ($1, $2)`, [migration.version, migration.description]);
      applied.push(migration.version);
    }
    return { applied, version: Math.max(newest, ...applied) };
  });
}
