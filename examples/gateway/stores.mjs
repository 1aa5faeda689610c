/**
 * Where the example gateway keeps its payment links, idempotency keys and directory (departments,
 * stores, shoppers), and where its operator controls come from.
 *
 * - Without DATABASE_URL: in memory, this process only (`npm run example` needs no server).
 * - With DATABASE_URL (postgres://…): PostgreSQL through `pg`, shared by every instance on it. The
 *   pool bounds every wait (`poolSettings`: connect timeout, statement timeout, TCP keepalive), so a
 *   database that goes silent costs a 503 within seconds, never a hung request. The schema is
 *   migrated at start (safe from several instances at once), the demo tenants are seeded into the
 *   shared directory (a customer gets one shopper UUID on every instance and across restarts),
 *   operator controls are attached to the verifier (`npx paygate-auth revoke-key …` reaches every
 *   instance within a second), and expired idempotency keys are purged every minute.
 *
 * Tuning, with DATABASE_URL:
 *   PAYGATE_IDEMPOTENCY_LEASE_MS  how long a dead instance's pending key stays held (default 30000)
 *   PAYGATE_CONTROLS_POLL_MS      how often the controls table is re-read besides notifications (default 5000)
 */
import {
  PostgresDirectory,
  PostgresIdempotencyStore,
  PostgresPaymentLinkStore,
  isUnavailable,
  migrate,
  poolSettings,
  postgresControls,
} from 'paygate-auth/postgres';

function whole(env, name, fallback) {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  if (!/^\d+$/.test(text)) throw new TypeError(`${name} must be a whole number of milliseconds, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** The database's address without user or password. */
export function shownDatabase(url) {
  try {
    const { hostname, port, pathname } = new URL(url);
    return `postgres://${hostname}${port ? `:${port}` : ''}${pathname}`;
  } catch {
    return 'DATABASE_URL';
  }
}

/** The database could not be reached at start: its message names the host, never the password. */
export class DatabaseUnreachableError extends Error {
  name = 'DatabaseUnreachableError';
}

/**
 * Opens the stores `env` asks for: `{ description, store, idempotency, directory, attach(verifier),
 * close() }`. In memory, `store` and `idempotency` are `undefined` (the handler's defaults) and
 * `directory` is `memoryDirectory`; with DATABASE_URL, `seeds` are written to the shared directory.
 * @throws {DatabaseUnreachableError} when DATABASE_URL is set and the database cannot be reached.
 */
export async function openStores(env, { seeds, memoryDirectory }) {
  const url = env.DATABASE_URL;
  if (url === undefined || url === '') {
    return {
      description: 'memory (this process only; set DATABASE_URL to share links, keys and shoppers through PostgreSQL)',
      store: undefined,
      idempotency: undefined,
      directory: memoryDirectory,
      attach() {},
      async close() {},
    };
  }
  const leaseTime = whole(env, 'PAYGATE_IDEMPOTENCY_LEASE_MS', 30_000);
  const pollInterval = whole(env, 'PAYGATE_CONTROLS_POLL_MS', 5000);
  const { default: pg } = await import('pg');
  const pool = new pg.Pool(poolSettings(url));
  // An idle connection cut by a database restart: the pool drops it and the next query reconnects.
  pool.on('error', () => {});
  try {
    await migrate(pool);
    const directory = new PostgresDirectory(pool);
    await directory.seed(seeds);
    const controls = await postgresControls(pool, { pollInterval });
    const idempotency = new PostgresIdempotencyStore(pool, { leaseTime });
    const purge = setInterval(() => idempotency.purgeExpired().catch(() => {}), 60_000);
    purge.unref();
    return {
      description: `PostgreSQL ${shownDatabase(url)} (links, keys, directory and operator controls shared)`,
      store: new PostgresPaymentLinkStore(pool),
      idempotency,
      directory,
      attach: (verifier) => controls.attach(verifier),
      async close() {
        clearInterval(purge);
        await controls.close();
        await pool.end();
      },
    };
  } catch (error) {
    await pool.end().catch(() => {});
    // Unreachable, not a fault of the schema: one line naming the host, for the operator.
    if (isUnavailable(error))
      throw new DatabaseUnreachableError(`cannot reach the database at ${shownDatabase(url)}: ${error.message}`, {
        cause: error,
      });
    throw error;
  }
}
