/**
 * PostgresDirectory: departments, stores and shoppers resolve to the same UUIDs on every instance
 * and across restarts; two instances seeing a new customer at once agree on one UUID.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/index.js';
import { PostgresDirectory, migrate } from '../../src/postgres/index.js';
import { TABLES } from '../../src/postgres/schema-names.js';
import { createTestDatabase, openPool, skipWithoutPostgres } from './pg-server.js';

const SKIP = skipWithoutPostgres('test/postgres/directory.test.ts');
const TENANT = 'ern:acme/tenants/clinic-1';
const STORE = '3b0f6d2a-6c1e-4f5a-9d7b-2e8c4a1f0001';
const SEEDS = [
  {
    tenant: TENANT,
    stores: [
      { id: '3b0f6d2a-6c1e-4f5a-9d7b-2e8c4a1f0000', name: 'Reception' },
      { id: STORE, name: 'Pharmacy' },
    ],
    departments: [{ ref: 'cardiology' }, { ref: 'pharmacy', store: STORE }],
    paymentMethods: { allowed: ['visa', 'mc', 'visa'], blocked: ['walley'] },
  },
];

let url: string;
const pools: pg.Pool[] = [];

/** One gateway instance's directory: its own pool. */
function instance(): PostgresDirectory {
  const pool = openPool(url, { max: 4 });
  pools.push(pool);
  return new PostgresDirectory(pool);
}

describe.skipIf(SKIP)('PostgresDirectory', () => {
  beforeAll(async () => {
    url = (await createTestDatabase('directory')).url;
    const pool = openPool(url);
    pools.push(pool);
    expect((await migrate(pool, { only: 'directory' })).versions).toEqual({ directory: 2 });
  });
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
  });

  it('gives two instances seeding at once the same department UUIDs, kept across a restart', async () => {
    const [a, b] = [instance(), instance()];
    await Promise.all([a.seed(SEEDS), b.seed(SEEDS)]);
    const [fromA, fromB] = await Promise.all([a.findDepartment(TENANT, 'cardiology'), b.findDepartment(TENANT, 'cardiology')]);
    expect(fromA).toEqual(fromB);
    expect(fromA).toMatchObject({ ref: 'cardiology', storeId: null });
    const restarted = instance();
    await restarted.seed(SEEDS);
    expect(await restarted.findDepartment(TENANT, 'cardiology')).toEqual(fromA);
    expect(await restarted.storeFor(TENANT, fromA as never)).toEqual(await a.storeFor(TENANT, fromA as never));
  });

  it("chooses the department's own store, else the first store", async () => {
    const directory = instance();
    await directory.seed(SEEDS);
    const pharmacy = await directory.findDepartment(TENANT, 'pharmacy');
    expect(await directory.storeFor(TENANT, pharmacy as never)).toEqual({ id: STORE, name: 'Pharmacy' });
    const cardiology = await directory.findDepartment(TENANT, 'cardiology');
    expect((await directory.storeFor(TENANT, cardiology as never))?.name).toBe('Reception');
  });

  it('makes another store the default when a seeding lists the stores in another order', async () => {
    const tenant = 'ern:acme/tenants/reordered';
    const reception = { id: randomUUID(), name: 'Reception' };
    const pharmacy = { id: randomUUID(), name: 'Pharmacy' };
    const seeding = (stores: (typeof reception)[]) => [{ tenant, stores, departments: [{ ref: 'cardiology' }] }];
    const directory = instance();
    await directory.seed(seeding([reception, pharmacy]));
    await directory.seed(seeding([pharmacy, reception]));
    const cardiology = await directory.findDepartment(tenant, 'cardiology');
    expect(await directory.storeFor(tenant, cardiology as never)).toEqual(pharmacy);
  });

  it('gives two instances resolving one new customer at once one UUID, and the same after a restart', async () => {
    const [a, b] = [instance(), instance()];
    const ref = `c-${randomUUID()}`;
    const pairs = await Promise.all(
      Array.from({ length: 10 }, (_, index) => (index % 2 === 0 ? a : b).resolveShopper(TENANT, ref, randomUUID())),
    );
    expect(new Set(pairs.map((shopper) => shopper.id)).size).toBe(1);
    expect(await instance().resolveShopper(TENANT, ref, randomUUID())).toEqual(pairs[0]);
    const { rows } = await pools[0]!.query(`SELECT count(*)::int AS n FROM ${TABLES.shoppers} WHERE ref = $1`, [ref]);
    expect(rows[0]).toEqual({ n: 1 });
  });

  it('keeps each tenant apart: a department of one tenant is not found through another', async () => {
    const directory = instance();
    await directory.seed(SEEDS);
    expect(await directory.findDepartment('ern:acme/tenants/clinic-2', 'cardiology')).toBeNull();
    expect(await directory.paymentMethods('ern:acme/tenants/clinic-2')).toEqual({ allowed: [], blocked: [] });
  });

  it('reads the payment methods as seeded, repeated codes kept', async () => {
    const directory = instance();
    await directory.seed(SEEDS);
    expect(await directory.paymentMethods(TENANT)).toEqual({ allowed: ['visa', 'mc', 'visa'], blocked: ['walley'] });
  });

  describe('a tenant row written by hand', () => {
    /** Writes `tenant`'s methods as given (JSON text), as an operator might in psql. */
    async function writeMethods(tenant: string, allowed: string, blocked: string): Promise<void> {
      await pools[0]!.query(
        `INSERT INTO ${TABLES.tenants} (tenant, allowed_methods, blocked_methods) VALUES ($1, $2::json, $3::json)
         ON CONFLICT (tenant) DO UPDATE SET allowed_methods = EXCLUDED.allowed_methods, blocked_methods = EXCLUDED.blocked_methods`,
        [tenant, allowed, blocked],
      );
    }

    it.each([
      ['an object', '{"walley":true}'],
      ['JSON null', 'null'],
      ['a JSON string', '"walley"'],
      ['an array holding a number', '["walley",7]'],
      ['an array holding an empty code', '["walley",""]'],
    ])('fails the tenant with a configuration error when blocked_methods is %s, never offering what it blocks', async (_, blocked) => {
      const tenant = `ern:acme/tenants/${randomUUID()}`;
      await writeMethods(tenant, '["visa","walley"]', blocked);
      const failure = await instance()
        .paymentMethods(tenant)
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(ConfigurationError);
      expect(failure).toMatchObject({ code: 'configuration_error', status: 500 });
      expect((failure as Error).message).toContain(`tenant "${tenant}": blocked_methods holds`);
    });

    it('names allowed_methods when that column is no array', async () => {
      const tenant = `ern:acme/tenants/${randomUUID()}`;
      await writeMethods(tenant, '{"visa":true}', '[]');
      await expect(instance().paymentMethods(tenant)).rejects.toThrow(/allowed_methods holds "\{\\"visa\\":true\}", expected a JSON array/);
    });

    it("leaves the other tenants' methods readable", async () => {
      const broken = `ern:acme/tenants/${randomUUID()}`;
      await writeMethods(broken, '[]', '{}');
      const directory = instance();
      await directory.seed(SEEDS);
      await expect(directory.paymentMethods(broken)).rejects.toThrow(ConfigurationError);
      expect(await directory.paymentMethods(TENANT)).toEqual({ allowed: ['visa', 'mc', 'visa'], blocked: ['walley'] });
    });
  });

  it('refuses a bad seed with a TypeError naming the entry, writing nothing', async () => {
    const directory = instance();
    await expect(directory.seed([{ tenant: 'ern:acme/tenants/bad', departments: [{ ref: 'a b' }] }])).rejects.toThrow(
      /tenants\[0\]\.departments\[0\]\.ref/,
    );
    expect(await directory.paymentMethods('ern:acme/tenants/bad')).toEqual({ allowed: [], blocked: [] });
  });
});
