/**
 * The fleet's heartbeats on a real PostgreSQL: each instance's row says what it applied, at once
 * after it applied it; `waitForFleet` returns when every live instance has, or names those that
 * have not within its bound; a silent instance stops being live; rows unwritten for the retention
 * are deleted, and an instance deletes its own at close.
 */
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IssuerRegistry } from '../../src/index.js';
import {
  ClosedError,
  type PostgresControls,
  type PostgresHeartbeat,
  type PostgresHeartbeatOptions,
  type PostgresRegistry,
  addIssuer,
  migrate,
  postgresControls,
  postgresHeartbeat,
  postgresRegistry,
  registryDigest,
} from '../../src/postgres/index.js';
import { LOADED_MARGIN_MS, PATIENCE_MS } from '../support/loaded-machine.js';
import { TABLES } from '../../src/postgres/schema-names.js';
import { readFleet, recordControl, waitForFleet } from '../../src/postgres/internal.js';
import { readInstances } from '../../src/postgres/fleet.js';
import { eventually } from './eventually.js';
import { createTestDatabase, openPool, skipWithoutPostgres } from './pg-server.js';
import { clearRegistry } from './roles.js';

const SKIP = skipWithoutPostgres('test/postgres/fleet.test.ts');
/** Long enough that only an applied change or `beat()` writes a heartbeat during a test. */
const NO_BEAT = 600_000;
const NO_POLL = 600_000;
const ACME = { issuer: 'https://acme.test', jwksUri: 'https://acme.test/jwks.json', products: ['acme'] };
/** The bound of a wait that is meant to run out (asserted with LOADED_MARGIN_MS beyond it). */
const WAIT_BOUND = 500;
/** How soon an applied change is in the heartbeat row: "at once", far below NO_BEAT. */
const AT_ONCE_MS = 1000;

let db: pg.Pool;
let closing: { close(): Promise<void> }[] = [];

interface Instance {
  readonly registry: PostgresRegistry;
  readonly controls: PostgresControls;
  readonly heartbeat: PostgresHeartbeat;
}

/** An instance following the registry and the controls, with its heartbeat. */
async function instance(name: string, options: PostgresHeartbeatOptions = {}): Promise<Instance> {
  const registry = await postgresRegistry(db, { pollInterval: NO_POLL, onEvent: () => undefined });
  const controls = await postgresControls(db, { pollInterval: NO_POLL, compactInterval: 0, onError: () => undefined });
  const heartbeat = await postgresHeartbeat(db, { name, registry, controls, interval: NO_BEAT, onError: () => undefined, ...options });
  closing.push(heartbeat, registry, controls);
  return { registry, controls, heartbeat };
}

/** A heartbeat reporting a registry that never applies anything: an instance stuck behind. */
async function stuck(name: string): Promise<PostgresHeartbeat> {
  const frozen = new IssuerRegistry([], { allowEmpty: true });
  const registry = {
    through: 0,
    digest: await registryDigest(frozen),
    refused: [],
    registry: () => frozen,
    onApplied: () => () => undefined,
  };
  const heartbeat = await postgresHeartbeat(db, { name, registry, interval: 200, onError: () => undefined });
  closing.push(heartbeat);
  return heartbeat;
}

async function row(name: string) {
  return (await readInstances(db)).find((instance) => instance.name === name);
}

describe.skipIf(SKIP)('heartbeats and the fleet on a real PostgreSQL', () => {
  beforeAll(async () => {
    db = openPool((await createTestDatabase('fleet')).url, { max: 8 });
    await migrate(db, { only: ['controls', 'registry', 'fleet'] });
  });

  afterAll(async () => {
    await db?.end();
  });

  beforeEach(async () => {
    await clearRegistry(db);
    await db.query(`DELETE FROM ${TABLES.instances}`);
  });

  afterEach(async () => {
    for (const held of closing.reverse()) await held.close();
    closing = [];
  });

  it('writes a row per instance: its name, the registry change and digest and the control it applied, live', async () => {
    await addIssuer(db, ACME, { by: 'alice' });
    const control = await recordControl(db, { action: 'refresh_keys', issuer: ACME.issuer });
    const a = await instance('a');
    expect(await row('a')).toMatchObject({
      name: 'a',
      live: true,
      registry: { change: a.registry.through, digest: a.registry.digest, issuers: 1, refused: 0 },
      control: control.id,
    });
    const fleet = await readFleet(db);
    expect(fleet.registry).toEqual({ change: a.registry.through, digest: a.registry.digest, issuers: 1, refused: 0 });
    expect(fleet.control).toBe(control.id);
  });

  it('beats at once after its registry or its controls applied a change, long before its interval', async () => {
    await instance('a');
    const change = await addIssuer(db, ACME, { by: 'alice' });
    await eventually(
      'the registry change is reported',
      async () => (await row('a'))?.registry?.change === change.id,
      AT_ONCE_MS + LOADED_MARGIN_MS,
    );
    const control = await recordControl(db, { action: 'suspend_issuer', issuer: ACME.issuer });
    await eventually('the control is reported', async () => (await row('a'))?.control === control.id, AT_ONCE_MS + LOADED_MARGIN_MS);
  });

  it('waits until every live instance applied a change', async () => {
    await Promise.all([instance('a'), instance('b')]);
    const change = await addIssuer(db, ACME, { by: 'alice' });
    const report = await waitForFleet(db, { registryChange: change.id, timeout: PATIENCE_MS });
    expect(report).toMatchObject({ applied: ['a', 'b'], lagging: [], gone: [] });
    for (const name of ['a', 'b']) expect((await row(name))?.registry?.change).toBeGreaterThanOrEqual(change.id);
  });

  it('names, once its bound has passed, the instance that has not applied the change', async () => {
    await instance('a');
    await stuck('b');
    const change = await addIssuer(db, ACME, { by: 'alice' });
    const started = Date.now();
    const report = await waitForFleet(db, { registryChange: change.id, timeout: WAIT_BOUND });
    expect(Date.now() - started).toBeLessThan(WAIT_BOUND + LOADED_MARGIN_MS);
    expect(report.applied).toEqual(['a']);
    expect(report.lagging).toEqual([expect.objectContaining({ name: 'b', registry: expect.objectContaining({ change: 0 }) })]);
  });

  it('names the lagging instance, not an unavailable database, when the read at the end of the wait answers in 50 ms', async () => {
    await instance('a');
    await stuck('b');
    const change = await addIssuer(db, ACME, { by: 'alice' });
    // Every read answers 50 ms late: the last one starts as the bound passes. It used to get the
    // time left (10 ms at least) as its statement timeout, and the wait threw StorageUnavailableError.
    const slow = {
      query: async (text: string, params?: unknown[]) => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return db.query(text, params);
      },
    };
    const report = await waitForFleet(slow, { registryChange: change.id, timeout: WAIT_BOUND });
    expect(report.lagging.map(({ name }) => name)).toEqual(['b']);
    expect(report.waited).toBeGreaterThanOrEqual(WAIT_BOUND);
  });

  it('leaves out of a wait the instances that follow nothing of what changed, and those not live', async () => {
    const controlsOnly = await postgresControls(db, { pollInterval: NO_POLL, compactInterval: 0, onError: () => undefined });
    closing.push(controlsOnly);
    closing.push(
      await postgresHeartbeat(db, { name: 'controls-only', controls: controlsOnly, interval: NO_BEAT, onError: () => undefined }),
    );
    await db.query(
      `INSERT INTO ${TABLES.instances} (name, started_at, seen_at, interval_ms, registry_change, control) VALUES ('silent', now(), now() - interval '1 minute', 1000, 0, 0)`,
    );
    const change = await addIssuer(db, ACME, { by: 'alice' });
    expect(await waitForFleet(db, { registryChange: change.id, timeout: WAIT_BOUND })).toMatchObject({ applied: [], lagging: [] });
    expect(await row('silent')).toMatchObject({ live: false, silentFor: expect.any(Number) });
    expect((await row('silent'))?.silentFor).toBeGreaterThanOrEqual(59_000);
  });

  it("brings a hand-written seen_at ahead of the database's clock (infinity) back to that clock, so the retention reaches it", async () => {
    await db.query(
      `INSERT INTO ${TABLES.instances} (name, started_at, seen_at, interval_ms, registry_change) VALUES
         ('never', now(), '-infinity', 1000, 0), ('forever', now(), 'infinity', 1000, 0), ('later', now(), now(), 1000, 0)`,
    );
    await db.query(`UPDATE ${TABLES.instances} SET seen_at = now() + interval '1 year' WHERE name = 'later'`);
    const { rows } = await db.query('SELECT now() AS now');
    const now = (rows[0] as { now: Date }).now.getTime();
    for (const name of ['forever', 'later']) {
      expect((await row(name))?.seenAt.getTime()).toBeLessThanOrEqual(now + AT_ONCE_MS);
      expect((await row(name))?.seenAt.getTime()).toBeGreaterThanOrEqual(now - AT_ONCE_MS);
    }
    expect(await row('never')).toMatchObject({ live: false, silentFor: Number.POSITIVE_INFINITY });
  });

  it('stops counting a row written by hand with a seen_at of infinity as live once its intervals pass', async () => {
    await db.query(
      `INSERT INTO ${TABLES.instances} (name, started_at, seen_at, interval_ms, registry_change) VALUES ('forever', now(), 'infinity', 100, 0)`,
    );
    await eventually('the row is not live', async () => (await row('forever'))?.live === false);
    const change = await addIssuer(db, ACME, { by: 'alice' });
    expect(await waitForFleet(db, { registryChange: change.id, timeout: WAIT_BOUND })).toMatchObject({ applied: [], lagging: [] });
  });

  it.each([
    ['an interval of 2^31 - 1 ms', 'interval_ms = 2147483647'],
    ['a control character in the name', "name = E'gateway\\x1b[2J'"],
    ['a digest that is no SHA-256 in hex', "registry_digest = E'\\x1b[31mdeadbeef'"],
    ['an infinite start', "started_at = 'infinity'"],
    ['a negative registry change', 'registry_change = -1'],
    ['a negative control', 'control = -1'],
    ['a negative count of issuers', 'registry_issuers = -1'],
  ])('refuses a row no heartbeat writes, with %s (constraint paygate_instances_heartbeat)', async (_, change) => {
    await db.query(`INSERT INTO ${TABLES.instances} (name, started_at, interval_ms) VALUES ('hand', now(), 1000)`);
    await expect(db.query(`UPDATE ${TABLES.instances} SET ${change} WHERE name = 'hand'`)).rejects.toMatchObject({
      code: '23514',
      constraint: 'paygate_instances_heartbeat',
    });
  });

  it('deletes the rows no heartbeat wrote for the retention, and its own row at close', async () => {
    await db.query(
      `INSERT INTO ${TABLES.instances} (name, started_at, seen_at, interval_ms) VALUES ('old', now(), now() - interval '2 days', 1000)`,
    );
    const heartbeat = await postgresHeartbeat(db, { name: 'a', interval: NO_BEAT, retention: 86_400_000, onError: () => undefined });
    expect((await readInstances(db)).map((instance) => instance.name)).toEqual(['a']);
    expect(await row('a')).toMatchObject({ registry: null, control: null });
    await heartbeat.close();
    expect(await readInstances(db)).toEqual([]);
  });

  it('resolves a second close() called meanwhile only once the row is deleted', async () => {
    const heartbeat = await postgresHeartbeat(db, { name: 'a', interval: NO_BEAT, onError: () => undefined });
    const first = heartbeat.close();
    await heartbeat.close();
    expect(await readInstances(db)).toEqual([]);
    await first;
  });

  it('refuses beat() after close() with a ClosedError naming the heartbeat, and writes no row', async () => {
    const heartbeat = await postgresHeartbeat(db, { name: 'a', interval: NO_BEAT, onError: () => undefined });
    await heartbeat.close();
    const refused = await heartbeat.beat().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ClosedError);
    expect(refused).toMatchObject({ code: 'closed', owner: 'postgresHeartbeat', message: expect.stringContaining('beat()') });
    expect(await readInstances(db)).toEqual([]);
  });

  it('resolves close() called again after it closed', async () => {
    const heartbeat = await postgresHeartbeat(db, { name: 'a', interval: NO_BEAT, onError: () => undefined });
    await heartbeat.close();
    await expect(heartbeat.close()).resolves.toBeUndefined();
  });

  it('leaves no row behind when it closes during a heartbeat in flight', async () => {
    // The heartbeat's writes reach the database through a client that holds one back until the
    // DELETE of close() has run (or 500 ms have passed): the order of a pool's connections racing.
    let release: () => void = () => undefined;
    let held: Promise<void> | undefined;
    const client = {
      async query(text: string, params?: unknown[]) {
        if (held !== undefined && text.startsWith('WITH beat')) await held;
        const result = await db.query(text, params);
        if (text.startsWith('DELETE')) release();
        return result;
      },
    };
    const heartbeat = await postgresHeartbeat(client, { name: 'a', interval: NO_BEAT, onError: () => undefined });
    held = new Promise<void>((resolve) => {
      release = resolve;
      setTimeout(resolve, 500);
    });
    const beat = heartbeat.beat().catch(() => undefined);
    await heartbeat.close();
    await beat;
    expect(await readInstances(db)).toEqual([]);
  });

  it('names the name found when it refuses one, escaped on one line', async () => {
    await expect(postgresHeartbeat(db, { name: 'gateway\n1' })).rejects.toThrow(
      expect.objectContaining({ name: 'TypeError', message: expect.stringContaining('got "gateway\\u000a1"') }),
    );
  });

  it.each([
    ['name', { name: '' }],
    ['name', { name: 'a\nb' }],
    ['interval', { interval: 50 }],
    ['retention', { retention: 1000 }],
    ['registry', { registry: {} }],
    ['onError', { onError: 'log' }],
  ])('refuses a bad %s with a TypeError naming it', async (name, options) => {
    await expect(postgresHeartbeat(db, options as PostgresHeartbeatOptions)).rejects.toThrow(
      expect.objectContaining({ name: 'TypeError', message: expect.stringContaining(name) }),
    );
  });
});
