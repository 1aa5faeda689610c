/**
 * The command line's own helpers over the PostgreSQL tables: no export of package.json reaches
 * them, and only src/cli may import this file (.dependency-cruiser.cjs). An instance uses
 * `paygate-auth/postgres`; what is here reads and writes the tables as an operator's tool does.
 * Its names are listed in etc/internal-surface.md (kept current by test/package/public-surface.test.ts).
 */
export {
  type ControlAction,
  checkControlRequest,
  compactControls,
  foldControls,
  readControlRecords,
  recordControl,
} from './control-log.js';
export { isMissingTable } from './database-errors.js';
export { type FleetState, type FleetWaitReport, type InstanceRecord, LIVE_MARGIN, readFleet, waitForFleet } from './fleet.js';
export { readKeyHistory } from './key-history-table.js';
export { DEFAULT_ROLES } from './schema-roles.js';
export { SCHEMA_AREAS } from './schema.js';
export { TABLES } from './schema-names.js';
export { issuerTooLong } from './registry-rows.js';
