/**
 * The store contract against the in-memory stores, PGlite and a real PostgreSQL, then what only
 * the PostgreSQL stores do: lease takeover, link and record written in one step, bounded purge,
 * unavailability.
 */
import type { PGlite } from '@electric-sql/pglite';
import { createTestPglite } from './pglite.js';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  InMemoryIdempotencyStore,
  InMemoryPaymentLinkStore,
  StorageUnavailableError,
  type StoredPaymentLink,
} from '../../src/payment-links/index.js';
import {
  PostgresDirectory,
  PostgresIdempotencyStore,
  PostgresPaymentLinkStore,
  type SqlClient,
  migrate,
} from '../../src/postgres/index.js';
import { TABLES } from '../../src/postgres/schema-names.js';
import { createTestDatabase, openPool, skipWithoutPostgres } from './pg-server.js';
import {
  type StoreFixture,
  TENANT_A,
  TENANT_B,
  describeStoreContract,
  observeStatements,
  observeWaits,
  storedLink,
} from './store-contract.js';

const SKIP = skipWithoutPostgres('test/postgres/stores.test.ts');

/** The fixture of the stores on `db`; its idempotency store's statements are observed from each `reset()` on. */
function postgresFixture(db: () => SqlClient): StoreFixture {
  let observed: { db: SqlClient; waits(): number } | undefined;
  const current = () => {
    if (observed === undefined) throw new Error('reset() first');
    return observed;
  };
  return {
    links: () => new PostgresPaymentLinkStore(db()),
    idempotency: () => new PostgresIdempotencyStore(current().db),
    waits: () => current().waits(),
    reset: async () => {
      await db().query(`TRUNCATE ${TABLES.links}, ${TABLES.idempotency}`);
      observed = observeStatements(db());
    },
  };
}

let memory: { links: InMemoryPaymentLinkStore; idempotency: ReturnType<typeof observeWaits> };
describeStoreContract('in memory', () => ({
  links: () => memory.links,
  idempotency: () => memory.idempotency.store,
  waits: () => memory.idempotency.waits(),
  reset: async () => {
    memory = { links: new InMemoryPaymentLinkStore(), idempotency: observeWaits(new InMemoryIdempotencyStore()) };
  },
}));

let lite: PGlite;
describe('PGlite', () => {
  beforeAll(async () => {
    lite = await createTestPglite();
    await migrate(lite, { only: 'links' });
  });
  afterAll(() => lite.close());
  const fixture = postgresFixture(() => lite);
  describeStoreContract('PGlite', () => fixture);
});

let pool: pg.Pool;
/** A link's columns as `PostgresPaymentLinkStore` writes them. */
function row(link: StoredPaymentLink): { id: string; tenant: string; link_code: string; record: string } {
  return { id: link.id, tenant: link.tenant, link_code: link.link_code, record: JSON.stringify(link) };
}

describe.skipIf(SKIP)('PostgreSQL', () => {
  beforeAll(async () => {
    pool = openPool((await createTestDatabase('stores')).url, { max: 20 });
    await migrate(pool);
  });
  afterAll(async () => {
    await pool?.end();
  });

  const fixture = postgresFixture(() => pool);
  describeStoreContract('PostgreSQL', () => fixture);

  /** A claim of the key `by-hand` of tenant A, with fingerprint `f`: the record written by hand. */
  const claimByHand = () =>
    new PostgresIdempotencyStore(pool).claim({ tenant: TENANT_A, key: 'by-hand', fingerprint: 'f', now: 1000, expiresAt: 2000 });

  /** Runs `work` as if before the links' constraints of links version 3: they are dropped, then restored `NOT VALID`. */
  async function writtenBeforeConstraints(work: () => Promise<void>): Promise<void> {
    const { rows } = await pool.query(
      `SELECT conrelid::regclass::text AS owner, conname AS name, pg_get_constraintdef(oid) AS definition
         FROM pg_constraint WHERE conname = ANY($1)`,
      [['paygate_payment_links_record', 'paygate_idempotency_keys_response']],
    );
    for (const { owner, name } of rows) await pool.query(`ALTER TABLE ${owner} DROP CONSTRAINT ${name}`);
    try {
      await work();
    } finally {
      for (const { owner, name, definition } of rows) {
        await pool.query(`ALTER TABLE ${owner} ADD CONSTRAINT ${name} ${String(definition).replace(/ NOT VALID$/, '')} NOT VALID`);
      }
    }
  }

  describe('PostgresIdempotencyStore', () => {
    beforeEach(() => pool.query(`TRUNCATE ${TABLES.links}, ${TABLES.idempotency}`));

    it('hands a pending key to a new request once the holder lease has ended', async () => {
      // A claim adds the real time it has spent to the given `now`, so the look inside the lease
      // is taken a minute before its end: no busy machine stalls one claim that long.
      const leaseTime = 60_000;
      const store = new PostgresIdempotencyStore(pool, { leaseTime, pendingWait: 0 });
      const request = {
        tenant: TENANT_A,
        key: 'k',
        fingerprint: 'f1',
        now: 5_000_000,
        expiresAt: 5_000_000 + 86_400_000,
      };
      expect((await store.claim(request)).state).toBe('claimed');
      expect(await store.claim({ ...request, fingerprint: 'f2', now: request.now + 1 })).toEqual({
        state: 'pending',
        fingerprint: 'f1',
      });
      expect((await store.claim({ ...request, fingerprint: 'f2', now: request.now + leaseTime })).state).toBe('claimed');
    });

    const NOW = 5_000_000;
    const TEN_YEARS = 315_360_000_000;

    /** A record of key `k` written by hand: `state`, its lease end and expiry. */
    async function handWritten(state: 'pending' | 'completed', leaseEnd: number | null, expiresAt: number): Promise<void> {
      await pool.query(
        `INSERT INTO ${TABLES.idempotency} (tenant, key, state, fingerprint, lease, lease_expires_at, expires_at, response)
         VALUES ($1, 'k', $2, 'f1', 'hand', $3, $4, $5)`,
        [TENANT_A, state, leaseEnd, expiresAt, state === 'completed' ? '{"status":201,"headers":{},"body":{}}' : null],
      );
    }

    it('takes over a key whose record was written by hand to expire past the longest TTL (30 days): not kept for ever', async () => {
      await handWritten('completed', null, NOW + TEN_YEARS);
      const store = new PostgresIdempotencyStore(pool, { pendingWait: 0 });
      const request = { tenant: TENANT_A, key: 'k', fingerprint: 'f2', now: NOW, expiresAt: NOW + 86_400_000 };
      expect((await store.claim(request)).state).toBe('claimed');
    });

    it('takes over a pending key whose lease was written by hand to end past the longest lease: not held for ever', async () => {
      await handWritten('pending', NOW + TEN_YEARS, NOW + 86_400_000);
      const store = new PostgresIdempotencyStore(pool, { pendingWait: 0 });
      const request = { tenant: TENANT_A, key: 'k', fingerprint: 'f1', now: NOW, expiresAt: NOW + 86_400_000 };
      expect((await store.claim(request)).state).toBe('claimed');
    });

    it('still honours a lease ending within the longest lease (a day) and an expiry within 30 days', async () => {
      await handWritten('pending', NOW + 86_400_000, NOW + 2_592_000_000);
      const store = new PostgresIdempotencyStore(pool, { pendingWait: 0 });
      const request = { tenant: TENANT_A, key: 'k', fingerprint: 'f2', now: NOW, expiresAt: NOW + 86_400_000 };
      expect(await store.claim(request)).toEqual({ state: 'pending', fingerprint: 'f1' });
    });

    it('purges a record written by hand to expire far in the future, or to hold a lease as long', async () => {
      await handWritten('completed', null, NOW + TEN_YEARS);
      const store = new PostgresIdempotencyStore(pool);
      expect(await store.purgeExpired(NOW)).toBe(1);
      await handWritten('pending', NOW + TEN_YEARS, NOW - 1);
      expect(await store.purgeExpired(NOW)).toBe(1);
    });

    it('writes a record to expire at most 30 days after the request, whatever expiresAt a caller gives', async () => {
      const store = new PostgresIdempotencyStore(pool);
      await store.claim({ tenant: TENANT_A, key: 'k', fingerprint: 'f1', now: NOW, expiresAt: NOW + TEN_YEARS });
      const { rows } = await pool.query(`SELECT expires_at FROM ${TABLES.idempotency}`);
      expect(Number(rows[0].expires_at)).toBe(NOW + 2_592_000_000);
    });

    it('answers pending to the same body once pendingWait has passed', async () => {
      const store = new PostgresIdempotencyStore(pool, { pendingWait: 30 });
      const request = {
        tenant: TENANT_A,
        key: 'k',
        fingerprint: 'f1',
        now: 5_000_000,
        expiresAt: 5_000_000 + 86_400_000,
      };
      await store.claim(request);
      expect(await store.claim(request)).toEqual({ state: 'pending', fingerprint: 'f1' });
    });

    it('purges expired records in bounded batches, leaving live ones', async () => {
      const store = new PostgresIdempotencyStore(pool, { purgeBatch: 2 });
      for (let index = 0; index < 5; index++) {
        const claim = await store.claim({
          tenant: TENANT_A,
          key: `old-${index}`,
          fingerprint: 'f',
          now: 1000,
          expiresAt: 61_000,
        });
        if (claim.state === 'claimed') await store.complete(claim.lease, { status: 201, headers: {}, body: null });
      }
      await store.claim({ tenant: TENANT_A, key: 'live', fingerprint: 'f', now: 1000, expiresAt: 10_000_000 });
      expect([await store.purgeExpired(100_000), await store.purgeExpired(100_000), await store.purgeExpired(100_000)]).toEqual([2, 2, 1]);
      const { rows } = await pool.query(`SELECT key FROM ${TABLES.idempotency}`);
      expect(rows).toEqual([{ key: 'live' }]);
    });

    it('purges an expired pending record written by hand without a lease end, as its claim would take it', async () => {
      const store = new PostgresIdempotencyStore(pool);
      await pool.query(
        `INSERT INTO ${TABLES.idempotency} (tenant, key, state, fingerprint, expires_at) VALUES ($1, 'by-hand', 'pending', 'f', 61000)`,
        [TENANT_A],
      );
      expect(await store.purgeExpired(100_000)).toBe(1);
      expect((await pool.query(`SELECT key FROM ${TABLES.idempotency}`)).rows).toEqual([]);
    });

    it("replays no record written by hand that names another tenant's link (attack: one tenant reading another's link)", async () => {
      const theirs = storedLink(TENANT_B);
      await new PostgresPaymentLinkStore(pool).insert(theirs);
      await pool.query(
        `INSERT INTO ${TABLES.idempotency} (tenant, key, state, fingerprint, expires_at, response, link_id)
         VALUES ($1, 'by-hand', 'completed', 'f', 1e9, '{"status":201,"headers":{}}', $2)`,
        [TENANT_A, theirs.id],
      );
      const claimed = claimByHand();
      await expect(claimed).rejects.toThrow(/names a payment link that is not stored/);
    });

    it.each([
      ['a response of JSON null', 'null', null],
      ['a response that is a JSON array', '[201]', null],
      ['a link record of JSON null', '{"status":201,"headers":{}}', 'null'],
    ])('replays no completed record written by hand with %s, naming the value found', async (_, response, record) => {
      let linkId: string | null = null;
      await writtenBeforeConstraints(async () => {
        if (record !== null) {
          const link = storedLink(TENANT_A);
          linkId = link.id;
          await pool.query(`INSERT INTO ${TABLES.links} (id, tenant, link_code, record) VALUES ($1, $2, $3, $4)`, [
            link.id,
            TENANT_A,
            link.link_code,
            record,
          ]);
        }
        await pool.query(
          `INSERT INTO ${TABLES.idempotency} (tenant, key, state, fingerprint, expires_at, response, link_id)
           VALUES ($1, 'by-hand', 'completed', 'f', 1e9, $2, $3)`,
          [TENANT_A, response, linkId],
        );
      });
      const claimed = claimByHand();
      const failure = await claimed.catch((error: unknown) => error);
      expect((failure as Error).message).toMatch(/cannot be replayed/);
      expect((failure as Error).message).toContain(`got ${JSON.stringify(record === null ? response : record)}`);
    });

    it.each([
      ['holding the text of an object', JSON.stringify(JSON.stringify({ status: 201, headers: {} }))],
      ['holding text that is no JSON', '"201 Created"'],
    ])('replays no completed record written by hand whose response is a JSON string %s', async (_, response) => {
      await writtenBeforeConstraints(async () => {
        await pool.query(
          `INSERT INTO ${TABLES.idempotency} (tenant, key, state, fingerprint, expires_at, response)
           VALUES ($1, 'by-hand', 'completed', 'f', 1e9, $2)`,
          [TENANT_A, response],
        );
      });
      const failure = await claimByHand().catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(Error);
      expect((failure as Error).message).toMatch(/cannot be replayed: its response must be a JSON object, got /);
    });

    it.each([
      ['a link record of JSON null', () => ({ ...row(storedLink(TENANT_A)), record: 'null' })],
      ["a link record naming another tenant's link", () => ({ ...row(storedLink(TENANT_B)), tenant: TENANT_A })],
      ['a link record naming another link id', () => ({ ...row(storedLink(TENANT_A)), id: randomUUID() })],
      ['a link record naming another link code', () => ({ ...row(storedLink(TENANT_A)), link_code: 'other-code' })],
    ])('refuses a payment link written by hand with %s (constraint paygate_payment_links_record)', async (_, make) => {
      const { id, tenant, link_code, record } = make();
      await expect(
        pool.query(`INSERT INTO ${TABLES.links} (id, tenant, link_code, record) VALUES ($1, $2, $3, $4)`, [id, tenant, link_code, record]),
      ).rejects.toMatchObject({ code: '23514', constraint: 'paygate_payment_links_record' });
    });

    it.each([
      ['JSON null', 'null'],
      ['a JSON array', '[201]'],
      ['a JSON string', '"201"'],
    ])(
      'refuses an idempotency record written by hand whose response is %s (constraint paygate_idempotency_keys_response)',
      async (_, response) => {
        await expect(
          pool.query(
            `INSERT INTO ${TABLES.idempotency} (tenant, key, state, fingerprint, expires_at, response) VALUES ($1, 'by-hand', 'completed', 'f', 1e9, $2)`,
            [TENANT_A, response],
          ),
        ).rejects.toMatchObject({ code: '23514', constraint: 'paygate_idempotency_keys_response' });
      },
    );

    it.each([
      ['NaN', Number.NaN],
      ['a string', '100000'],
      ['a negative time', -1],
    ])('refuses purgeExpired(%s) with a TypeError naming now, deleting nothing', async (_case, now) => {
      const store = new PostgresIdempotencyStore(pool);
      await store.claim({ tenant: TENANT_A, key: `kept-${String(now)}`, fingerprint: 'f', now: 1000, expiresAt: 2000 });
      const failure = await store.purgeExpired(now as number).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(TypeError);
      expect((failure as Error).message).toMatch(/^PostgresIdempotencyStore\.purgeExpired: now must be/);
      const { rows } = await pool.query(`SELECT key FROM ${TABLES.idempotency} WHERE key = $1`, [`kept-${String(now)}`]);
      expect(rows).toHaveLength(1);
    });

    it.each([
      ['a bad leaseTime', { leaseTime: 5 }, /leaseTime/],
      ['a bad pendingWait', { pendingWait: -1 }, /pendingWait/],
      ['a bad purgeBatch', { purgeBatch: 1.5 }, /purgeBatch/],
      ['a bad statementTimeout', { statementTimeout: 5 }, /statementTimeout/],
    ])('refuses %s with a TypeError naming it', (_case, options, message) => {
      expect(() => new PostgresIdempotencyStore(pool, options)).toThrow(message);
    });

    it('refuses a bad statementTimeout of the link store and the directory with a TypeError naming it', () => {
      const linkStore = () => new PostgresPaymentLinkStore(pool, { statementTimeout: 0 });
      expect(linkStore).toThrow(TypeError);
      expect(linkStore).toThrow(/^PostgresPaymentLinkStore: statementTimeout .*from 10 to 600000, got 0$/);
      expect(() => new PostgresDirectory(pool, { statementTimeout: 1.5 })).toThrow(/^PostgresDirectory: statementTimeout/);
    });
  });

  describe('PostgresPaymentLinkStore, given a link PostgreSQL cannot read a field of', () => {
    beforeEach(() => pool.query(`TRUNCATE ${TABLES.links}, ${TABLES.idempotency}`));

    it.each([
      ['U+0000 in its description', { description: 'a\u0000b' }, 'link.description', '22P05'],
      ['a lone surrogate in a meta value', { meta: { order_id: 'a\ud800b' } }, 'link.meta.order_id', '22P02'],
      ['U+0000 in a meta key', { meta: { 'k\u0000': '1' } }, 'link.meta member names', '22P05'],
    ])(
      'refuses a link with %s by insert with a TypeError naming the field, the server refusal as cause',
      async (_, overrides, field, state) => {
        const link = storedLink(TENANT_A, overrides);
        const error = await new PostgresPaymentLinkStore(pool).insert(link).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(TypeError);
        expect((error as Error).message).toMatch(
          new RegExp(`^PostgresPaymentLinkStore\\.insert: ${field.replaceAll('.', '\\.')} must be text without U\\+0000`),
        );
        expect((error as Error).cause).toMatchObject({ code: state });
        expect(await new PostgresPaymentLinkStore(pool).get(TENANT_A, link.id)).toBeNull();
      },
    );

    it('refuses such a link by insertClaiming with a TypeError naming the field, writing neither the link nor the key', async () => {
      const idempotency = new PostgresIdempotencyStore(pool);
      const link = storedLink(TENANT_A, { description: 'a\u0000b' });
      const claim = { tenant: TENANT_A, key: 'k', fingerprint: 'f', now: 5_000_000, expiresAt: 5_000_000 + 86_400_000 };
      const response = { status: 201, headers: {}, body: {} };
      const error = await new PostgresPaymentLinkStore(pool)
        .insertClaiming(link, { idempotency, claim, response })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(/^PostgresPaymentLinkStore\.insertClaiming: link\.description must be text/);
      expect((await pool.query(`SELECT count(*)::int AS n FROM ${TABLES.idempotency}`)).rows[0].n).toBe(0);
    });
  });

  describe('PostgresPaymentLinkStore.insertCompleting', () => {
    const links = () => new PostgresPaymentLinkStore(pool);
    beforeEach(() => pool.query(`TRUNCATE ${TABLES.links}, ${TABLES.idempotency}`));

    async function claimed(store: PostgresIdempotencyStore, now = 5_000_000) {
      const claim = await store.claim({
        tenant: TENANT_A,
        key: 'k',
        fingerprint: 'f',
        now,
        expiresAt: now + 86_400_000,
      });
      if (claim.state !== 'claimed') throw new Error('not claimed');
      return claim.lease;
    }

    it('stores the link and completes the record together', async () => {
      const store = new PostgresIdempotencyStore(pool);
      const lease = await claimed(store);
      const link = storedLink(TENANT_A);
      const response = { status: 201, headers: {}, body: { id: link.id } };
      expect(await links().insertCompleting(link, { idempotency: store, lease, response })).toBe('stored');
      expect((await links().get(TENANT_A, link.id))?.id).toBe(link.id);
      expect(await store.claim({ tenant: TENANT_A, key: 'k', fingerprint: 'f', now: 5_000_001, expiresAt: 6_000_000 })).toMatchObject({
        state: 'completed',
        response,
      });
    });

    it('stores nothing when the lease was taken over', async () => {
      const store = new PostgresIdempotencyStore(pool, { leaseTime: 100 });
      const lost = await claimed(store);
      await claimed(store, 5_000_100);
      const link = storedLink(TENANT_A);
      expect(
        await links().insertCompleting(link, {
          idempotency: store,
          lease: lost,
          response: { status: 201, headers: {}, body: null },
        }),
      ).toBe('lease_lost');
      expect(await links().list(TENANT_A)).toEqual([]);
    });

    it('leaves the record pending when the link clashes', async () => {
      const store = new PostgresIdempotencyStore(pool, { pendingWait: 0 });
      const first = storedLink(TENANT_A);
      await links().insert(first);
      const lease = await claimed(store);
      const clash = storedLink(TENANT_A, { id: first.id });
      await expect(
        links().insertCompleting(clash, {
          idempotency: store,
          lease,
          response: { status: 201, headers: {}, body: null },
        }),
      ).rejects.toMatchObject({
        code: 'duplicate_payment_link',
      });
      expect((await store.claim({ tenant: TENANT_A, key: 'k', fingerprint: 'g', now: 5_000_001, expiresAt: 6_000_000 })).state).toBe(
        'pending',
      );
    });

    it('answers unsupported for an idempotency store of another kind', async () => {
      const memoryStore = new InMemoryIdempotencyStore();
      const claim = await memoryStore.claim({
        tenant: TENANT_B,
        key: 'k',
        fingerprint: 'f',
        now: 1,
        expiresAt: 100_000,
      });
      if (claim.state !== 'claimed') throw new Error('not claimed');
      const outcome = await links().insertCompleting(storedLink(TENANT_B), {
        idempotency: memoryStore,
        lease: claim.lease,
        response: { status: 201, headers: {}, body: null },
      });
      expect(outcome).toBe('unsupported');
      expect(await links().list(TENANT_B)).toEqual([]);
    });
  });
});

describe('a database that cannot be reached', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
  const down: SqlClient = { query: async () => Promise.reject(refused) };
  const brokenSql: SqlClient = {
    query: async () => Promise.reject(Object.assign(new Error('relation does not exist'), { code: '42P01' })),
  };

  it.each([
    ['insert', () => new PostgresPaymentLinkStore(down).insert(storedLink(TENANT_A))],
    ['get', () => new PostgresPaymentLinkStore(down).get(TENANT_A, '6a7b8c9d-1e2f-4a3b-8c4d-5e6f7a8b0001')],
    ['list', () => new PostgresPaymentLinkStore(down).list(TENANT_A)],
    [
      'claim',
      () =>
        new PostgresIdempotencyStore(down).claim({
          tenant: TENANT_A,
          key: 'k',
          fingerprint: 'f',
          now: 1,
          expiresAt: 2,
        }),
    ],
  ])('turns a refused connection during %s into StorageUnavailableError', async (_method, call) => {
    const error = await call().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect(error).toMatchObject({ code: 'storage_unavailable', cause: refused });
  });

  it('lets a fault of the statement or schema through as it is', async () => {
    await expect(new PostgresPaymentLinkStore(brokenSql).list(TENANT_A)).rejects.toMatchObject({ code: '42P01' });
  });
});
