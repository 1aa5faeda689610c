/**
 * paygate-auth/postgres: payment links, idempotency records, the directory, operator controls and
 * the issuer registry and the issuers' key history, shared by many gateway instances through one
 * PostgreSQL database, every statement bounded. Takes the caller's client (a `pg.Pool`, best
 * opened with `poolSettings()`, a `pg.Client` or PGlite); `pg` itself is never loaded here.
 * `postgresFollowers` starts what an instance follows (the registry, the controls, the key
 * history) on one `LISTEN` connection. The command line's own helpers are not exported.
 *
 * @module paygate-auth/postgres
 */
export type { ControlRecord, ControlState } from './control-log.js';
export { ClosedError } from './closed-error.js';
export { isUnavailable } from './database-errors.js';
export { type PostgresHeartbeat, type PostgresHeartbeatOptions, postgresHeartbeat } from './heartbeat.js';
export { PostgresDirectory, type PostgresDirectoryOptions } from './directory.js';
export {
  type ChangeOptions,
  type ImportIssuersOptions,
  type UnchangedSinceOption,
  type UpdateIssuerOptions,
  type ImportReport,
  IssuerChangeError,
  type IssuerChangeErrorCode,
  type IssuerChange,
  type IssuerRecord,
  type ReadIssuerChangesOptions,
  type ReadIssuersOptions,
  addIssuer,
  importIssuers,
  readIssuerChanges,
  readIssuers,
  readLastIssuerChange,
  removeIssuer,
  updateIssuer,
} from './issuer-table.js';
export { PostgresIdempotencyStore, type PostgresIdempotencyStoreOptions } from './idempotency-store.js';
export type { NotificationConnection, NotificationMessage, NotificationSource } from './notification-connection.js';
export { type PostgresListener, type PostgresListenerOptions, postgresListener } from './notification-listener.js';
export {
  type ControlRowIgnoredEvent,
  type ControlledVerifier,
  type PostgresControls,
  type PostgresControlsOptions,
  postgresControls,
} from './operator-controls.js';
export { PostgresPaymentLinkStore, type PostgresPaymentLinkStoreOptions } from './payment-link-store.js';
export {
  type KeyHistoryRowRefusedEvent,
  type KeyHistoryVerifier,
  type PostgresKeyHistory,
  type PostgresKeyHistoryOptions,
  postgresKeyHistory,
} from './postgres-key-history.js';
export { type PostgresRegistry, type PostgresRegistryOptions, type RegistryEvent, postgresRegistry } from './postgres-registry.js';
export { registryDigest } from './registry-digest.js';
export type { RefusedRow, RefusedRowRule } from './registry-rows.js';
export {
  type FollowedVerifier,
  type PostgresFollowers,
  type PostgresFollowersOptions,
  postgresFollowers,
} from './postgres-followers.js';
export { type PoolSettings, type PoolSettingsOptions, poolSettings } from './pool-settings.js';
export type { RolesReport, SchemaRoles } from './schema-roles.js';
export { MigrationError, type MigrationErrorCode, type MigrationFacts } from './migration-error.js';
export { type MigrateOptions, type MigrationReport, SCHEMA_VERSIONS, type SchemaArea, migrate } from './schema.js';
export {
  type PooledSqlClient,
  type SqlClient,
  type SqlPool,
  type SqlRow,
  StatementTimeoutError,
} from './sql-client.js';
export type { FollowOptions } from './table-follower.js';
