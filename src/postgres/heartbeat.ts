/**
 * Each instance's heartbeat: one row per instance in `paygate_instances`, written every
 * `interval` and at once after its registry or its controls applied something: its name, when it
 * last answered (the database's clock), the last registry change it applied (with the digest of
 * that registry) and the last operator control. `paygate-auth fleet` lists the rows; `--wait`
 * waits on them. Rows not written for `retention` are deleted by the heartbeats of the others,
 * and an instance deletes its own at `close()`.
 */
import { describeHolder, describeValue, numberOption, rejectUnknownOptions, optionNames } from '../internal/index.js';
import { TABLES } from './schema.js';
import type { PostgresControls } from './operator-controls.js';
import type { PostgresRegistry } from './postgres-registry.js';
import { type SqlClient, checkClient, queryWithin } from './sql-client.js';
import { type TableFollower, poller } from './table-follower.js';

/** The members of {@link PostgresHeartbeatOptions}: any other is refused, naming the nearest. */
const POSTGRES_HEARTBEAT_OPTION_NAMES = optionNames<PostgresHeartbeatOptions>({
  name: true,
  registry: true,
  controls: true,
  interval: true,
  retention: true,
  statementTimeout: true,
  onError: true,
  onRecovered: true,
});

/** Options of {@link postgresHeartbeat}. */
export interface PostgresHeartbeatOptions {
  /**
   * The instance's name, unique in the fleet: 1 to 200 characters, no control characters.
   * @default `<host name>:<process id>`
   */
  readonly name?: string | undefined;
  /** The instance's registry: its last change applied and digest are reported. @default none (`null`) */
  readonly registry?: Pick<PostgresRegistry, 'through' | 'digest' | 'refused' | 'registry' | 'onApplied'> | undefined;
  /** The instance's operator controls: the last action applied is reported. @default none (`null`) */
  readonly controls?: Pick<PostgresControls, 'state' | 'onApplied'> | undefined;
  /**
   * Milliseconds between heartbeats; a row unwritten for three of them and 2 s more is not live.
   * 100 to 600 000.
   * @default 2000
   */
  readonly interval?: number | undefined;
  /**
   * Milliseconds after which a row no heartbeat wrote is deleted (by any instance's heartbeat):
   * the table's retention. 60 000 to 2 592 000 000 (30 days).
   * @default 86400000 (a day)
   */
  readonly retention?: number | undefined;
  /**
   * Milliseconds each statement may take, the wait for a pooled connection included. 10 to 600 000.
   * @default 5000
   */
  readonly statementTimeout?: number | undefined;
  /**
   * Receives each stall of the heartbeats (the first failure after a success), once; retried
   * after 250 ms, doubling up to `interval`. Must not throw (what it throws is ignored).
   * @default one line to console.error
   */
  readonly onError?: ((error: unknown) => void) | undefined;
  /**
   * Called once when a heartbeat succeeds again after a stall reported to `onError`.
   * @default one line to console.error when `onError` is not given either
   */
  readonly onRecovered?: (() => void) | undefined;
}

/** An instance's heartbeat. */
export interface PostgresHeartbeat {
  /** The name its row has. */
  readonly name: string;
  /**
   * Writes the row now. @throws the database's error (background heartbeats report theirs to
   * `onError`). @throws {ClosedError} after `close()` (`code` `closed`), writing nothing.
   */
  beat(): Promise<void>;
  /**
   * Stops the heartbeats, waits for one in flight, and deletes the row (a failure of which goes to
   * `onError`). Called again, it resolves with the first call.
   */
  close(): Promise<void>;
}

const OWNER = 'postgresHeartbeat';
const LOG_PREFIX = 'paygate-auth/postgres: heartbeat:';
const MAX_NAME = 200;

/** `<host name>:<process id>` where Node's `os` is at hand, else a random name. */
async function defaultName(): Promise<string> {
  try {
    const { hostname } = await import('node:os');
    return `${hostname()}:${process.pid}`;
  } catch {
    return `instance-${crypto.randomUUID().slice(0, 8)}`;
  }
}

function checkName(name: unknown): string {
  if (typeof name !== 'string' || name === '' || name.length > MAX_NAME || /[\u0000-\u001f\u007f]/.test(name)) {
    throw new TypeError(`${OWNER}: name must be 1 to ${MAX_NAME} characters without control characters, got ${describeValue(name)}`);
  }
  return name;
}

/**
 * One statement: the row written (its `seen_at` the database's clock), and the rows unwritten for
 * `retention` deleted (through the index on `seen_at`).
 */
const BEAT = `WITH beat AS (
    INSERT INTO ${TABLES.instances} AS held
      (name, started_at, seen_at, interval_ms, registry_change, registry_digest, registry_issuers, registry_refused, control)
    VALUES ($1, to_timestamp($2::double precision / 1000), now(), $3, $4, $5, $6, $7, $8)
    ON CONFLICT (name) DO UPDATE SET started_at = excluded.started_at, seen_at = excluded.seen_at,
      interval_ms = excluded.interval_ms, registry_change = excluded.registry_change, registry_digest = excluded.registry_digest,
      registry_issuers = excluded.registry_issuers, registry_refused = excluded.registry_refused, control = excluded.control
    RETURNING 1
  )
  DELETE FROM ${TABLES.instances} WHERE seen_at < now() - $9 * interval '1 millisecond' AND name <> $1`;

class Heartbeat implements PostgresHeartbeat {
  readonly name: string;
  readonly #db: SqlClient;
  readonly #options: PostgresHeartbeatOptions;
  readonly #follower: TableFollower;
  readonly #interval: number;
  readonly #retention: number;
  readonly #started = Date.now();
  readonly #unsubscribe: (() => void)[] = [];
  readonly #onError: (error: unknown) => void;
  #closing: Promise<void> | undefined;

  constructor(db: SqlClient, name: string, options: PostgresHeartbeatOptions) {
    this.#db = db;
    this.name = name;
    this.#options = options;
    this.#interval = numberOption(OWNER, 'interval', options.interval, 2000, {
      min: 100,
      max: 600_000,
      integer: true,
      unit: 'milliseconds',
    });
    this.#retention = numberOption(OWNER, 'retention', options.retention, 86_400_000, {
      min: 60_000,
      max: 2_592_000_000,
      integer: true,
      unit: 'milliseconds',
    });
    for (const [key, follower] of [
      ['registry', options.registry],
      ['controls', options.controls],
    ] as const) {
      if (follower !== undefined && typeof follower?.onApplied !== 'function') {
        throw new TypeError(
          `${OWNER}: ${key} must be what ${key === 'registry' ? 'postgresRegistry' : 'postgresControls'}() resolves, got ${describeHolder(follower, 'onApplied')}`,
        );
      }
    }
    ({ follower: this.#follower, onError: this.#onError } = poller(db, {
      owner: OWNER,
      logPrefix: LOG_PREFIX,
      interval: this.#interval,
      statementTimeout: options.statementTimeout,
      onError: options.onError,
      onRecovered: options.onRecovered,
      work: () => this.#write(),
    }));
  }

  async start(): Promise<void> {
    await this.#follower.start();
    // A change applied is reported at once, so that a waiting operator hears of it.
    const soon = () => {
      this.beat().catch((error: unknown) => this.#follower.stall(error));
    };
    if (this.#options.registry !== undefined) this.#unsubscribe.push(this.#options.registry.onApplied(soon));
    if (this.#options.controls !== undefined) this.#unsubscribe.push(this.#options.controls.onApplied(soon));
  }

  beat(): Promise<void> {
    return this.#follower.reload('beat()');
  }

  async #write(): Promise<void> {
    const { registry, controls } = this.#options;
    await queryWithin(this.#db, this.#follower.timeout, BEAT, [
      this.name,
      this.#started,
      this.#interval,
      registry === undefined ? null : registry.through,
      registry === undefined ? null : registry.digest,
      registry === undefined ? null : registry.registry().size,
      registry === undefined ? null : registry.refused.length,
      controls === undefined ? null : controls.state().through,
      this.#retention,
    ]);
  }

  /** Every call shares the first one's work: each resolves once the row is deleted. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const unsubscribe of this.#unsubscribe) unsubscribe();
      await this.#follower.close();
      await queryWithin(this.#db, this.#follower.timeout, `DELETE FROM ${TABLES.instances} WHERE name = $1`, [this.name]).catch(
        this.#onError,
      );
    })();
    return this.#closing;
  }
}

/**
 * Starts the heartbeat of this instance in `db`: writes its row now (rejecting when that fails),
 * then every `interval`, and at once after `registry` or `controls` applied something.
 *
 * @param db A `pg.Pool`, a `pg.Client` or PGlite, migrated (`migrate(db, { only: 'fleet' })`).
 * @throws {TypeError} for a bad option.
 * @example
 * ```ts
 * const heartbeat = await postgresHeartbeat(pool, { name: 'gateway-1', registry, controls });
 * // at shutdown: await heartbeat.close(); (its row deleted)
 * ```
 */
export async function postgresHeartbeat(db: SqlClient, options: PostgresHeartbeatOptions = {}): Promise<PostgresHeartbeat> {
  rejectUnknownOptions('postgresHeartbeat', options, POSTGRES_HEARTBEAT_OPTION_NAMES);
  checkClient(db, OWNER);
  const name = checkName(options.name ?? (await defaultName()));
  const heartbeat = new Heartbeat(db, name, options);
  await heartbeat.start();
  return heartbeat;
}
