/**
 * The fleet as its heartbeats show it (`postgresHeartbeat`): each instance, when it last
 * answered, and what it has applied, beside what the tables hold; and the wait of an operator
 * command until every live instance has applied its change, bounded.
 */
import { checkAllowedHosts, describeValue, numberOption, rejectUnknownOptions, optionNames } from '../internal/index.js';
import { isMissingTable, storageFailure } from './database-errors.js';
import { readRegistrySnapshot } from './issuer-table.js';
import { registryDigest } from './registry-digest.js';
import { checkRegistryRows } from './registry-rows.js';
import { TABLES } from './schema.js';
import { type SqlClient, type SqlRow, checkClient, checkStatementTimeout, numberColumn, queryWithin } from './sql-client.js';

/** The members of {@link FleetWaitOptions}: any other is refused, naming the nearest. */
const FLEET_WAIT_OPTION_NAMES = optionNames<FleetWaitOptions>({
  registryChange: true,
  control: true,
  timeout: true,
  pollInterval: true,
  statementTimeout: true,
  jwksAllowedHosts: true,
});

/** The members of {@link ReadFleetOptions}: any other is refused, naming the nearest. */
const READ_FLEET_OPTION_NAMES = optionNames<ReadFleetOptions>({ statementTimeout: true, jwksAllowedHosts: true });

/** A registry as an instance applied it, or as the table holds it. */
export interface RegistryState {
  /** The id of the last registry change it includes. */
  readonly change: number;
  /** SHA-256 (hex) of its entries (`registryDigest`). */
  readonly digest: string;
  /** How many issuers it registers. */
  readonly issuers: number;
  /** How many rows of the table it leaves out. */
  readonly refused: number;
}

/** An instance, as its last heartbeat wrote it. */
export interface InstanceRecord {
  /** Its name (text an instance chose: escape it to print it). */
  readonly name: string;
  /** When it started, by its own clock. */
  readonly startedAt: Date;
  /** When it last answered (its last heartbeat), by the database's clock. */
  readonly seenAt: Date;
  /** Milliseconds between its heartbeats. */
  readonly interval: number;
  /** Milliseconds since its last heartbeat, by the database's clock (`Infinity` for a `seen_at` of `-infinity`). */
  readonly silentFor: number;
  /** `true` while it has answered within three heartbeat intervals and {@link LIVE_MARGIN} more. */
  readonly live: boolean;
  /** The registry it applied; `null` when it does not follow the registry table. */
  readonly registry: RegistryState | null;
  /** The id of the last operator control it applied; `null` when it does not follow the controls. */
  readonly control: number | null;
}

/** What the tables hold now, beside the instances. */
export interface FleetState {
  /** Every row of the heartbeat table, by name, live or not. */
  readonly instances: readonly InstanceRecord[];
  /** The registry the table holds, as an instance would apply it; `null` when the database holds no registry. */
  readonly registry: RegistryState | null;
  /** The id of the last operator control; `null` when the database holds no controls. */
  readonly control: number | null;
}

/** Milliseconds beyond three heartbeat intervals that an instance stays live without a heartbeat. */
export const LIVE_MARGIN = 2000;

/** Options of the fleet's reads. */
export interface ReadFleetOptions {
  /**
   * Milliseconds each statement may take, the wait for a pooled connection included. 10 to 600 000.
   * @default 5000
   */
  readonly statementTimeout?: number;
  /**
   * Hosts an entry's `jwksUri` may name although special-purpose, as the instances allow them
   * (`postgresRegistry(db, { jwksAllowedHosts })`), so that the digest is the one they compute.
   * @default [] (none)
   */
  readonly jwksAllowedHosts?: readonly string[];
}

function nullable<T>(value: unknown, as: (value: unknown) => T): T | null {
  return value === null || value === undefined ? null : as(value);
}

function toInstance(row: SqlRow): InstanceRecord {
  const interval = numberColumn(row.interval_ms);
  // A seen_at of '-infinity' (written by hand): never heard, silent for ever.
  const silentFor = row.silent_ms === null ? Number.POSITIVE_INFINITY : Math.max(0, numberColumn(row.silent_ms));
  const change = nullable(row.registry_change, numberColumn);
  return Object.freeze({
    name: String(row.name),
    startedAt: row.started_at instanceof Date ? row.started_at : new Date(String(row.started_at)),
    seenAt: row.seen_at instanceof Date ? row.seen_at : new Date(String(row.seen_at)),
    interval,
    silentFor,
    live: silentFor <= 3 * interval + LIVE_MARGIN,
    registry:
      change === null
        ? null
        : Object.freeze({
            change,
            digest: String(row.registry_digest ?? ''),
            issuers: numberColumn(row.registry_issuers ?? 0),
            refused: numberColumn(row.registry_refused ?? 0),
          }),
    control: nullable(row.control, numberColumn),
  });
}

/**
 * Every row of the heartbeat table, by name. A `seen_at` written by hand may be infinite, which
 * PostgreSQL cannot subtract: such a row is silent for ever (`-infinity`) or not at all, as any
 * time ahead of the database's clock is (`infinity`), instead of failing the whole read.
 */
async function instances(db: SqlClient, timeout: number): Promise<InstanceRecord[]> {
  const { rows } = await queryWithin(
    db,
    timeout,
    `SELECT name, started_at, seen_at, interval_ms, registry_change, registry_digest, registry_issuers, registry_refused, control,
            CASE WHEN isfinite(seen_at) THEN (extract(epoch FROM now() - seen_at) * 1000)::bigint
                 WHEN seen_at > now() THEN 0 END AS silent_ms
       FROM ${TABLES.instances} ORDER BY name`,
  );
  return rows.map(toInstance);
}

/**
 * Every instance of the heartbeat table (live or not), by name.
 * @throws {StorageUnavailableError} when the database is unreachable.
 */
export async function readInstances(db: SqlClient, options: ReadFleetOptions = {}): Promise<InstanceRecord[]> {
  rejectUnknownOptions('readInstances', options, READ_FLEET_OPTION_NAMES);
  checkClient(db, 'readInstances');
  const timeout = checkStatementTimeout(options.statementTimeout, 'readInstances');
  try {
    return await instances(db, timeout);
  } catch (error) {
    throw storageFailure(error, 'reading the heartbeats');
  }
}

/**
 * The instances, and what the tables hold now: the registry as every instance would apply it
 * (its change and digest) and the last operator control, each `null` when its area is not there.
 * @throws {StorageUnavailableError} when the database is unreachable.
 */
export async function readFleet(db: SqlClient, options: ReadFleetOptions = {}): Promise<FleetState> {
  rejectUnknownOptions('readFleet', options, READ_FLEET_OPTION_NAMES);
  checkClient(db, 'readFleet');
  const timeout = checkStatementTimeout(options.statementTimeout, 'readFleet');
  const hosts = [...checkAllowedHosts('readFleet', 'jwksAllowedHosts', options.jwksAllowedHosts)];
  try {
    const held = await instances(db, timeout);
    let registry: RegistryState | null = null;
    try {
      const { rows, through } = await readRegistrySnapshot(db, timeout);
      const checked = checkRegistryRows(rows, hosts);
      registry = {
        change: through,
        digest: await registryDigest(checked.registry),
        issuers: checked.registry.size,
        refused: checked.refused.length,
      };
    } catch (error) {
      if (!isMissingTable(error)) throw error;
    }
    let control: number | null = null;
    try {
      const { rows } = await queryWithin(db, timeout, `SELECT coalesce(max(id), 0) AS id FROM ${TABLES.controls}`);
      control = numberColumn(rows[0]?.id ?? 0);
    } catch (error) {
      if (!isMissingTable(error)) throw error;
    }
    return { instances: held, registry, control };
  } catch (error) {
    throw storageFailure(error, 'reading the fleet');
  }
}

/** What to wait for: a registry change, an operator control, or both. */
export interface FleetWaitOptions extends ReadFleetOptions {
  /** The id of the registry change every live instance following the registry must have applied. */
  readonly registryChange?: number;
  /** The id of the operator control every live instance following the controls must have applied. */
  readonly control?: number;
  /**
   * Milliseconds to wait at most; past it, the instances that have not applied it are named. The
   * read under way when it passes (at most `statementTimeout` more) ends the wait. 100 to 600 000.
   * @default 10000
   */
  readonly timeout?: number;
  /**
   * Milliseconds between two reads of the heartbeats. 10 to 10 000.
   * @default 100
   */
  readonly pollInterval?: number;
}

/** What {@link waitForFleet} found. */
export interface FleetWaitReport {
  /** The live instances (when the wait began) that have applied it, by name. */
  readonly applied: readonly string[];
  /** Those that had not when the wait ended, as their last heartbeat shows them. */
  readonly lagging: readonly InstanceRecord[];
  /** Those whose row went during the wait (an instance that closed). */
  readonly gone: readonly string[];
  /** Milliseconds the wait took. */
  readonly waited: number;
}

function checkId(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`waitForFleet: ${name} must be an id (a whole number from 0), got ${describeValue(value)}`);
  }
  return value;
}

/**
 * Waits until every instance live when it begins, and following what changed, has applied the
 * registry change and the control given (as its heartbeat shows), or `timeout` passes: then it
 * resolves naming those that have not (`lagging`). An instance gone silent stays in the wait: it
 * is named, never assumed to have applied it.
 * @throws {TypeError} for bad options. @throws {StorageUnavailableError} when the database is unreachable.
 * @example
 * ```ts
 * const change = await addIssuer(pool, entry, { by: 'alice' });
 * const { lagging } = await waitForFleet(pool, { registryChange: change.id });
 * ```
 */
export async function waitForFleet(db: SqlClient, options: FleetWaitOptions): Promise<FleetWaitReport> {
  rejectUnknownOptions('waitForFleet', options, FLEET_WAIT_OPTION_NAMES);
  checkClient(db, 'waitForFleet');
  const registryChange = checkId('registryChange', options.registryChange);
  const control = checkId('control', options.control);
  const timeout = numberOption('waitForFleet', 'timeout', options.timeout, 10_000, {
    min: 100,
    max: 600_000,
    integer: true,
    unit: 'milliseconds',
  });
  const pollInterval = numberOption('waitForFleet', 'pollInterval', options.pollInterval, 100, {
    min: 10,
    max: 10_000,
    integer: true,
    unit: 'milliseconds',
  });
  const statementTimeout = checkStatementTimeout(options.statementTimeout, 'waitForFleet');
  const started = Date.now();
  const follows = (instance: InstanceRecord) =>
    (registryChange !== undefined && instance.registry !== null) || (control !== undefined && instance.control !== null);
  const done = (instance: InstanceRecord) =>
    (registryChange === undefined || instance.registry === null || instance.registry.change >= registryChange) &&
    (control === undefined || instance.control === null || instance.control >= control);
  // Each read has its statement timeout in full: one capped by the time left (10 ms at the
  // deadline) made a slow answer to the last read a StorageUnavailableError instead of the report.
  const read = () => readInstances(db, { statementTimeout });
  const targets = (await read()).filter((instance) => instance.live && follows(instance)).map((instance) => instance.name);
  for (;;) {
    const rows = new Map((await read()).map((instance) => [instance.name, instance]));
    const gone = targets.filter((name) => !rows.has(name));
    const applied = targets.filter((name) => rows.has(name) && done(rows.get(name) as InstanceRecord));
    const lagging = targets.filter((name) => rows.has(name) && !applied.includes(name)).map((name) => rows.get(name) as InstanceRecord);
    const waited = Date.now() - started;
    if (lagging.length === 0 || waited >= timeout) return { applied, lagging, gone, waited };
    await new Promise((resolve) => setTimeout(resolve, Math.min(pollInterval, started + timeout - Date.now())));
  }
}
