/**
 * paygate-auth/postgres: payment links, idempotency records, the directory, operator controls and
 * the issuer registry and the issuers' key history, shared by many gateway instances through one
 * PostgreSQL database, every statement bounded. Takes the caller's client (a `pg.Pool`, best
 * opened with `poolSettings()`, a `pg.Client` or PGlite); `pg` itself is never loaded here.
 *
 * @module paygate-auth/postgres
 */
export {
  CONTROL_ACTIONS,
  type ControlAction,
  type ControlRecord,
  type ControlRequest,
  type ControlState,
  type CompactionReport,
  type ControlsRead,
  NO_CONTROLS,
  checkControlRequest,
  compactControls,
  foldControls,
  readControlRecords,
  readControlsAfter,
  recordControl,
} from './control-log.js';
export { isUnavailable } from './database-errors.js';
export {
  type FleetState,
  type FleetWaitOptions,
  type FleetWaitReport,
  type InstanceRecord,
  LIVE_MARGIN,
  type ReadFleetOptions,
  type RegistryState,
  readFleet,
  readInstances,
  waitForFleet,
} from './fleet.js';
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
export { type ReadKeyHistoryOptions, type RefusedKeyRow, readKeyHistory } from './key-history-table.js';
export type { NotificationConnection, NotificationMessage, NotificationSource } from './notification-connection.js';
export { type PostgresListener, type PostgresListenerOptions, postgresListener } from './notification-listener.js';
export {
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
export { DEFAULT_ROLES, type RolesReport, type SchemaRoles } from './schema-roles.js';
export {
  CONTROLS_CHANNEL,
  type MigrateOptions,
  REGISTRY_CHANNEL,
  type MigrationReport,
  SCHEMA_AREAS,
  SCHEMA_VERSIONS,
  type SchemaArea,
  TABLES,
  migrate,
} from './schema.js';
export {
  DEFAULT_STATEMENT_TIMEOUT,
  type PooledSqlClient,
  type SqlClient,
  type SqlPool,
  type SqlRow,
  StatementTimeoutError,
} from './sql-client.js';
export type { FollowOptions } from './table-follower.js';
