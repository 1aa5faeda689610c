/**
 * Key history shared through PostgreSQL: verifiers on one database (each its own pool) share when
 * a key was first seen and first used, a restart keeps them, a breach one reported is not reported
 * by another, and a database that goes silent delays the sharing, reported once, never the
 * verifications. The key rules themselves are the verifier's (test/core/key-history.test.ts).
 */
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type KeyBreachEvent, type KeyHistoryEntry, type Verifier, createVerifier } from '../../src/index.js';
import {
  type KeyHistoryRowRefusedEvent,
  type PostgresKeyHistory,
  type PostgresKeyHistoryOptions,
  StatementTimeoutError,
  migrate,
  poolSettings,
  postgresKeyHistory,
} from '../../src/postgres/index.js';
import { TABLES } from '../../src/postgres/schema-names.js';
import { readKeyHistory } from '../../src/postgres/internal.js';
import { type TestIssuer, createTestIssuer } from '../../src/testing/index.js';
import { type FakeClock, fakeClock } from '../support/jwks-clock.js';
import { type EventLog, eventLog } from '../support/jwks-events.js';
import { eventually } from './eventually.js';
import { type PgServer, openPool, skipWithoutPostgres, startPostgres } from './pg-server.js';
import { type TcpProxy, startProxy } from './tcp-proxy.js';

const SKIP = skipWithoutPostgres('test/postgres/postgres-key-history.test.ts');
const AUDIENCE = 'https://payments.test';
const MINUTE = 60;
const DAY = 86_400;
/** Long enough that only `flush()` flushes during a test. */
const NO_FLUSH = 600_000;

let server: PgServer;
let db: pg.Pool;
let clock: FakeClock;
let issuer: TestIssuer;
const opened: { end(): Promise<void> }[] = [];
let running: PostgresKeyHistory[] = [];

/** One gateway instance: its own pool, key history and verifier (with its event log). */
async function instance(
  options: PostgresKeyHistoryOptions = {},
  pool = openPool(server.url, { max: 2 }),
): Promise<{ verifier: Verifier; log: EventLog; keys: PostgresKeyHistory }> {
  opened.push(pool);
  const keys = await postgresKeyHistory(pool, { flushInterval: NO_FLUSH, onError: () => undefined, ...options });
  running.push(keys);
  const log = eventLog();
  const verifier = createVerifier({ registry: [issuer.entry], audience: AUDIENCE, now: clock.now, onEvent: log.listener, cache: false });
  keys.attach(verifier);
  return { verifier, log, keys };
}

const breaches = (log: EventLog): string[] =>
  log.events.filter((event): event is KeyBreachEvent => event.type.startsWith('key_')).map((event) => `${event.type} ${event.kid}`);

describe.skipIf(SKIP)('postgresKeyHistory on a real PostgreSQL', () => {
  beforeAll(async () => {
    server = await startPostgres();
    db = openPool(server.url, { max: 2 });
    opened.push(db);
    await migrate(db, { only: 'keys' });
  });

  beforeEach(async () => {
    await db.query(`TRUNCATE ${TABLES.keyHistory}`);
    clock = fakeClock();
    issuer = await createTestIssuer({ audience: AUDIENCE, issuer: 'https://acme.test', kid: 'acme-1', now: clock.now });
    await issuer.listen();
  });

  afterEach(async () => {
    await Promise.all(running.map((keys) => keys.close()));
    running = [];
    await issuer.close();
  });

  afterAll(async () => {
    await Promise.all(opened.map((pool) => pool.end().catch(() => undefined)));
    await server?.dispose();
  });

  it('writes what the verifier met, and readKeyHistory reads it back', async () => {
    const { verifier, keys } = await instance();
    const start = clock.now();
    await verifier.verify(await issuer.token());
    await keys.flush();
    expect(await readKeyHistory(db)).toEqual([
      {
        issuer: 'https://acme.test',
        kid: 'acme-1',
        firstSeen: start,
        publishedAfter: null,
        firstUsed: start,
        lastUsed: start,
        latestExpiry: expect.any(Number),
        withdrawn: null,
        breaches: [],
      },
    ]);
  });

  it('keeps first-seen across a restart, so the restarted verifier still finds the key overdue', async () => {
    const before = await instance();
    const start = clock.now();
    await before.verifier.verify(await issuer.token());
    await before.keys.close();
    clock.advance(4 * DAY);
    const after = await instance();
    await after.verifier.verify(await issuer.token());
    expect(after.verifier.keyHistory()).toEqual([expect.objectContaining({ kid: 'acme-1', firstSeen: start })]);
    expect(breaches(after.log)).toEqual(['key_rotation_overdue acme-1']);
  });

  it('shares a breach, which the other instance then does not report again', async () => {
    const first = await instance();
    const second = await instance();
    const start = clock.now();
    await first.verifier.verify(await issuer.token());
    await first.keys.flush();
    await second.keys.flush();
    clock.advance(4 * DAY);
    await first.verifier.verify(await issuer.token());
    await first.keys.flush();
    await second.keys.flush();
    await second.verifier.verify(await issuer.token());
    expect(breaches(first.log)).toEqual(['key_rotation_overdue acme-1']);
    expect(breaches(second.log)).toEqual([]);
    expect(second.verifier.keyHistory()).toEqual([
      expect.objectContaining({ kid: 'acme-1', firstSeen: start, breaches: ['key_rotation_overdue'] }),
    ]);
  });

  it('merges rows: earliest sighting (with its publication) and first use, latest use and expiry, earliest withdrawal, breaches united', async () => {
    const entry: KeyHistoryEntry = {
      issuer: 'https://acme.test',
      kid: 'k',
      firstSeen: 5000,
      publishedAfter: 4000,
      firstUsed: 6000,
      lastUsed: 7000,
      latestExpiry: 100,
      withdrawn: null,
      breaches: ['key_used_early'],
    };
    const older = { ...entry, firstSeen: 3000, publishedAfter: 2000, firstUsed: 8000, lastUsed: 9000, latestExpiry: 50, withdrawn: 9500 };
    const one = await instance();
    one.verifier.mergeKeyHistory([{ ...entry, breaches: ['key_used_early', 'key_withdrawn'] }]);
    await one.keys.flush();
    const two = await instance();
    const fresh = createVerifier({ registry: [issuer.entry], audience: AUDIENCE, now: clock.now });
    fresh.mergeKeyHistory([{ ...older, breaches: ['key_rotation_overdue', 'key_used_early'] }]);
    two.keys.attach(fresh);
    await two.keys.flush();
    expect(await readKeyHistory(db, { issuer: 'https://acme.test' })).toEqual([
      {
        ...entry,
        firstSeen: 3000,
        publishedAfter: 2000,
        firstUsed: 6000,
        lastUsed: 9000,
        latestExpiry: 100,
        withdrawn: 9500,
        breaches: ['key_used_early', 'key_withdrawn', 'key_rotation_overdue'],
      },
    ]);
  });

  it('reads one issuer alone with readKeyHistory({ issuer })', async () => {
    const { verifier, keys } = await instance();
    verifier.mergeKeyHistory([
      {
        issuer: 'https://other.test',
        kid: 'o',
        firstSeen: 1,
        publishedAfter: null,
        firstUsed: null,
        lastUsed: null,
        latestExpiry: null,
        withdrawn: null,
        breaches: [],
      },
    ]);
    await verifier.verify(await issuer.token());
    await keys.flush();
    expect((await readKeyHistory(db)).map((entry) => entry.issuer)).toEqual(['https://acme.test', 'https://other.test']);
    expect((await readKeyHistory(db, { issuer: 'https://other.test' })).map((entry) => entry.kid)).toEqual(['o']);
  });

  it.each([
    ['flushInterval', { flushInterval: 50 }],
    ['statementTimeout', { statementTimeout: 'soon' }],
    ['onError', { onError: 'log' }],
  ])('a bad %s throws a TypeError naming it, before any statement', async (name, options) => {
    await expect(postgresKeyHistory(db, options as PostgresKeyHistoryOptions)).rejects.toThrow(
      expect.objectContaining({ name: 'TypeError', message: expect.stringContaining(name) }),
    );
  });

  it('refuses a negative time in the table itself (its constraint)', async () => {
    await expect(
      db.query(`INSERT INTO ${TABLES.keyHistory} (issuer, kid, first_seen) VALUES ('https://acme.test', 'by-hand', -1)`),
    ).rejects.toMatchObject({ code: '23514' });
  });

  it('skips a row the verifier refuses, reporting it once, and shares the others: every flush goes on', async () => {
    // A row written before the table refused negative times (its constraint, dropped here to write it).
    await db.query(`ALTER TABLE ${TABLES.keyHistory} DROP CONSTRAINT ${TABLES.keyHistory}_times`);
    try {
      await db.query(`INSERT INTO ${TABLES.keyHistory} (issuer, kid, first_seen) VALUES ('https://acme.test', 'by-hand', -1)`);
    } finally {
      await db.query(`ALTER TABLE ${TABLES.keyHistory} ADD CONSTRAINT ${TABLES.keyHistory}_times CHECK (first_seen >= 0) NOT VALID`);
    }
    const errors: unknown[] = [];
    const events: KeyHistoryRowRefusedEvent[] = [];
    const one = await instance({ onError: (error) => errors.push(error), onEvent: (event) => events.push(event) });
    const other = await instance({ onError: (error) => errors.push(error), onEvent: () => undefined });
    await one.verifier.verify(await issuer.token());
    await one.keys.flush();
    await one.keys.flush();
    await other.keys.flush();
    expect(errors).toEqual([]);
    expect(events).toEqual([
      {
        type: 'key_history_row_refused',
        issuer: 'https://acme.test',
        kid: 'by-hand',
        reason: expect.stringContaining('row ("https://acme.test", "by-hand").firstSeen must be a time'),
      },
    ]);
    expect(other.verifier.keyHistory().map((entry) => entry.kid)).toEqual(['acme-1']);
    expect((await readKeyHistory(db, { issuer: 'https://acme.test' })).map((entry) => entry.kid)).toEqual(['acme-1']);
  });

  it('refuses an empty issuer in readKeyHistory', async () => {
    await expect(readKeyHistory(db, { issuer: '' })).rejects.toThrow(TypeError);
  });

  it('flushes every flushInterval by itself', async () => {
    const { verifier } = await instance({ flushInterval: 100 });
    await verifier.verify(await issuer.token());
    await eventually('a flush', async () => (await readKeyHistory(db)).length === 1);
  });

  it('flushes once more at close', async () => {
    const { verifier, keys } = await instance();
    await verifier.verify(await issuer.token());
    await keys.close();
    expect(await readKeyHistory(db)).toHaveLength(1);
  });
  it('reports a stopped server once, keeps verifying, and flushes again once it is back', async () => {
    const errors: unknown[] = [];
    let recovered = 0;
    const { verifier } = await instance({
      flushInterval: 100,
      onError: (error) => errors.push(error),
      onRecovered: () => (recovered += 1),
    });
    await server.stop();
    try {
      await verifier.verify(await issuer.token());
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(errors).toHaveLength(1);
    } finally {
      await server.start();
    }
    await eventually('a flush after the restart', () => recovered === 1, 5000);
    expect(await readKeyHistory(db)).toHaveLength(1);
    expect(errors).toHaveLength(1);
  });

  describe('when the database goes silent', () => {
    let proxy: TcpProxy;

    beforeAll(async () => {
      proxy = await startProxy(server.port);
    });

    afterAll(() => proxy.close());

    /** A pool through the proxy, with the bounds production gets from poolSettings(). */
    function throughProxy(): pg.Pool {
      const { connectionString, ...settings } = poolSettings(proxy.via(server.url), { statementTimeout: 200, connectTimeout: 300, max: 2 });
      return openPool(connectionString, settings);
    }

    it('keeps verifying, reports the stall once, and shares the history after the heal', async () => {
      const errors: unknown[] = [];
      let recovered = 0;
      const { verifier, keys } = await instance(
        { flushInterval: 100, statementTimeout: 200, onError: (error) => errors.push(error), onRecovered: () => (recovered += 1) },
        throughProxy(),
      );
      proxy.silence();
      await verifier.verify(await issuer.token());
      await expect(keys.flush()).rejects.toThrow(StatementTimeoutError);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(StatementTimeoutError);
      clock.advance(MINUTE);
      await verifier.verify(await issuer.token());
      proxy.heal();
      await eventually(
        'the recovery, and the use made during the silence flushed',
        async () => recovered === 1 && (await readKeyHistory(db))[0]?.lastUsed === clock.now(),
        3000,
      );
      expect(errors).toHaveLength(1);
    });
  });
});
