/**
 * The names of paygate-auth/postgres's schema: its areas, tables, channels and functions, shared
 * by the stores, the controls, the registry, the migrations and the command line.
 */

/** Table names, shared by the stores, the controls, the directory and the command line. */
export const TABLES = Object.freeze({
  migrations: 'paygate_schema_migrations',
  links: 'paygate_payment_links',
  idempotency: 'paygate_idempotency_keys',
  controls: 'paygate_operator_controls',
  controlsCompacted: 'paygate_operator_controls_compacted',
  tenants: 'paygate_directory_tenants',
  stores: 'paygate_directory_stores',
  departments: 'paygate_directory_departments',
  shoppers: 'paygate_directory_shoppers',
  issuers: 'paygate_issuers',
  issuerChanges: 'paygate_issuer_changes',
  keyHistory: 'paygate_key_history',
  instances: 'paygate_instances',
} as const);

/** The `NOTIFY` channel of operator controls. */
export const CONTROLS_CHANNEL = 'paygate_operator_controls';

/** The `NOTIFY` channel of the issuer registry. */
export const REGISTRY_CHANNEL = 'paygate_issuer_registry';

/**
 * The `NOTIFY` channel of the directory: a trigger sends it whenever tenants, stores or departments
 * change, or a shopper's UUID is changed or removed; `PostgresDirectory` empties its cache on it.
 */
export const DIRECTORY_CHANNEL = 'paygate_directory';

/** The longest issuer or `kid` an operator control may name (`recordControl`, and the table's constraint). */
export const MAX_CONTROL_TEXT = 2048;

/**
 * The longest issuer the registry table holds (`addIssuer` and the others, the table's constraint,
 * and every follower): the longest an operator control may name and the key history reads, so
 * that every issuer registered can be suspended, revoked and followed.
 */
export const MAX_ISSUER_LENGTH = MAX_CONTROL_TEXT;

/** The function that compacts the operator controls (see `compactControls`). */
export const COMPACT_CONTROLS = 'paygate_compact_controls';

/**
 * One part of the schema, installed on its own: `links` (payment links and idempotency keys),
 * `controls` (operator controls), `directory` (departments, stores, shoppers), `registry` (trusted
 * issuers and their audit trail), `keys` (the key history of every issuer, shared by the
 * verifiers), `fleet` (a heartbeat row per instance: what each has applied).
 */
export type SchemaArea = 'links' | 'controls' | 'directory' | 'registry' | 'keys' | 'fleet';

/** Every area, in the order `migrate()` applies them. */
export const SCHEMA_AREAS: readonly SchemaArea[] = Object.freeze(['links', 'controls', 'directory', 'registry', 'keys', 'fleet']);
