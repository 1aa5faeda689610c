/**
 * Key history shared through PostgreSQL: verifiers on one database (each its own pool) share when
 * a key was first seen and first used, a restart keeps them, a breach one reported is not reported
 * by another, and a database that goes silent delays the sharing, reported once, never the
 * verifications. The key rules themselves are the verifier's (test/core/key-history.test.ts).
 */
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type IssuerEntry,
  type KeyBreachEvent,
  type KeyHistoryEntry,
  type Verifier,
  type VerifierOptions,
  createVerifier,
} from '../../src/index.js';
import {
  ClosedError,
  type KeyHistoryRowRefusedEvent,
  type PostgresKeyHistory,
  type PostgresKeyHistoryOptions,
  isUnavailable,
  migrate,
  poolSettings,
  postgresKeyHistory,
} from '../../src/postgres/index.js';
import { WITHDRAWN_KEPT } from '../../src/core/key-history.js';
import { TABLES } from '../../src/postgres/schema-names.js';
import { readKeyHistory } from '../../src/postgres/internal.js';
import { type TestIssuer, createTestIssuer } from '../../src/testing/index.js';
import { type FakeClock, fakeClock } from '../support/jwks-clock.js';
import { type EventLog, eventLog } from '../support/jwks-events.js';
import { eventually } from './eventually.js';
import { writeRefusedKeyRow } from './forged-key-row.js';
import { type PgServer, countSessions, openPool, skipWithoutPostgres, startPostgres } from './pg-server.js';
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
  verifierOptions: Partial<VerifierOptions> = {},
): Promise<{ verifier: Verifier; log: EventLog; keys: PostgresKeyHistory }> {
  opened.push(pool);
  const keys = await postgresKeyHistory(pool, { flushInterval: NO_FLUSH, onError: () => undefined, ...options });
  running.push(keys);
  const log = eventLog();
  const verifier = createVerifier({
    registry: [issuer.entry],
    audience: AUDIENCE,
    now: clock.now,
    onEvent: log.listener,
    cache: false,
    ...verifierOptions,
  });
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
        thumbprint: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
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

  it('keeps the newer key under a kid: a stale instance still using the old key neither brings it back nor moves its first sighting', async () => {
    const stale = await instance();
    const swapped = await instance();
    await stale.verifier.verify(await issuer.token());
    await stale.keys.flush();
    await swapped.keys.flush();
    const [old] = stale.verifier.keyHistory();
    expect(old?.thumbprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The other instance's download listed other key material under acme-1 a day later.
    const newer = { ...(old as KeyHistoryEntry), thumbprint: 'B'.repeat(43), firstSeen: clock.now() + DAY * 1000, breaches: [] };
    swapped.verifier.mergeKeyHistory([newer]);
    await swapped.keys.flush();
    clock.advance(MINUTE);
    await stale.verifier.verify(await issuer.token());
    await stale.keys.flush();
    const rows = await readKeyHistory(db);
    expect(rows).toEqual([expect.objectContaining({ kid: 'acme-1', thumbprint: 'B'.repeat(43), firstSeen: newer.firstSeen })]);
    expect(stale.verifier.keyHistory()).toEqual([expect.objectContaining({ thumbprint: 'B'.repeat(43), firstSeen: newer.firstSeen })]);
  });

  it('refuses a thumbprint that is not 43 base64url characters in the table itself (its constraint)', async () => {
    await expect(
      db.query(`INSERT INTO ${TABLES.keyHistory} (issuer, kid, first_seen, thumbprint) VALUES ('https://acme.test', 'k', 0, 'x')`),
    ).rejects.toMatchObject({ code: '23514', constraint: `${TABLES.keyHistory}_thumbprint` });
  });

  it('converges after a row is deleted by hand: a running instance writes back what it knows, and one started since takes it in', async () => {
    const running = await instance();
    const start = clock.now();
    await running.verifier.verify(await issuer.token());
    clock.advance(4 * DAY);
    await running.verifier.verify(await issuer.token());
    await running.keys.flush();
    await db.query(`DELETE FROM ${TABLES.keyHistory} WHERE kid = 'acme-1'`);
    const started = await instance();
    await started.verifier.verify(await issuer.token());
    await started.keys.flush();
    await running.keys.flush();
    await running.keys.flush();
    await started.keys.flush();
    const converged = expect.objectContaining({ kid: 'acme-1', firstSeen: start, breaches: ['key_rotation_overdue'] });
    expect(await readKeyHistory(db)).toEqual([converged]);
    expect(started.verifier.keyHistory()).toEqual([converged]);
    await started.verifier.verify(await issuer.token());
    expect(breaches(running.log)).toEqual(['key_rotation_overdue acme-1']);
    expect(breaches(started.log)).toEqual([]);
  });

  it('merges rows: earliest sighting (with its publication) and first use, latest use and expiry, earliest withdrawal, breaches united', async () => {
    // Times from now, so that the withdrawal is within the retention.
    const t = clock.now();
    const entry: KeyHistoryEntry = {
      issuer: 'https://acme.test',
      kid: 'k',
      thumbprint: null,
      firstSeen: t + 5000,
      publishedAfter: t + 4000,
      firstUsed: t + 6000,
      lastUsed: t + 7000,
      latestExpiry: 100,
      withdrawn: null,
      breaches: ['key_used_early'],
    };
    const older = {
      ...entry,
      firstSeen: t + 3000,
      publishedAfter: t + 2000,
      firstUsed: t + 8000,
      lastUsed: t + 9000,
      latestExpiry: 50,
      withdrawn: t + 9500,
    };
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
        firstSeen: t + 3000,
        publishedAfter: t + 2000,
        firstUsed: t + 6000,
        lastUsed: t + 9000,
        latestExpiry: 100,
        withdrawn: t + 9500,
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
        // Seen now: a key of an issuer no verifier here trusts is deleted once unused for the retention.
        firstSeen: clock.now(),
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
    await writeRefusedKeyRow(db, 'https://acme.test');
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
    expect(events[0]?.reason).toContain('got -1');
    expect(other.verifier.keyHistory().map((entry) => entry.kid)).toEqual(['acme-1']);
    expect((await readKeyHistory(db, { issuer: 'https://acme.test' })).map((entry) => entry.kid)).toEqual(['acme-1']);
  });

  it.each([
    ['U+0000', 'k\u0000'],
    ['a lone surrogate', 'k\ud800'],
  ])(
    'the attack: a JWKS kid holding %s, which PostgreSQL cannot store, is reported once and not written; every flush goes on',
    async (_name, kid) => {
      const errors: unknown[] = [];
      const events: KeyHistoryRowRefusedEvent[] = [];
      const { verifier, keys } = await instance({ onError: (error) => errors.push(error), onEvent: (event) => events.push(event) });
      issuer.publish({ ...(issuer.jwks.keys[0] as Record<string, unknown>), kid });
      await verifier.refresh(issuer.entry.issuer);
      await keys.flush();
      await verifier.verify(await issuer.token());
      await keys.flush();
      expect(errors).toEqual([]);
      expect(events).toEqual([
        {
          type: 'key_history_row_refused',
          issuer: 'https://acme.test',
          kid,
          reason: expect.stringContaining('its kid holds U+0000 or a lone surrogate'),
        },
      ]);
      expect((await readKeyHistory(db)).map((entry) => [entry.kid, entry.firstUsed !== null])).toEqual([['acme-1', true]]);
    },
  );

  it('skips a row of a trusted issuer whose kid is longer than a token may name, reporting it cut: a table writer cannot grow memory', async () => {
    await db.query(`INSERT INTO ${TABLES.keyHistory} (issuer, kid, first_seen) VALUES ('https://acme.test', repeat('k', 100000), 0)`);
    const events: KeyHistoryRowRefusedEvent[] = [];
    const { verifier } = await instance({ onEvent: (event) => events.push(event) });
    expect(verifier.keyHistory()).toEqual([]);
    expect(events).toHaveLength(1);
    expect(events[0]?.kid).toHaveLength(257);
    expect(events[0]?.reason).toContain('.kid must be at most 256 characters');
    expect(events[0]?.reason).toContain('got 257 characters');
    expect(await readKeyHistory(db, { issuer: 'https://acme.test' })).toEqual([]);
  });

  it('skips a row whose issuer is longer than 2048 characters, reporting it cut: a table writer cannot grow memory', async () => {
    await db.query(`INSERT INTO ${TABLES.keyHistory} (issuer, kid, first_seen) VALUES (repeat('i', 100000), 'k', 0)`);
    const events: KeyHistoryRowRefusedEvent[] = [];
    const { verifier } = await instance({ onEvent: (event) => events.push(event) });
    expect(verifier.keyHistory()).toEqual([]);
    expect(events).toHaveLength(1);
    expect(events[0]?.issuer).toHaveLength(2049);
    expect(events[0]?.reason).toContain('.issuer must be at most 2048 characters');
    // Read cut at 2049: what the row holds is more than 2048, not 2049.
    expect(events[0]?.reason).toContain('got more than 2048 characters');
    expect(events[0]?.reason).not.toContain('got 2049');
    expect(await readKeyHistory(db)).toEqual([]);
  });

  it('refuses an empty issuer in readKeyHistory', async () => {
    await expect(readKeyHistory(db, { issuer: '' })).rejects.toThrow(TypeError);
  });

  it.each([
    ['an empty issuer', '', 'got ""'],
    ['an issuer that is not text', 42, 'got 42'],
  ])('names the value found when readKeyHistory refuses %s', async (_case, issuer, found) => {
    await expect(readKeyHistory(db, { issuer: issuer as string })).rejects.toThrow(found);
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
  it('refuses flush() after close() with a ClosedError naming the key history, and writes nothing', async () => {
    const { verifier, keys } = await instance();
    await keys.close();
    await verifier.verify(await issuer.token());
    const refused = await keys.flush().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ClosedError);
    expect(refused).toMatchObject({ code: 'closed', owner: 'postgresKeyHistory', message: expect.stringContaining('flush()') });
    expect(await readKeyHistory(db)).toEqual([]);
  });

  it('refuses attach() after close() with a ClosedError: a verifier attached then would never be shared', async () => {
    const { keys } = await instance();
    await keys.close();
    const late = createVerifier({ registry: [issuer.entry], audience: AUDIENCE, now: clock.now });
    expect(() => keys.attach(late)).toThrow(ClosedError);
  });

  it('resolves close() called again after it closed, without another flush', async () => {
    const { verifier, keys } = await instance();
    await keys.close();
    await verifier.verify(await issuer.token());
    await expect(keys.close()).resolves.toBeUndefined();
    expect(await readKeyHistory(db)).toEqual([]);
  });

  it('reports a stopped server once, keeps verifying, and flushes again once it is back', async () => {
    const errors: unknown[] = [];
    let recovered = 0;
    const pool = openPool(server.url, { max: 2 });
    const sessions = countSessions(pool);
    const { verifier } = await instance(
      { flushInterval: 100, onError: (error) => errors.push(error), onRecovered: () => (recovered += 1) },
      pool,
    );
    await server.stop();
    try {
      await verifier.verify(await issuer.token());
      await eventually('the stop is reported', () => errors.length > 0);
      // Once: nothing more over five more flushes, each refused (a sixth has started).
      const reported = sessions();
      await eventually('five more flushes refused', () => sessions() > reported + 5);
      expect(errors).toHaveLength(1);
    } finally {
      await server.start();
    }
    await eventually('a flush after the restart', () => recovered === 1);
    expect(await readKeyHistory(db)).toHaveLength(1);
    expect(errors).toHaveLength(1);
  });

  describe('bounded cost and retention (issue 39)', () => {
    /** Retention with the verifier's defaults: maxTokenLifetime 24 h, clockTolerance 30 s, jwksStaleWindow 24 h. */
    const RETENTION_MS = (DAY + 30 + DAY) * 1000;

    /** Writes rows by hand: `kid`s of `issuerName`, first seen at `firstSeen`, withdrawn at `withdrawn`. */
    async function rowsByHand(issuerName: string, kids: readonly string[], firstSeen: number, withdrawn: number | null): Promise<void> {
      await db.query(
        `INSERT INTO ${TABLES.keyHistory} (issuer, kid, first_seen, withdrawn) SELECT $1, kid, $2, $3 FROM unnest($4::text[]) AS kid`,
        [issuerName, firstSeen, withdrawn, kids],
      );
    }

    const count = async (where = 'true'): Promise<number> =>
      Number((await db.query(`SELECT count(*) AS n FROM ${TABLES.keyHistory} WHERE ${where}`)).rows[0].n);

    it('reads the table once at start-up; then each flush writes the keys changed since the last and reads the rows changed since', async () => {
      // 200 rows of another issuer this verifier trusts, whose JWKS it has not downloaded.
      const other: IssuerEntry = { issuer: 'https://other.test', jwksUri: 'https://other.test/jwks.json', products: ['other'] };
      await rowsByHand(
        other.issuer,
        Array.from({ length: 200 }, (_, index) => `old-${index}`),
        clock.now(),
        null,
      );
      const statements: string[] = [];
      const pool = openPool(server.url, { max: 2 });
      const counted = {
        query: async (text: string, params: unknown[] = []) => {
          const result = await pool.query(text, params);
          if (text.startsWith(`INSERT INTO ${TABLES.keyHistory}`))
            statements.push(`wrote ${(JSON.parse(params[0] as string) as unknown[]).length}`);
          if (text.includes('WHERE changed >')) statements.push(`read ${result.rows.length}`);
          return result;
        },
        end: () => pool.end(),
      };
      const { keys } = await instance({}, counted as unknown as pg.Pool);
      const verifier = createVerifier({ registry: [issuer.entry, other], audience: AUDIENCE, now: clock.now, cache: false });
      keys.attach(verifier);
      expect(statements).toEqual(['read 200']);
      expect(verifier.keyHistory()).toHaveLength(200);
      await verifier.verify(await issuer.token());
      await keys.flush();
      expect(statements.slice(1)).toEqual(['wrote 1', 'read 1']);
      await keys.flush();
      expect(statements.slice(3)).toEqual(['read 0']);
      clock.advance(MINUTE);
      await verifier.verify(await issuer.token());
      await keys.flush();
      expect(statements.slice(4)).toEqual(['wrote 1', 'read 1']);
    });

    it('takes in the rows another instance changed, at its next flush', async () => {
      const one = await instance();
      const two = await instance();
      await one.verifier.verify(await issuer.token());
      await one.keys.flush();
      await two.keys.flush();
      expect(two.verifier.keyHistory()).toEqual([expect.objectContaining({ kid: 'acme-1', firstUsed: clock.now() })]);
    });

    it('the attack: a JWKS listing 200 new kids per download holds the table to the per-download and per-issuer limits', async () => {
      // A set this large is read only under a raised jwksMaxKeys (100 entries by default).
      const { verifier, keys } = await instance({}, undefined, { jwksMaxKeys: 1000 });
      const jwk = issuer.jwks.keys[0] as Record<string, unknown>;
      const minted = (round: number) => Array.from({ length: 200 }, (_, index) => ({ ...jwk, kid: `round${round}-${index}` }));
      const sizes: number[] = [];
      for (let round = 0; round < 6; round += 1) {
        if (round > 0) for (const key of minted(round - 1)) issuer.unpublish(key.kid);
        issuer.publish(...minted(round));
        await verifier.refresh(issuer.entry.issuer);
        await keys.flush();
        sizes.push(await count());
        clock.advance(MINUTE);
      }
      // 16 new kids per download (the signing key among the first), and the 32 latest withdrawn.
      expect(sizes).toEqual([16, 32, 48, 49, 49, 49]);
    });

    it('runs a flush on one connection of its pool: its write, retention and read check out one', async () => {
      const pool = openPool(server.url, { max: 2 });
      const { verifier, keys } = await instance({}, pool);
      let checkouts = 0;
      pool.on('acquire', () => {
        checkouts += 1;
      });
      await verifier.verify(await issuer.token());
      await keys.flush();
      expect(checkouts).toBe(1);
    });

    it('sends no retention statement in a flush that only records uses, once the first flush has run it', async () => {
      const deletes: string[] = [];
      const pool = openPool(server.url, { max: 2 });
      const counted = {
        query: async (text: string, params: unknown[] = []) => {
          if (/^\s*(WITH expired AS \()?DELETE/.test(text)) deletes.push(text.includes('expired') ? 'retention' : 'sweep');
          return pool.query(text, params);
        },
        end: () => pool.end(),
      };
      const { verifier, keys } = await instance({}, counted as unknown as pg.Pool);
      await verifier.verify(await issuer.token());
      await keys.flush();
      expect(deletes).toEqual(['retention', 'sweep']);
      clock.advance(1);
      await verifier.verify(await issuer.token());
      await keys.flush();
      expect(deletes).toEqual(['retention', 'sweep']);
    });

    it('deletes a key withdrawn past the retention by hand once the cut-off has moved a minute since the retention last ran', async () => {
      const { keys } = await instance();
      await keys.flush();
      const now = clock.now();
      await rowsByHand(issuer.entry.issuer, ['expired'], now - RETENTION_MS - 60_000, now - RETENTION_MS - 1000);
      await keys.flush();
      expect(await count(`kid = 'expired'`)).toBe(1);
      clock.advance(MINUTE);
      await keys.flush();
      expect(await count(`kid = 'expired'`)).toBe(0);
    });

    it(`holds an issuer's withdrawn keys to the ${WITHDRAWN_KEPT} latest at the flush that withdraws one of its keys`, async () => {
      const { verifier, keys } = await instance();
      await verifier.verify(await issuer.token());
      await keys.flush();
      const now = clock.now();
      for (let index = 0; index < 40; index += 1)
        await rowsByHand(issuer.entry.issuer, [`recent-${index}`], now - 60_000, now - 50_000 + index);
      await keys.flush();
      expect(await count('withdrawn IS NOT NULL')).toBe(40);
      issuer.publish({ ...(issuer.jwks.keys[0] as Record<string, unknown>), kid: 'acme-2' });
      issuer.unpublish('acme-1');
      await verifier.refresh(issuer.entry.issuer);
      await keys.flush();
      expect(await count('withdrawn IS NOT NULL')).toBe(WITHDRAWN_KEPT);
      expect(await count(`kid = 'acme-1' AND withdrawn IS NOT NULL`)).toBe(1);
    });

    it(`deletes a key withdrawn past the retention, and an issuer's withdrawn keys past the ${WITHDRAWN_KEPT} latest, at the next flush`, async () => {
      const now = clock.now();
      await rowsByHand(issuer.entry.issuer, ['expired'], now - RETENTION_MS - 60_000, now - RETENTION_MS - 1000);
      const recent = Array.from({ length: 50 }, (_, index) => `recent-${index}`);
      for (const [index, kid] of recent.entries()) await rowsByHand(issuer.entry.issuer, [kid], now - 60_000, now - 50_000 + index);
      const { verifier, keys } = await instance();
      await verifier.verify(await issuer.token());
      await keys.flush();
      expect(await count(`kid = 'expired'`)).toBe(0);
      const kept = await db.query(`SELECT kid FROM ${TABLES.keyHistory} WHERE withdrawn IS NOT NULL ORDER BY withdrawn`);
      expect(kept.rows.map((row) => row.kid)).toEqual(recent.slice(-WITHDRAWN_KEPT));
    });

    it('deletes the keys of an issuer no verifier trusts once unused for the retention, and keeps a recent one', async () => {
      const now = clock.now();
      await rowsByHand('https://removed.test', ['r-1', 'r-2'], now - RETENTION_MS - 1000, null);
      await rowsByHand('https://added-elsewhere.test', ['n-1'], now, null);
      const { keys } = await instance();
      await keys.flush();
      expect((await db.query(`SELECT issuer FROM ${TABLES.keyHistory}`)).rows.map((row) => row.issuer)).toEqual([
        'https://added-elsewhere.test',
      ]);
    });

    it("withdraws a removed issuer's keys in the table, and deletes them once past the retention", async () => {
      const { verifier, keys } = await instance();
      await verifier.verify(await issuer.token());
      await keys.flush();
      verifier.setRegistry([]);
      await keys.flush();
      expect(await readKeyHistory(db)).toEqual([expect.objectContaining({ kid: 'acme-1', withdrawn: clock.now() })]);
      clock.advance(RETENTION_MS + 1000);
      await keys.flush();
      expect(await count()).toBe(0);
    });

    it('takes in no row of an issuer the verifier does not trust: a table writer cannot grow its memory', async () => {
      await rowsByHand(
        'https://forged.test',
        Array.from({ length: 500 }, (_, index) => `f-${index}`),
        clock.now(),
        null,
      );
      const { verifier, keys } = await instance();
      await rowsByHand('https://forged-later.test', ['f'], clock.now(), null);
      await keys.flush();
      expect(verifier.keyHistory()).toEqual([]);
    });

    it.each([
      ['kept in the table', false],
      ['deleted since', true],
    ])(
      'gives a row written after the change sequence was moved back (setval) an id past every one read, the newest row %s',
      async (_, deleted) => {
        const one = await instance();
        await rowsByHand(issuer.entry.issuer, ['newest'], clock.now(), null);
        await one.keys.flush();
        expect(one.verifier.keyHistory().map((entry) => entry.kid)).toEqual(['newest']);
        if (deleted) await db.query(`DELETE FROM ${TABLES.keyHistory} WHERE kid = 'newest'`);
        await db.query(`SELECT setval('${TABLES.keyHistory}_changes', 1, false)`);
        await rowsByHand(issuer.entry.issuer, ['after-setval'], clock.now(), null);
        await one.keys.flush();
        expect(one.verifier.keyHistory().map((entry) => entry.kid)).toContain('after-setval');
      },
    );

    it('a forged row cannot stop a flush: its change id is the trigger’s, and a refused row is skipped while the rows after it are shared', async () => {
      const events: KeyHistoryRowRefusedEvent[] = [];
      const otherEvents: KeyHistoryRowRefusedEvent[] = [];
      const one = await instance({ onEvent: (event) => events.push(event) });
      const other = await instance({ onEvent: (event) => otherEvents.push(event) });
      await db.query(
        `INSERT INTO ${TABLES.keyHistory} (issuer, kid, first_seen, changed) VALUES ('https://acme.test', 'far-ahead', $1, 9000000000000000)`,
        [clock.now()],
      );
      expect(await count(`kid = 'far-ahead' AND changed < 9000000000000000`)).toBe(1);
      await db.query(`ALTER TABLE ${TABLES.keyHistory} DROP CONSTRAINT ${TABLES.keyHistory}_times`);
      try {
        await db.query(`INSERT INTO ${TABLES.keyHistory} (issuer, kid, first_seen) VALUES ('https://acme.test', 'by-hand', -1)`);
      } finally {
        await db.query(`ALTER TABLE ${TABLES.keyHistory} ADD CONSTRAINT ${TABLES.keyHistory}_times CHECK (first_seen >= 0) NOT VALID`);
      }
      await other.verifier.verify(await issuer.token());
      await other.keys.flush();
      await one.keys.flush();
      expect(events.map((event) => event.kid)).toEqual(['by-hand']);
      expect(otherEvents.map((event) => event.kid)).toEqual(['by-hand']);
      expect(
        one.verifier
          .keyHistory()
          .map((entry) => entry.kid)
          .sort(),
      ).toEqual(['acme-1', 'far-ahead']);
    });
  });

  describe('when the database goes silent', () => {
    let proxy: TcpProxy;

    beforeAll(async () => {
      proxy = await startProxy(server.port);
    });

    afterAll(() => proxy.close());

    /**
     * The bound of each statement and connection: short, so that the silence is seen soon; long
     * enough that the start does not miss it on a loaded machine.
     */
    const BOUND = 1000;

    /** A pool through the proxy, with the bounds production gets from poolSettings(). */
    function throughProxy(): pg.Pool {
      const { connectionString, ...settings } = poolSettings(proxy.via(server.url), {
        statementTimeout: BOUND,
        connectTimeout: BOUND,
        max: 2,
      });
      return openPool(connectionString, settings);
    }

    it('keeps verifying, reports the stall once, and shares the history after the heal', async () => {
      const errors: unknown[] = [];
      /** How many errors had been reported at each recovery. */
      const recoveries: number[] = [];
      const pool = throughProxy();
      const sessions = countSessions(pool);
      const { verifier, keys } = await instance(
        {
          flushInterval: 100,
          statementTimeout: BOUND,
          onError: (error) => errors.push(error),
          onRecovered: () => recoveries.push(errors.length),
        },
        pool,
      );
      // A flush that missed its bound on the loaded machine is a stall and a recovery of their own:
      // the silence starts with no stall under way, and only what follows it counts.
      await eventually('no stall under way', () => errors.length === recoveries.length);
      const before = errors.length;
      proxy.silence();
      await verifier.verify(await issuer.token());
      // Refused at the statement's bound, or at the connection's when the flush had to open one (a
      // connection an earlier flush held past its bound on the loaded machine was destroyed).
      const refused = await keys.flush().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isUnavailable(refused)).toBe(true);
      await eventually('the stall is reported', () => errors.length > before);
      // Once: nothing more over two more flushes refused in the silence (a third has started).
      // Each is refused at the statement's bound, or the connection's when it had to open one (the
      // pool destroys a connection past it).
      const reported = sessions();
      await eventually('two more flushes refused', () => sessions() > reported + 2);
      expect(errors.slice(before).map(isUnavailable)).toEqual([true]);
      clock.advance(MINUTE);
      await verifier.verify(await issuer.token());
      proxy.heal();
      await eventually(
        'the recovery, and the use made during the silence flushed',
        async () => recoveries.length > before && (await readKeyHistory(db))[0]?.lastUsed === clock.now(),
      );
      // The silence was reported once, then recovered from.
      expect(recoveries[before]).toBe(before + 1);
    });
  });
});
