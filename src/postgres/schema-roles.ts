/**
 * The two roles of least privilege that `migrate({ roles })` sets up, and what each may do:
 * - the gateway's role reads the registry and the controls (and compacts the controls through
 *   their function), and writes payment links, idempotency keys, the directory, the key history
 *   and its heartbeat;
 * - the operator's role writes the registry and the controls, and reads what the command line
 *   shows (the audit, the key history).
 * Neither may write the audit (the database writes it) nor change the schema. Roles belong to the
 * whole server, not to one database: their names are options, so that several databases of one
 * server may each have their own.
 */
import { describeValue, quote, quoteList } from '../internal/index.js';
import { COMPACT_CONTROLS, type SchemaArea, TABLES } from './schema-names.js';
import { errorState } from './database-errors.js';
import { MigrationError } from './migration-error.js';
import type { SqlClient } from './sql-client.js';

/** The names of the two roles `migrate` sets up (created `NOLOGIN` when missing). */
export interface SchemaRoles {
  /**
   * The gateway instances' role. Grant it to the role they log in as.
   * @default 'paygate_gateway'
   */
  readonly gateway?: string;
  /**
   * The operators' role (the command line's). Grant it to the roles they log in as.
   * @default 'paygate_operator'
   */
  readonly operator?: string;
}

/** The default role names. */
export const DEFAULT_ROLES: Readonly<Required<SchemaRoles>> = Object.freeze({ gateway: 'paygate_gateway', operator: 'paygate_operator' });

/** What `migrate` did about the roles. */
export interface RolesReport {
  readonly gateway: string;
  readonly operator: string;
  /** The roles it created (the others existed). */
  readonly created: readonly string[];
}

/** A role name: lower-case letters, digits and `_`, starting with a letter or `_`, at most 63 characters (so never quoted). */
const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Checks the `roles` option of `migrate`; the names to use. */
export function checkRoles(roles: unknown): Required<SchemaRoles> | undefined {
  if (roles === undefined || roles === false) return undefined;
  if (roles === true) return DEFAULT_ROLES;
  if (typeof roles !== 'object' || roles === null) {
    throw new TypeError(
      `migrate: roles must be true (the default names), false (no roles) or { gateway?, operator? } naming them, got ${describeValue(roles)}`,
    );
  }
  const named = { ...DEFAULT_ROLES, ...(roles as SchemaRoles) };
  for (const key of ['gateway', 'operator'] as const) {
    const name = named[key];
    if (typeof name !== 'string' || !ROLE_NAME.test(name) || name.startsWith('pg_')) {
      throw new TypeError(
        `migrate: roles.${key} must be a role name of lower-case letters, digits and "_" (not starting with "pg_"), at most 63 characters, got ${describeValue(name)}`,
      );
    }
  }
  if (named.gateway === named.operator) {
    throw new TypeError(
      `migrate: roles.gateway and roles.operator must be two roles, got ${describeValue(named.gateway)} for both: give each its own name`,
    );
  }
  return named;
}

/** What each role may do in each area: privileges `ON` objects, as `GRANT` takes them. */
const GRANTS: Readonly<Record<SchemaArea, { readonly gateway: readonly string[]; readonly operator: readonly string[] }>> = {
  links: {
    gateway: [`SELECT, INSERT ON ${TABLES.links}`, `SELECT, INSERT, UPDATE, DELETE ON ${TABLES.idempotency}`],
    operator: [],
  },
  controls: {
    gateway: [`SELECT ON ${TABLES.controls}, ${TABLES.controlsCompacted}`, `EXECUTE ON FUNCTION ${COMPACT_CONTROLS}()`],
    operator: [
      `SELECT, INSERT ON ${TABLES.controls}`,
      `SELECT ON ${TABLES.controlsCompacted}`,
      `EXECUTE ON FUNCTION ${COMPACT_CONTROLS}()`,
    ],
  },
  directory: {
    gateway: [`SELECT, INSERT, UPDATE ON ${TABLES.tenants}, ${TABLES.stores}, ${TABLES.departments}, ${TABLES.shoppers}`],
    operator: [],
  },
  registry: {
    gateway: [`SELECT ON ${TABLES.issuers}, ${TABLES.issuerChanges}`],
    operator: [`SELECT, INSERT, UPDATE, DELETE ON ${TABLES.issuers}`, `SELECT ON ${TABLES.issuerChanges}`],
  },
  keys: {
    // DELETE: each instance applies the retention (withdrawn keys, and keys of removed issuers).
    gateway: [`SELECT, INSERT, UPDATE, DELETE ON ${TABLES.keyHistory}`],
    operator: [`SELECT ON ${TABLES.keyHistory}`],
  },
  fleet: {
    gateway: [`SELECT, INSERT, UPDATE, DELETE ON ${TABLES.instances}`],
    operator: [`SELECT ON ${TABLES.instances}`],
  },
};

/** The tables of each area, whose owner alone can grant on them. */
const AREA_TABLES: Readonly<Record<SchemaArea, readonly string[]>> = {
  links: [TABLES.links, TABLES.idempotency],
  controls: [TABLES.controls, TABLES.controlsCompacted],
  directory: [TABLES.tenants, TABLES.stores, TABLES.departments, TABLES.shoppers],
  registry: [TABLES.issuers, TABLES.issuerChanges],
  keys: [TABLES.keyHistory],
  fleet: [TABLES.instances],
};

/**
 * Refuses to grant as a role that does not own the tables of `areas` (nor is a member of their
 * owner's role, nor a superuser): PostgreSQL answers its `GRANT` of a privilege the role holds
 * without the grant option with a warning only, granting nothing, so `migrate` would report
 * roles set up that lack their privileges.
 */
async function checkOwner(session: SqlClient, areas: readonly SchemaArea[]): Promise<void> {
  const { rows } = await session.query(
    `SELECT current_user AS role, c.relname AS name, pg_get_userbyid(c.relowner) AS owner FROM pg_class c
      WHERE c.relname = ANY($1) AND c.relnamespace = current_schema()::regnamespace AND NOT pg_has_role(current_user, c.relowner, 'USAGE')
      ORDER BY c.relname`,
    [[TABLES.migrations, ...areas.flatMap((area) => AREA_TABLES[area])]],
  );
  const first = rows[0];
  if (first === undefined) return;
  const role = String(first.role);
  const owner = String(first.owner);
  const tables = rows.map((row) => String(row.name));
  throw new MigrationError(
    'not_owner',
    `migrate: role ${quote(role)} may not grant on ${quoteList(tables)}, owned by ${quote(owner)}: a GRANT by a role that does not own a table grants nothing; run migrate with roles as the tables' owner (or a member of its role), or have the owner run the GRANT statements of docs/postgres.md`,
    { role, tables, owner },
  );
}

/** The `GRANT` statements giving `roles` what they may do in `areas` (the schema and the ledger included). */
export function grantStatements(roles: Required<SchemaRoles>, areas: readonly SchemaArea[], schema: string): string[] {
  const both = `${roles.gateway}, ${roles.operator}`;
  return [
    `GRANT USAGE ON SCHEMA ${schema} TO ${both}`,
    `GRANT SELECT ON ${TABLES.migrations} TO ${both}`,
    ...areas.flatMap((area) => [
      ...GRANTS[area].gateway.map((on) => `GRANT ${on} TO ${roles.gateway}`),
      ...GRANTS[area].operator.map((on) => `GRANT ${on} TO ${roles.operator}`),
    ]),
  ];
}

/**
 * Creates the roles that are missing (`NOLOGIN`: grant them to login roles), then grants each
 * what it may do in `areas`. Idempotent; run in `migrate`'s transaction.
 * @param role the migrating role (`current_user`).
 * @throws {MigrationError} `create_role_denied` when `role` may not create a missing role;
 * `not_owner` when it does not own the tables (its `GRANT`s would grant nothing).
 */
export async function setUpRoles(
  session: SqlClient,
  roles: Required<SchemaRoles>,
  areas: readonly SchemaArea[],
  schema: string,
  role: string,
): Promise<RolesReport> {
  const { rows } = await session.query('SELECT rolname FROM pg_roles WHERE rolname = ANY($1)', [[roles.gateway, roles.operator]]);
  const existing = new Set(rows.map((row) => String(row.rolname)));
  const created: string[] = [];
  for (const createRole of [roles.gateway, roles.operator]) {
    if (existing.has(createRole)) continue;
    try {
      await session.query(`CREATE ROLE ${createRole} NOLOGIN`);
    } catch (error) {
      if (errorState(error) !== '42501') throw error;
      throw new MigrationError(
        'create_role_denied',
        `migrate: role ${quote(role)}, running it, may not create role ${quote(createRole)}, which does not exist (it needs CREATEROLE): create it first (CREATE ROLE ${createRole} NOLOGIN), or run migrate as a role that may`,
        { role, createRole },
        error,
      );
    }
    created.push(createRole);
  }
  await checkOwner(session, areas);
  for (const statement of grantStatements(roles, areas, schema)) await session.query(statement);
  return { gateway: roles.gateway, operator: roles.operator, created };
}
