/**
 * Two gateway instances (each its own pool, stores, directory, controls and verifier; the first
 * listens for notifications, the second only polls) reach a real PostgreSQL through a TCP proxy
 * the test controls. The proxy goes silent (sockets kept open,
 * nothing forwarded), heals (new connections work; the silenced ones stay silent), then resets the
 * silenced ones. Bounds are short here so that the file runs in seconds; production defaults are
 * 5 s statements and polls.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Verifier } from '../../src/index.js';
import { type HandlerResponse, randomIds } from '../../src/payment-links/index.js';
import {
  type PostgresControls,
  PostgresDirectory,
  PostgresIdempotencyStore,
  PostgresPaymentLinkStore,
  migrate,
  poolSettings,
  postgresControls,
} from '../../src/postgres/index.js';
import { TABLES } from '../../src/postgres/schema-names.js';
import { recordControl } from '../../src/postgres/internal.js';
import { createTestVerifier } from '../../src/testing/index.js';
import { SEEDS, jsonRequest, makeHandler, useCallers, validBody } from '../payment-links/support.js';
import { LOADED_MARGIN_MS } from '../support/loaded-machine.js';
import { eventually } from './eventually.js';
import { createTestDatabase, countSessions, openPool, skipWithoutPostgres } from './pg-server.js';
import { type TcpProxy, startProxy } from './tcp-proxy.js';

const SKIP = skipWithoutPostgres('test/postgres/silent-network.test.ts');
/**
 * The statement timeout: the documented bound of an answer during an outage. Long enough that the
 * instances' start and warm-up do not miss it on a loaded machine, short enough that with the
 * margin it stays below the default of 5 s.
 */
const STATEMENT_TIMEOUT = 1000;
const POLL_INTERVAL = 1000;

const callers = useCallers();

interface Instance {
  readonly pool: pg.Pool;
  readonly controls: PostgresControls;
  readonly verifier: Verifier;
  readonly create: ReturnType<typeof makeHandler>;
  /** `stall` and `recovered`, as reported. */
  readonly events: string[];
  /** The sessions its pool checked out so far: a read, a retry, a listening connection each. */
  readonly sessions: () => number;
}

/**
 * How many events each instance had reported when the network went silent: a heartbeat that
 * missed its bound on the loaded machine before then is a stall and a recovery of its own.
 */
let eventsBeforeSilence: number[] = [];

let proxy: TcpProxy;
let operator: pg.Pool;
let instances: Instance[] = [];
/** The keys of the creates answered 503 during the silence, one per instance. */
const silentKeys: string[] = [];

async function startInstance(url: string, listens: boolean): Promise<Instance> {
  const { connectionString, ...settings } = poolSettings(proxy.via(url), {
    statementTimeout: STATEMENT_TIMEOUT,
    connectTimeout: STATEMENT_TIMEOUT,
    max: 4,
  });
  const pool = openPool(connectionString, settings);
  const sessions = countSessions(pool);
  const events: string[] = [];
  const options = { statementTimeout: STATEMENT_TIMEOUT };
  const controls = await postgresControls(pool, {
    ...options,
    pollInterval: POLL_INTERVAL,
    heartbeatInterval: 300,
    reconnectDelay: 50,
    onError: () => events.push('stall'),
    onRecovered: () => events.push('recovered'),
    ...(listens ? {} : { listen: false as const }),
  });
  const verifier = createTestVerifier(callers.issuer);
  controls.attach(verifier);
  const create = makeHandler({
    store: new PostgresPaymentLinkStore(pool, options),
    idempotency: new PostgresIdempotencyStore(pool, { ...options, leaseTime: 1000 }),
    directory: new PostgresDirectory(pool, options),
    ids: randomIds,
    now: () => Date.now(),
  });
  return { pool, controls, verifier, create, events, sessions };
}

async function createLink(instance: Instance, key: string = randomUUID()): Promise<{ response: HandlerResponse; ms: number }> {
  const started = performance.now();
  const response = await instance.create(
    jsonRequest(await callers.auth(), validBody({ shopper: `//customers/${key}` }), { 'idempotency-key': key }),
  );
  return { response, ms: performance.now() - started };
}

async function suspended(verifier: Verifier): Promise<boolean> {
  return verifier.verify(await callers.issuer.token()).then(
    () => false,
    (error: { code?: string }) => error.code === 'issuer_suspended',
  );
}

describe.skipIf(SKIP)('two instances through a network that goes silent', () => {
  beforeAll(async () => {
    const db = await createTestDatabase('silent_network');
    proxy = await startProxy(db.port);
    operator = openPool(db.url, { max: 2 });
    await migrate(operator);
    await new PostgresDirectory(operator).seed(SEEDS);
    instances = await Promise.all([startInstance(db.url, true), startInstance(db.url, false)]);
    for (const instance of instances) {
      const warm = await Promise.all([createLink(instance), createLink(instance)]);
      expect(warm.map(({ response }) => response.status)).toEqual([201, 201]);
    }
  });

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.controls.close()));
    await proxy?.close();
    await Promise.all([...instances.map((instance) => instance.pool.end()), operator?.end()]);
  });

  it('answers every create 503 storage_unavailable within the statement timeout while the network is silent', async () => {
    await eventually('neither instance is stalled', () => instances.every(({ events }) => events.at(-1) !== 'stall'));
    eventsBeforeSilence = instances.map(({ events }) => events.length);
    proxy.silence();
    const answers = await Promise.all(
      instances.flatMap((instance, index) =>
        Array.from({ length: 6 }, (_, attempt) => {
          const key = randomUUID();
          if (attempt === 0) silentKeys[index] = key;
          return createLink(instance, key);
        }),
      ),
    );
    expect(answers.map(({ response }) => [response.status, (response.body as { code?: string }).code])).toEqual(
      answers.map(() => [503, 'storage_unavailable']),
    );
    expect(Math.max(...answers.map(({ ms }) => ms))).toBeLessThan(STATEMENT_TIMEOUT + LOADED_MARGIN_MS);
  });

  it('reports the stall to onError on each instance, once', async () => {
    const sinceSilence = () => instances.map(({ events }, index) => events.slice(eventsBeforeSilence[index]));
    await eventually('both instances report a stall', () => sinceSilence().every((events) => events.includes('stall')));
    // Once: nothing more over two more sessions each tried in the silence (a third has started).
    const tried = instances.map(({ sessions }) => sessions());
    await eventually('two more sessions each', () => instances.every(({ sessions }, index) => sessions() > (tried[index] ?? 0) + 2));
    expect(sinceSilence()).toEqual([['stall'], ['stall']]);
    expect(instances[0]?.controls.listening).toBe(false);
  });

  it('creates again within 10 s of the heal, with the keys answered 503 during the silence', async () => {
    proxy.heal();
    const healed = Date.now();
    for (const [index, instance] of instances.entries()) {
      await eventually(
        `instance ${index} creates`,
        async () => (await createLink(instance, silentKeys[index])).response.status === 201,
        10_000 + LOADED_MARGIN_MS,
      );
    }
    expect(Date.now() - healed).toBeLessThan(10_000 + LOADED_MARGIN_MS);
  });

  it('applies a suspend-issuer written after the heal within pollInterval plus the statement timeout', async () => {
    const written = Date.now();
    await recordControl(operator, { action: 'suspend_issuer', issuer: callers.issuer.issuer });
    await eventually(
      'both instances refuse issuer_suspended',
      async () => (await suspended(instances[0]!.verifier)) && (await suspended(instances[1]!.verifier)),
      POLL_INTERVAL + STATEMENT_TIMEOUT + LOADED_MARGIN_MS,
    );
    expect(Date.now() - written).toBeLessThan(POLL_INTERVAL + STATEMENT_TIMEOUT + LOADED_MARGIN_MS);
  });

  it('reports each recovery once, never two stalls without a recovery between them', async () => {
    await eventually('the listening instance listens again', () => instances[0]?.controls.listening === true);
    await eventually('both instances report a recovery last', () => instances.every(({ events }) => events.at(-1) === 'recovered'));
    for (const { events } of instances) {
      expect(events.every((event, index) => event === (index % 2 === 0 ? 'stall' : 'recovered'))).toBe(true);
    }
  });

  it('has closed every silenced connection itself, leaves no half-written link, and works on after a reset', async () => {
    await eventually('every silenced connection is closed', () => proxy.silenced === 0);
    proxy.reset();
    for (const instance of instances) expect((await createLink(instance)).response.status).toBe(201);
    const { rows } = await operator.query(
      `SELECT count(*)::int AS orphans FROM ${TABLES.links} l
        WHERE NOT EXISTS (SELECT 1 FROM ${TABLES.idempotency} i WHERE i.state = 'completed' AND i.link_id = l.id)`,
    );
    expect(rows[0]).toEqual({ orphans: 0 });
  });
});
