/**
 * queryWithin(): a statement bounded by its own timer, the wait for a pooled connection included,
 * on a pool that sets no timeout of its own, through a TCP proxy that goes silent.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUnavailable } from '../../src/postgres/index.js';
import { StatementTimeoutError, queryWithin } from '../../src/postgres/sql-client.js';
import { LOADED_MARGIN_MS } from '../support/loaded-machine.js';
import { eventually } from './eventually.js';
import { createTestDatabase, openPool, skipWithoutPostgres } from './pg-server.js';
import { type TcpProxy, startProxy } from './tcp-proxy.js';

const SKIP = skipWithoutPostgres('test/postgres/sql-client.test.ts');
const BOUND = 300;

let proxy: TcpProxy;
let pool: pg.Pool;

describe.skipIf(SKIP)('queryWithin on a pool with no timeout of its own', () => {
  beforeAll(async () => {
    const db = await createTestDatabase('sql_client');
    proxy = await startProxy(db.port);
    pool = openPool(proxy.via(db.url), { max: 2 });
    await Promise.all([pool.query('SELECT 1'), pool.query('SELECT 1')]);
  });
  afterAll(async () => {
    await proxy?.close();
    await pool?.end();
  });

  it('answers through a connection that works', async () => {
    expect((await queryWithin(pool, BOUND, 'SELECT $1::int AS n', [7])).rows).toEqual([{ n: 7 }]);
  });

  it('rejects with StatementTimeoutError at its bound when the connection goes silent, and destroys that connection', async () => {
    expect(pool.totalCount).toBe(2);
    proxy.silence();
    const started = performance.now();
    const failure = await queryWithin(pool, BOUND, 'SELECT 1').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StatementTimeoutError);
    expect(isUnavailable(failure)).toBe(true);
    expect(performance.now() - started).toBeLessThan(BOUND + LOADED_MARGIN_MS);
    await eventually('the silent connection is gone from the pool', () => pool.totalCount === 1);
  });

  it('bounds the wait for a connection of a full pool as well', async () => {
    const held = [queryWithin(pool, 2000, 'SELECT 1').catch(() => undefined), queryWithin(pool, 2000, 'SELECT 1').catch(() => undefined)];
    const started = performance.now();
    await expect(queryWithin(pool, BOUND, 'SELECT 1')).rejects.toBeInstanceOf(StatementTimeoutError);
    expect(performance.now() - started).toBeLessThan(BOUND + LOADED_MARGIN_MS);
    await Promise.all(held);
  });

  it('answers again through new connections once the network heals, the silenced ones still silent', async () => {
    proxy.heal();
    await eventually(
      'a statement succeeds',
      async () => (await queryWithin(pool, BOUND, 'SELECT 1 AS ok').catch(() => ({ rows: [] }))).rows.length === 1,
    );
  });
});
