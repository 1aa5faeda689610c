/**
 * Where the example gateway keeps its payment links, idempotency keys and directory (departments,
 * stores, shoppers), and where its issuer registry and operator controls come from.
 *
 * - Without DATABASE_URL: in memory, this process only (`npm run example` needs no server); the
 *   registry is the demo issuer, in code.
 * - With DATABASE_URL (postgres://…): PostgreSQL through `pg`, shared by every instance on it. The
 *   pool bounds every wait (`poolSettings`: connect timeout, statement timeout, TCP keepalive), so a
 *   database that goes silent costs a 503 within seconds, never a hung request. The schema is
 *   migrated at start (safe from several instances at once), the demo tenants are seeded into the
 *   shared directory (a customer gets one shopper UUID on every instance and across restarts),
 *   operator controls are attached to the verifier (`npx paygate-auth revoke-key …` reaches every
 *   instance within a second), and expired idempotency keys are purged every minute (all of them, a
 *   batch of 1000 per statement). The issuer
 *   registry is the table's: seeded with the demo issuer when it holds none, and followed, so
 *   `npx paygate-auth issuers add|update|remove …` reaches every instance within a second, with no
 *   restart. The verifier's key history is shared through the database too, so
 *   `npx paygate-auth keys status` shows every instance's view of each key. One call
 *   (`postgresFollowers`) starts the registry, the controls and the key history on one LISTEN
 *   connection, and attaches all three to the verifier.
 *
 * Tuning, with DATABASE_URL: the PAYGATE_* variables of `settings.mjs`, checked there before anything
 * starts.
 */
import { IssuerRegistry, quote } from 'paygate-auth';
import { InMemoryIdempotencyStore } from 'paygate-auth/payment-links';
import {
  MigrationError,
  PostgresDirectory,
  PostgresIdempotencyStore,
  PostgresPaymentLinkStore,
  importIssuers,
  isUnavailable,
  migrate,
  poolSettings,
  postgresFollowers,
  postgresHeartbeat,
  readIssuers,
} from 'paygate-auth/postgres';

/** The actor of the seeding in the registry's audit trail. */
export const SEEDED_BY = 'example-gateway';

function count(n, noun) {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
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

/**
 * The database could not be reached at start, or refused the connection (no such database or role,
 * a wrong password): its message names the host, never the password.
 */
export class DatabaseUnreachableError extends Error {
  name = 'DatabaseUnreachableError';
}

/**
 * The role the gateway logs in as (the gateway's role of least privilege, docs/postgres.md) may not
 * do what the start needs: upgrade a schema the owner has not upgraded, or seed the empty registry
 * table. Its message, one line, names the database (never the password), the role and what to do.
 */
export class RoleRefusedError extends Error {
  name = 'RoleRefusedError';
}

/**
 * The database's schema is not one this gateway can start on: newer than its paygate-auth knows,
 * or its ledger dropped or emptied. Its message, one line, names the database (never the
 * password), what `migrate` found and what to do.
 */
export class SchemaRefusedError extends Error {
  name = 'SchemaRefusedError';
}

/** SQLSTATE of a statement the role has no privilege for. */
/**
 * Most live idempotency keys of one tenant in memory: one tenant creating links with a new key each
 * cannot fill the store (100 000 keys) and have every other tenant's keys refused.
 */
export const MEMORY_KEYS_PER_TENANT = 10_000;

/** Expired idempotency keys deleted per statement of a purge (`PostgresIdempotencyStore`'s `purgeBatch`). */
export const PURGE_BATCH = 1000;

/**
 * Deletes every idempotency key expired now, {@link PURGE_BATCH} per statement: `purgeExpired()`
 * deletes one batch, and a batch full means more are left. Resolves how many were deleted; a
 * failure ends the purge (the next one, a minute later, goes on).
 * @param {{ purgeExpired(): Promise<number> }} idempotency
 */
export async function purgeAllExpired(idempotency) {
  let purged = 0;
  for (;;) {
    const count = await idempotency.purgeExpired();
    purged += count;
    if (count < PURGE_BATCH) return purged;
  }
}

const INSUFFICIENT_PRIVILEGE = '42501';

/** The codes of `migrate`'s refusals of the role's rights (the others are of the schema's state). */
const ROLE_REFUSALS = new Set(['upgrade_denied', 'ledger_denied']);

/**
 * Which bound of `tuning` `error` (or an error it was caused by) is, in words naming the variable
 * that sets it: a statement's (`StatementTimeoutError`) or a connection attempt's (pg's own
 * errors); `undefined` for any other error.
 */
function boundPassed(error, { statementTimeout, connectTimeout }) {
  let current = error;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth += 1) {
    if (current.code === 'statement_timeout')
      return `no answer within ${statementTimeout} ms (PAYGATE_STATEMENT_TIMEOUT_MS: raise it to wait longer), the network or the server may be down`;
    if (/^(timeout exceeded when trying to connect|Connection terminated due to connection timeout)$/.test(String(current.message)))
      return `no answer within ${connectTimeout} ms when connecting (PAYGATE_CONNECT_TIMEOUT_MS: raise it to wait longer), the network or the server may be down`;
    current = current.cause;
  }
  return undefined;
}

/**
 * Migrates the schema; a refusal of `migrate` (a `MigrationError`, as `cause`) is a
 * {@link RoleRefusedError} when the role may not do it, else a {@link SchemaRefusedError}.
 */
async function migrateAs(pool, url, statementTimeout) {
  try {
    await migrate(pool, { statementTimeout });
  } catch (error) {
    if (!(error instanceof MigrationError)) throw error;
    const line = `cannot start on ${shownDatabase(url)}: ${error.message}`;
    throw ROLE_REFUSALS.has(error.code) ? new RoleRefusedError(line, { cause: error }) : new SchemaRefusedError(line, { cause: error });
  }
}

/** Seeds the empty registry table with `issuers`; refused for lack of privilege, a {@link RoleRefusedError}. */
async function seedRegistry(pool, url, issuers, statementTimeout) {
  try {
    return await importIssuers(pool, issuers, { by: SEEDED_BY, statementTimeout });
  } catch (error) {
    if (error?.code !== INSUFFICIENT_PRIVILEGE) throw error;
    const { rows } = await pool.query('SELECT session_user AS role');
    throw new RoleRefusedError(
      `the issuer registry at ${shownDatabase(url)} holds no issuer, and role ${quote(String(rows[0]?.role))} may not seed it with the demo issuer (${quote(error.message)}): start the gateway once as the tables' owner, which seeds it, then as this role`,
      { cause: error },
    );
  }
}

/**
 * Opens the stores `settings` (from `readSettings`, checked) ask for: `{ description, registry, store, idempotency, directory,
 * attach(verifier), close() }`. `registry` is the issuer registry to build the verifier with;
 * `attach` attaches what follows the database to it. In memory, `registry` holds `issuers`,
 * `store` is `undefined` (the handler's default), `idempotency` an `InMemoryIdempotencyStore`
 * holding each tenant to {@link MEMORY_KEYS_PER_TENANT} live keys, and `directory` is
 * `memoryDirectory`; with a database URL, `seeds` are written to the shared directory, and
 * `issuers` to the registry table if it holds none (by {@link SEEDED_BY}).
 * @throws {DatabaseUnreachableError} when the database cannot be reached.
 */
export async function openStores(settings, { seeds, memoryDirectory, issuers }) {
  const { databaseUrl: url, tuning, instanceName } = settings;
  if (url === undefined) {
    return {
      description: 'memory (this process only; set DATABASE_URL to share links, keys and shoppers through PostgreSQL)',
      registry: new IssuerRegistry(issuers),
      registryDescription: undefined,
      store: undefined,
      idempotency: new InMemoryIdempotencyStore({ maxRecordsPerTenant: MEMORY_KEYS_PER_TENANT }),
      directory: memoryDirectory,
      attach() {},
      async close() {},
    };
  }
  const { leaseTime, pendingWait, statementTimeout, connectTimeout, controlsPollInterval, registryPollInterval } = tuning;
  const { flushInterval, heartbeatInterval } = tuning;
  const { default: pg } = await import('pg');
  const pool = new pg.Pool(poolSettings(url, { statementTimeout, connectTimeout }));
  // An idle connection cut by a database restart: the pool drops it and the next query reconnects.
  pool.on('error', () => {});
  // Built before anything starts, so that an option they refuse stops the gateway at once: once the
  // followers hold a connection, the pool cannot be ended.
  let idempotency;
  try {
    idempotency = new PostgresIdempotencyStore(pool, { leaseTime, pendingWait, statementTimeout, purgeBatch: PURGE_BATCH });
  } catch (error) {
    await pool.end();
    throw error;
  }
  try {
    await migrateAs(pool, url, statementTimeout);
    // Two instances starting at once may both find the table empty: the second import finds the
    // entries registered already and changes nothing.
    // The gateway's role of least privilege may not write the table: that is an operator's or the owner's.
    const seeded =
      (await readIssuers(pool, { statementTimeout })).length === 0 ? await seedRegistry(pool, url, issuers, statementTimeout) : undefined;
    // The registry, the operator controls and the key history, on one LISTEN connection.
    const followers = await postgresFollowers(pool, {
      statementTimeout,
      registry: { pollInterval: registryPollInterval },
      controls: { pollInterval: controlsPollInterval },
      keyHistory: { flushInterval },
    });
    const { registry, controls } = followers;
    // Departments, stores and shoppers kept in the process, emptied on every change: its
    // notifications come on the followers' connection.
    const directory = new PostgresDirectory(pool, { statementTimeout, listen: followers.listener });
    const started = (async () => {
      await directory.seed(seeds);
      await directory.start();
      // What this instance applied, for `npx paygate-auth fleet` and the commands' --wait.
      return postgresHeartbeat(pool, {
        ...(instanceName === undefined ? {} : { name: instanceName }),
        registry,
        controls,
        interval: heartbeatInterval,
        statementTimeout,
      });
    })();
    const heartbeat = await started.catch(async (error) => {
      await directory.close();
      await followers.close();
      throw error;
    });
    // One purge at a time: a purge still deleting a backlog when the next minute comes is not doubled.
    let purging = false;
    const purge = setInterval(() => {
      if (purging) return;
      purging = true;
      purgeAllExpired(idempotency)
        .catch(() => {})
        .finally(() => {
          purging = false;
        });
    }, 60_000);
    purge.unref();
    return {
      description: `PostgreSQL ${shownDatabase(url)} (links, idempotency keys, directory, operator controls, issuer registry, key history and heartbeats shared)`,
      registry: registry.registry(),
      registryDescription: `PostgreSQL (${count(registry.registry().size, 'issuer')}${seeded?.added.length ? ', seeded with the demo issuer' : ''}; npx paygate-auth issuers list)`,
      store: new PostgresPaymentLinkStore(pool, { statementTimeout }),
      idempotency,
      directory,
      attach: (verifier) => followers.attach(verifier),
      async close() {
        clearInterval(purge);
        await heartbeat.close();
        await directory.close();
        await followers.close();
        await pool.end();
      },
    };
  } catch (error) {
    // Not awaited: pg's end() waits for a connection attempt in flight, which on a silent network
    // lasts the whole connect timeout; the gateway gives up within the bound that passed.
    pool.end().catch(() => {});
    // A bound passed: one line naming the host, the bound and the variable that sets it.
    const bound = boundPassed(error, tuning);
    if (bound !== undefined)
      throw new DatabaseUnreachableError(`cannot reach the database at ${shownDatabase(url)}: ${bound}`, { cause: error });
    // Unreachable, not a fault of the schema: one line naming the host, for the operator.
    if (isUnavailable(error))
      throw new DatabaseUnreachableError(`cannot reach the database at ${shownDatabase(url)}: ${error.message}`, {
        cause: error,
      });
    // The server refused the connection itself (SQLSTATE class 28, or 3D: no such database): a
    // setting to correct, not a fault of the schema.
    if (error?.severity === 'FATAL' && /^(28|3D)/.test(String(error.code)))
      throw new DatabaseUnreachableError(
        `the database at ${shownDatabase(url)} refused the connection: ${error.message} (check DATABASE_URL)`,
        { cause: error },
      );
    throw error;
  }
}
