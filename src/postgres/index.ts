/**
 * paygate-auth/postgres: payment links, idempotency records and operator controls shared by many
 * gateway instances through one PostgreSQL database. Takes the caller's client (a `pg.Pool`, a
 * `pg.Client` or PGlite); `pg` itself is never loaded here.
 *
 * @module paygate-auth/postgres
 */
export {
  CONTROL_ACTIONS,
  type ControlAction,
  type ControlRecord,
  type ControlRequest,
  type ControlState,
  foldControls,
  readControlRecords,
  recordControl,
} from './control-log.js';
export { isUnavailable } from './database-errors.js';
export { PostgresIdempotencyStore, type PostgresIdempotencyStoreOptions } from './idempotency-store.js';
export { type ListenOption, type NotificationConnection, type NotificationMessage, type NotificationSource } from './notification-connection.js';
export { type ControlledVerifier, type PostgresControls, type PostgresControlsOptions, postgresControls } from './operator-controls.js';
export { PostgresPaymentLinkStore } from './payment-link-store.js';
export { CONTROLS_CHANNEL, type MigrateOptions, type MigrationReport, SCHEMA_AREAS, SCHEMA_VERSIONS, type SchemaArea, TABLES, migrate } from './schema.js';
export { type PooledSqlClient, type SqlClient, type SqlPool, type SqlRow } from './sql-client.js';
