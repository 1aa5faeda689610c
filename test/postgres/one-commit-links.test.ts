/**
 * Payment links on a real PostgreSQL with PostgresDirectory started: one statement (one commit)
 * per new link, the fallback to the claim when a key has a record, nothing half-written when a
 * connection is killed inside a creation, and the directory's cache emptied across instances.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { createTestPglite } from './pglite.js';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { HandlerResponse } from '../../src/payment-links/index.js';
import { randomIds } from '../../src/payment-links/index.js';
import { PostgresDirectory, PostgresIdempotencyStore, PostgresPaymentLinkStore, migrate } from '../../src/postgres/index.js';
import { TABLES } from '../../src/postgres/schema-names.js';
import { SEEDS, TENANT_A, jsonRequest, makeHandler, useCallers, validBody } from '../payment-links/support.js';
import { eventually } from './eventually.js';
import { type PgServer, openPool, skipWithoutPostgres, startPostgres } from './pg-server.js';

const SKIP = skipWithoutPostgres('test/postgres/one-commit-links.test.ts');
const callers = useCallers();
/** The bound for a change to reach another instance; the notification is spaced by at most 250 ms of it. */
const INVALIDATION_BOUND = 1000;

let server: PgServer;
let url: string;
let admin: pg.Pool;
const closing: (() => Promise<void>)[] = [];

/** Statements run on a pool's checked-out connections, as texts (one per round trip). */
interface Counted {
  readonly pool: pg.Pool;
  readonly statements: string[];
}

/** A pool whose checked-out connections record each statement they run. */
function countingPool(): Counted {
  const pool = openPool(url, { max: 8 });
  const statements: string[] = [];
  const counted = Symbol('counted');
  const connect = pool.connect.bind(pool);
  Object.assign(pool, {
    connect: async () => {
      const client = (await connect()) as pg.PoolClient & { [counted]?: true };
      if (client[counted] !== true) {
        const query = client.query.bind(client) as (...args: unknown[]) => unknown;
        Object.assign(client, {
          [counted]: true,
          query: (...args: unknown[]) => {
            statements.push(typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: unknown })?.text));
            return query(...args);
          },
        });
      }
      return client;
    },
  });
  return { pool, statements };
}

/** One gateway instance: its pool, its started directory, its handler. */
async function instance(options: { listenPool?: pg.Pool; reconnectDelay?: number; cacheSize?: number } = {}) {
  const { pool, statements } = countingPool();
  // The LISTEN connection comes from a pool of its own: its heartbeats are not the links' round trips.
  const listenPool = options.listenPool ?? openPool(url, { max: 2 });
  const directory = new PostgresDirectory(pool, {
    listen: () => listenPool.connect(),
    heartbeatInterval: 600_000,
    pollInterval: 600_000,
    ...(options.reconnectDelay === undefined ? {} : { reconnectDelay: options.reconnectDelay }),
    ...(options.cacheSize === undefined ? {} : { cacheSize: options.cacheSize }),
  });
  await directory.start();
  const store = new PostgresPaymentLinkStore(pool);
  const idempotency = new PostgresIdempotencyStore(pool, { leaseTime: 1000 });
  const create = makeHandler({ store, idempotency, directory, ids: randomIds, now: () => Date.now() });
  closing.push(async () => {
    await directory.close();
    await pool.end();
    if (options.listenPool === undefined) await listenPool.end();
  });
  return { pool, statements, directory, store, idempotency, create };
}

async function linksWithKey(key: string): Promise<{ links: number; keys: { state: string; link: string | null }[] }> {
  const { rows: keys } = await admin.query(`SELECT state, link_id::text AS link FROM ${TABLES.idempotency} WHERE key = $1`, [key]);
  const { rows } = await admin.query(`SELECT count(*)::int AS n FROM ${TABLES.links} WHERE record->'meta'->>'order_id' = $1`, [key]);
  return { links: rows[0].n, keys: keys as { state: string; link: string | null }[] };
}

/** A body whose meta names `key`, so its links can be counted. */
function bodyFor(key: string, overrides: Record<string, unknown> = {}) {
  return validBody({ meta: { order_id: key }, ...overrides });
}

/** The pid of the backend whose statement waits on a lock while storing a link. */
async function waitingCreation(): Promise<number> {
  let pid = 0;
  await eventually(
    'a creation waits on the links table',
    async () => {
      const { rows } = await admin.query(
        `SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`,
        [`%INSERT INTO ${TABLES.links}%`],
      );
      pid = rows[0]?.pid ?? 0;
      return pid !== 0;
    },
    10_000,
  );
  return pid;
}

beforeAll(async () => {
  if (!SKIP) server = await startPostgres();
});
afterAll(async () => {
  await server?.dispose();
});
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** A database of its own for the enclosing block, migrated and seeded. */
function useDatabase(name: string): void {
  beforeAll(async () => {
    url = await server.createDatabase(name);
    admin = openPool(url, { max: 4 });
    await migrate(admin);
    await new PostgresDirectory(admin).seed(SEEDS);
  });
  afterAll(async () => {
    await admin?.end();
  });
}

describe.skipIf(SKIP)('payment links on PostgreSQL, one commit each', () => {
  useDatabase('one_commit_links');

  it('creates a link for a known shopper in one statement, the key and the link in one commit, once the directory is warm', async () => {
    const a = await instance();
    const auth = await callers.auth();
    expect((await a.create(jsonRequest(auth, bodyFor(`warm-${randomUUID()}`), { 'idempotency-key': randomUUID() }))).status).toBe(201);
    a.statements.length = 0;
    for (let index = 0; index < 5; index++) {
      const key = randomUUID();
      expect((await a.create(jsonRequest(auth, bodyFor(key), { 'idempotency-key': key }))).status).toBe(201);
      expect(await linksWithKey(key)).toEqual({ links: 1, keys: [{ state: 'completed', link: expect.any(String) }] });
    }
    expect(a.statements).toHaveLength(5);
    // One autocommit statement each: no BEGIN, no second write.
    expect(
      a.statements.every((text) => text.includes(`INSERT INTO ${TABLES.idempotency}`) && text.includes(`INSERT INTO ${TABLES.links}`)),
    ).toBe(true);
  });

  /**
   * Creates three links on a pool of one connection, `meddle(pool)` run on that connection before
   * the link numbered `at` (0: the first); resolves the statements the connection has prepared then.
   */
  async function preparedAfterThreeLinks(
    options: { preparedStatements?: boolean },
    meddle: (pool: pg.Pool) => Promise<unknown> = async () => undefined,
    at = 1,
  ): Promise<{ name: string; statement: string }[]> {
    const pool = openPool(url, { max: 1 });
    closing.push(() => pool.end());
    const store = new PostgresPaymentLinkStore(pool, options);
    const directory = new PostgresDirectory(pool);
    const create = makeHandler({
      store,
      idempotency: new PostgresIdempotencyStore(pool),
      directory,
      ids: randomIds,
      now: () => Date.now(),
    });
    const auth = await callers.auth();
    for (let index = 0; index < 3; index++) {
      if (index === at) await meddle(pool);
      const key = randomUUID();
      expect((await create(jsonRequest(auth, bodyFor(key), { 'idempotency-key': key }))).status).toBe(201);
      expect(await linksWithKey(key)).toEqual({ links: 1, keys: [{ state: 'completed', link: expect.any(String) }] });
    }
    const { rows } = await pool.query('SELECT name, statement FROM pg_prepared_statements ORDER BY name');
    return rows.map((row) => ({ name: String(row.name), statement: String(row.statement) }));
  }

  it('has the server parse the statement that stores a link once per connection, then runs it by name', async () => {
    const prepared = await preparedAfterThreeLinks({});
    expect(prepared.map(({ name }) => name.replace(/_[0-9a-f]{12}$/, ''))).toEqual(['paygate_link_claiming']);
  });

  it("names a prepared statement by its text's SHA-256, so that one name never runs another text", async () => {
    const [prepared] = await preparedAfterThreeLinks({});
    const digest = createHash('sha256')
      .update(prepared?.statement ?? '')
      .digest('hex')
      .slice(0, 12);
    expect(prepared?.name).toBe(`paygate_link_claiming_${digest}`);
  });

  it('prepares nothing with preparedStatements: false, for a pooler that does not track prepared statements', async () => {
    expect(await preparedAfterThreeLinks({ preparedStatements: false })).toEqual([]);
  });

  it('stores the link once, unnamed, and prepares nothing more, when the connection lost the statement (a pooler moved it)', async () => {
    // pg still holds the statement prepared on its connection: the next link's Bind finds none (26000).
    const prepared = await preparedAfterThreeLinks({}, (pool) => pool.query('DEALLOCATE ALL'));
    expect(prepared).toEqual([]);
  });

  it('stores the link once, unnamed, and prepares nothing more, when the connection holds a statement of that name from another client', async () => {
    const [first] = await preparedAfterThreeLinks({});
    const name = first?.name ?? '';
    // Another client's statement under the same name on a fresh connection: the Parse is refused (42P05).
    const prepared = await preparedAfterThreeLinks({}, (pool) => pool.query(`PREPARE ${name} AS SELECT 1`), 0);
    expect(prepared).toEqual([]);
  });

  it('refuses a preparedStatements option that is not a boolean, naming it', () => {
    expect(() => new PostgresPaymentLinkStore(admin, { preparedStatements: 'yes' as unknown as boolean })).toThrow(
      /preparedStatements must be a boolean/,
    );
  });

  it('takes at most two round trips for a new shopper: registering it, then the link', async () => {
    const a = await instance();
    const auth = await callers.auth();
    await a.create(jsonRequest(auth, bodyFor(`warm-${randomUUID()}`), { 'idempotency-key': randomUUID() }));
    a.statements.length = 0;
    const key = randomUUID();
    const created = await a.create(jsonRequest(auth, bodyFor(key, { shopper: `//customers/new-${key}` }), { 'idempotency-key': key }));
    expect(created.status).toBe(201);
    expect(a.statements).toHaveLength(2);
    expect(a.statements[0]).toContain(`INSERT INTO ${TABLES.shoppers}`);
  });

  it('falls back to the claim on a conflict: two instances, one key, one link, both answered the same 201', async () => {
    const [a, b] = [await instance(), await instance()];
    const auth = await callers.auth();
    for (let round = 0; round < 10; round++) {
      const key = `both-${randomUUID()}`;
      const request = () => jsonRequest(auth, bodyFor(key), { 'idempotency-key': key });
      const answers: HandlerResponse[] = await Promise.all([a.create(request()), b.create(request())]);
      expect(answers.map((answer) => answer.status)).toEqual([201, 201]);
      expect(answers[0]?.body).toEqual(answers[1]?.body);
      expect(answers.filter((answer) => answer.headers['idempotent-replayed'] === 'true')).toHaveLength(1);
      expect((await linksWithKey(key)).links).toBe(1);
    }
  });

  it('falls back to the claim for a key used with another body: 409, and still one link', async () => {
    const [a, b] = [await instance(), await instance()];
    const auth = await callers.auth();
    const key = `reused-${randomUUID()}`;
    expect((await a.create(jsonRequest(auth, bodyFor(key), { 'idempotency-key': key }))).status).toBe(201);
    const reused = await b.create(jsonRequest(auth, bodyFor(key, { amount: '1' }), { 'idempotency-key': key }));
    expect([reused.status, (reused.body as { code: string }).code]).toEqual([409, 'idempotency_key_reused']);
    expect((await linksWithKey(key)).links).toBe(1);
  });

  it('leaves nothing written when the backend is terminated inside the one statement; the retry creates one link', async () => {
    const a = await instance();
    const auth = await callers.auth();
    const key = `killed-${randomUUID()}`;
    // The link's id is held by an open transaction: the statement has recorded the key and waits to insert the link.
    const id = randomUUID();
    const ids = { uuid: () => id, linkCode: randomIds.linkCode };
    const create = makeHandler({ store: a.store, idempotency: a.idempotency, directory: a.directory, ids, now: () => Date.now() });
    const holder = await admin.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(
        `INSERT INTO ${TABLES.links} (id, tenant, link_code, record)
         VALUES ($1::uuid, 'holder', $2, json_build_object('id', $1::uuid::text, 'tenant', 'holder', 'link_code', $2::text))`,
        [id, randomUUID()],
      );
      const answer = create(jsonRequest(auth, bodyFor(key), { 'idempotency-key': key }));
      const pid = await waitingCreation();
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      const refused = await answer;
      expect([refused.status, (refused.body as { code: string }).code]).toEqual([503, 'storage_unavailable']);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    expect(await linksWithKey(key)).toEqual({ links: 0, keys: [] });
    const retried = await a.create(jsonRequest(auth, bodyFor(key), { 'idempotency-key': key }));
    expect(retried.status).toBe(201);
    expect((await linksWithKey(key)).links).toBe(1);
  });

  it('leaves no link, and the key released, when the backend is terminated between the claim and the link; the retry creates one', async () => {
    const a = await instance();
    const auth = await callers.auth();
    const key = `between-${randomUUID()}`;
    // An expired record: the one statement finds the key taken, so the claim and the link are two statements.
    await admin.query(
      `INSERT INTO ${TABLES.idempotency} (tenant, key, state, fingerprint, expires_at, response) VALUES ($1, $2, 'completed', 'old', 1, '{}')`,
      [TENANT_A, key],
    );
    // Every id drawn is `id`, held by an open transaction: the claim commits, then the link waits.
    const id = randomUUID();
    const ids = { uuid: () => id, linkCode: randomIds.linkCode };
    const create = makeHandler({ store: a.store, idempotency: a.idempotency, directory: a.directory, ids, now: () => Date.now() });
    const holder = await admin.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(
        `INSERT INTO ${TABLES.links} (id, tenant, link_code, record)
         VALUES ($1::uuid, 'holder', $2, json_build_object('id', $1::uuid::text, 'tenant', 'holder', 'link_code', $2::text))`,
        [id, randomUUID()],
      );
      const answer = create(jsonRequest(auth, bodyFor(key), { 'idempotency-key': key }));
      const pid = await waitingCreation();
      expect((await linksWithKey(key)).keys).toEqual([{ state: 'pending', link: null }]);
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      expect((await answer).status).toBe(503);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    expect(await linksWithKey(key)).toEqual({ links: 0, keys: [] });
    expect((await a.create(jsonRequest(auth, bodyFor(key), { 'idempotency-key': key }))).status).toBe(201);
    expect(await linksWithKey(key)).toEqual({ links: 1, keys: [{ state: 'completed', link: expect.any(String) }] });
  });
});

describe.skipIf(SKIP)('PostgresDirectory cache across instances', () => {
  useDatabase('directory_cache');

  it('answers a warm lookup from the process, without a statement', async () => {
    const b = await instance();
    await b.directory.findDepartment(TENANT_A, 'cardiology');
    b.statements.length = 0;
    expect(await b.directory.findDepartment(TENANT_A, 'cardiology')).toMatchObject({ ref: 'cardiology' });
    expect(b.statements).toEqual([]);
  });

  it(`shows a department added on one instance to the other within ${INVALIDATION_BOUND} ms`, async () => {
    const [a, b] = [await instance(), await instance()];
    const ref = `added-${randomUUID()}`;
    expect(await b.directory.findDepartment(TENANT_A, ref)).toBeNull();
    await a.directory.seed([{ ...SEEDS[0]!, departments: [...(SEEDS[0]?.departments ?? []), { ref }] }]);
    await eventually(
      'B finds the new department',
      async () => (await b.directory.findDepartment(TENANT_A, ref)) !== null,
      INVALIDATION_BOUND,
    );
  });

  it(`stops using a cached department removed on another instance within ${INVALIDATION_BOUND} ms`, async () => {
    const [a, b] = [await instance(), await instance()];
    const ref = `removed-${randomUUID()}`;
    await a.directory.seed([{ tenant: TENANT_A, departments: [{ ref }] }]);
    await eventually('B answers the department from its cache', async () => {
      b.statements.length = 0;
      return (await b.directory.findDepartment(TENANT_A, ref)) !== null && b.statements.length === 0;
    });
    // By hand, as an operator would: the trigger notifies all the same.
    await admin.query(`DELETE FROM ${TABLES.departments} WHERE tenant = $1 AND ref = $2`, [TENANT_A, ref]);
    await eventually(
      'B refuses the removed department',
      async () => (await b.directory.findDepartment(TENANT_A, ref)) === null,
      INVALIDATION_BOUND,
    );
  });

  it('reads every lookup while its LISTEN connection is down, so a change made then is seen at once', async () => {
    const listenPool = openPool(url, { max: 2 });
    closing.push(() => listenPool.end());
    const b = await instance({ listenPool, reconnectDelay: 60_000 });
    const ref = `down-${randomUUID()}`;
    await admin.query(`INSERT INTO ${TABLES.departments} (tenant, ref, id) VALUES ($1, $2, $3)`, [TENANT_A, ref, randomUUID()]);
    await eventually('B caches the department', async () => {
      b.statements.length = 0;
      return (await b.directory.findDepartment(TENANT_A, ref)) !== null && b.statements.length === 0;
    });
    await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN paygate_directory'`,
    );
    await eventually('B notices the drop', () => !b.directory.caching, 5000);
    // No notification can reach B now; it must read.
    await admin.query(`DELETE FROM ${TABLES.departments} WHERE tenant = $1 AND ref = $2`, [TENANT_A, ref]);
    expect(await b.directory.findDepartment(TENANT_A, ref)).toBeNull();
  });

  it('keeps at most cacheSize answers, the least recently used going first', async () => {
    const b = await instance({ cacheSize: 3 });
    for (let index = 0; index < 10; index++) await b.directory.resolveShopper(TENANT_A, `bounded-${index}`, randomUUID());
    b.statements.length = 0;
    await b.directory.resolveShopper(TENANT_A, 'bounded-9', randomUUID());
    expect(b.statements).toHaveLength(0);
    await b.directory.resolveShopper(TENANT_A, 'bounded-0', randomUUID());
    expect(b.statements).toHaveLength(1);
    expect(() => new PostgresDirectory(b.pool, { cacheSize: 0 })).toThrow(/^PostgresDirectory: cacheSize must be a whole number/);
  });
});

describe('PostgresDirectory cache on PGlite', () => {
  let lite: PGlite;
  beforeAll(async () => {
    lite = await createTestPglite();
    await migrate(lite, { only: 'directory' });
  });
  afterAll(() => lite.close());

  it("empties its cache on PGlite's in-process notification: a removed department is refused", async () => {
    const directory = new PostgresDirectory(lite);
    await directory.seed(SEEDS);
    await directory.start();
    closing.push(() => directory.close());
    expect(directory.caching).toBe(true);
    expect(await directory.findDepartment(TENANT_A, 'radiology')).not.toBeNull();
    await lite.query(`DELETE FROM ${TABLES.departments} WHERE tenant = $1 AND ref = 'radiology'`, [TENANT_A]);
    await eventually('the removed department is refused', async () => (await directory.findDepartment(TENANT_A, 'radiology')) === null);
  });

  it.each([
    ['left out', {}],
    ['given as undefined', { pollInterval: undefined }],
  ])('empties its cache every 60 s by default, pollInterval %s', async (_, options) => {
    const trigger = `${TABLES.departments}_changed`;
    vi.useFakeTimers({ toFake: ['setInterval'] });
    const directory = new PostgresDirectory(lite, options);
    try {
      await directory.seed(SEEDS);
      await directory.start();
      expect(await directory.findDepartment(TENANT_A, 'cardiology')).not.toBeNull();
      // Removed with no notification: only the poll can empty the cache.
      await lite.exec(`ALTER TABLE ${TABLES.departments} DISABLE TRIGGER ${trigger}`);
      await lite.query(`DELETE FROM ${TABLES.departments} WHERE tenant = $1 AND ref = 'cardiology'`, [TENANT_A]);
      await vi.advanceTimersByTimeAsync(59_000);
      expect(await directory.findDepartment(TENANT_A, 'cardiology')).not.toBeNull();
      await vi.advanceTimersByTimeAsync(1000);
      expect(await directory.findDepartment(TENANT_A, 'cardiology')).toBeNull();
    } finally {
      vi.useRealTimers();
      await lite.exec(`ALTER TABLE ${TABLES.departments} ENABLE TRIGGER ${trigger}`);
      await directory.close();
    }
  });
});
