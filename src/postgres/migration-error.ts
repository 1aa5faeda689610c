/**
 * The refusals of `migrate()`: each a {@link MigrationError} with a stable `code` and the facts
 * it found as fields, its message naming them and what to do next. Nothing was committed.
 */
import type { SchemaArea } from './schema-names.js';

/**
 * Why `migrate()` refused:
 * - `no_schema`: the migrating role may use no existing schema of its `search_path`;
 * - `schema_newer`: the database holds a version of an area newer than this package knows;
 * - `upgrade_denied`: the migrating role may not apply a version the database lacks (a gateway's
 *   role before the owner upgraded; `cause` is the server's refusal);
 * - `ledger_denied`: the migrating role may not read, create or write the ledger
 *   (`paygate_schema_migrations`; `cause` is the server's refusal, SQLSTATE 42501);
 * - `ledger_missing`: the ledger was missing while what a version creates exists (`cause` is the
 *   server's refusal);
 * - `ledger_behind`: the ledger does not record a version whose objects exist (`cause` likewise);
 * - `not_owner`: `roles` asked as a role that does not own the tables (its `GRANT`s would grant nothing);
 * - `create_role_denied`: `roles` named a missing role the migrating role may not create.
 */
export type MigrationErrorCode =
  | 'no_schema'
  | 'schema_newer'
  | 'upgrade_denied'
  | 'ledger_denied'
  | 'ledger_missing'
  | 'ledger_behind'
  | 'not_owner'
  | 'create_role_denied';

/** The facts a {@link MigrationError} names; each field is `undefined` where its code has none. */
export interface MigrationFacts {
  /** The role running `migrate` (`current_user`), where it was read. */
  readonly role?: string;
  /** The area at fault. */
  readonly area?: SchemaArea;
  /** The version the database holds (of `area` when named; else of the single-version ledger). */
  readonly found?: number;
  /** The newest version of `area` this package knows. */
  readonly known?: number;
  /** The version that could not be applied. */
  readonly version?: number;
  /** The tables at fault, by name. */
  readonly tables?: readonly string[];
  /** The owner of `tables` (`not_owner`). */
  readonly owner?: string;
  /** The role that could not be created (`create_role_denied`). */
  readonly createRole?: string;
  /** The migrating session's `search_path` (`no_schema`). */
  readonly searchPath?: string;
}

/** A refusal of `migrate()`: nothing was committed. `code` is stable; the fields are its facts. */
export class MigrationError extends Error {
  override readonly name = 'MigrationError';
  readonly code: MigrationErrorCode;
  readonly role: string | undefined;
  readonly area: SchemaArea | undefined;
  readonly found: number | undefined;
  readonly known: number | undefined;
  readonly version: number | undefined;
  readonly tables: readonly string[] | undefined;
  readonly owner: string | undefined;
  readonly createRole: string | undefined;
  readonly searchPath: string | undefined;

  /** @param message names the facts and what to do next. @param cause the server's refusal, if any. */
  constructor(code: MigrationErrorCode, message: string, facts: MigrationFacts, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
    this.role = facts.role;
    this.area = facts.area;
    this.found = facts.found;
    this.known = facts.known;
    this.version = facts.version;
    this.tables = facts.tables === undefined ? undefined : Object.freeze([...facts.tables]);
    this.owner = facts.owner;
    this.createRole = facts.createRole;
    this.searchPath = facts.searchPath;
  }
}
