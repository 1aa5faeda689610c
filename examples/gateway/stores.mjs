/**
 * Where the example gateway keeps its payment links and idempotency keys, and where its operator
 * controls come from.
 *
 * - Without DATABASE_URL: in memory, this process only (`npm run example` needs no server).
 * - With DATABASE_URL (postgres://…): PostgreSQL through `pg`, shared by every instance on it. The
 *   schema is migrated at start (safe from several instances at once), operator controls are
 *   attached to the verifier (`npx paygate-auth revoke-key …` reaches every instance within a
 *   second), and expired idempotency keys are purged every minute.
 *
 * Tuning, with DATABASE_URL:
 *   PAYGATE_IDEMPOTENCY_LEASE_MS  how long a dead instance's pending key stays held (default 30000)
 *   PAYGATE_CONTROLS_POLL_MS      how often the controls table is re-read besides notifications (default 5000)
 */
import {
  PostgresIdempotencyStore,
  PostgresPaymentLinkStore,
  migrate,
  postgresControls,
} from 'paygate-auth/postgres';

function whole(env, name, fallback) {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  if (!/^\d+$/.test(text)) throw new TypeError(`${name} must be a whole number of milliseconds, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** The database's address without user or password. */
function shownDatabase(url) {
  try {
    const { hostname, port, pathname } = new URL(url);
    return `postgres://${hostname}${port ? `:${port}` : ''}${pathname}`;
  } catch {
    return 'DATABASE_URL';
  }
}

const inMemory = Object.freeze({
  description: 'in memory (this process only; set DATABASE_URL to share them through PostgreSQL)',
  store: undefined,
  idempotency: undefined,
  attach() {},
  async close() {},
});

/**
 * Opens the stores `env` asks for: `{ description, store, idempotency, attach(verifier), close() }`.
 * `store` and `idempotency` are `undefined` in memory (the handler's defaults).
 */
export async function openStores(env = process.env) {
  const url = env.DATABASE_URL;
  if (url === undefined || url === '') return inMemory;
  const leaseTime = whole(env, 'PAYGATE_IDEMPOTENCY_LEASE_MS', 30_000);
  const pollInterval = whole(env, 'PAYGATE_CONTROLS_POLL_MS', 5000);
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 2000 });
  // An idle connection cut by a database restart: the pool drops it and the next query reconnects.
  pool.on('error', () => {});
  try {
    await migrate(pool);
    const controls = await postgresControls(pool, { pollInterval });
    const idempotency = new PostgresIdempotencyStore(pool, { leaseTime });
    const purge = setInterval(() => idempotency.purgeExpired().catch(() => {}), 60_000);
    purge.unref();
    return {
      description: `PostgreSQL ${shownDatabase(url)} (shared; operator controls attached)`,
      store: new PostgresPaymentLinkStore(pool),
      idempotency,
      attach: (verifier) => controls.attach(verifier),
      async close() {
        clearInterval(purge);
        await controls.close();
        await pool.end();
      },
    };
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
}
