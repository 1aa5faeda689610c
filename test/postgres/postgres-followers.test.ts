/**
 * One follower set per instance: `postgresFollowers` starts the issuer registry, the operator
 * controls and the key history on ONE `LISTEN` connection, and attaches all three to a verifier
 * in one call. A drop of that connection reconnects every channel at once, and each follower
 * reads what it missed.
 */
import type { PGlite } from '@electric-sql/pglite';
import { createTestPglite } from './pglite.js';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { IssuerRegistry, type Verifier, createVerifier } from '../../src/index.js';
import {
  PostgresDirectory,
  type PostgresFollowers,
  type PostgresFollowersOptions,
  type RegistryEvent,
  addIssuer,
  migrate,
  postgresFollowers,
  postgresListener,
} from '../../src/postgres/index.js';
import { CONTROLS_CHANNEL, DIRECTORY_CHANNEL, REGISTRY_CHANNEL, TABLES } from '../../src/postgres/schema-names.js';
import { recordControl } from '../../src/postgres/internal.js';
import { type TestIssuer, createTestIssuer } from '../../src/testing/index.js';
import { eventually } from './eventually.js';
import { type TestDatabase, createTestDatabase, openPool, skipWithoutPostgres } from './pg-server.js';
import { clearControls, clearRegistry } from './roles.js';

const SKIP = skipWithoutPostgres('test/postgres/postgres-followers.test.ts');
const AUDIENCE = 'https://payments.test';
/** Long enough that only a notification or a reconnection brings a change during a test. */
const NO_POLL = 600_000;
const BY = { by: 'test' };

let db: TestDatabase;
let acme: TestIssuer;
let operator: pg.Pool;
const pools: pg.Pool[] = [];
let running: PostgresFollowers[] = [];

async function outcome(verifier: Verifier): Promise<string> {
  return verifier.verify(await acme.token()).then(
    () => 'accepted',
    (error: { code?: string }) => error.code ?? 'failed',
  );
}

interface Instance {
  readonly followers: PostgresFollowers;
  readonly verifier: Verifier;
  /** Every connection the listener opened, in order. */
  readonly opened: pg.Client[];
  /** Stalls and recoveries each follower reported, as `<follower> <what>`. */
  readonly events: string[];
  /** Holds the next connections back until `open()`. */
  hold(): () => void;
  /** How many connections the listener has asked for, held back ones included. */
  attempts(): number;
}

/** One gateway instance: its followers on one listener whose connections the test sees. */
async function instance(options: PostgresFollowersOptions = {}): Promise<Instance> {
  const opened: pg.Client[] = [];
  const events: string[] = [];
  let gate = Promise.resolve();
  let attempts = 0;
  const listen = async () => {
    attempts += 1;
    await gate;
    const client = new pg.Client({ connectionString: db.url, application_name: 'followers-test-listen' });
    client.on('error', () => undefined);
    await client.connect();
    opened.push(client);
    return client;
  };
  const pool = openPool(db.url, { max: 4 });
  pools.push(pool);
  const followers: PostgresFollowers = await postgresFollowers<PostgresFollowersOptions>(pool, {
    listen,
    reconnectDelay: 20,
    maxReconnectDelay: 200,
    registry: {
      pollInterval: NO_POLL,
      onEvent: (event: RegistryEvent) => {
        if (event.type === 'registry_stale' || event.type === 'registry_recovered') events.push(`registry ${event.type}`);
      },
    },
    controls: {
      pollInterval: NO_POLL,
      compactInterval: 0,
      onError: () => events.push('controls stall'),
      onRecovered: () => events.push('controls recovered'),
    },
    keyHistory: { flushInterval: NO_POLL, onError: () => events.push('key history stall') },
    ...options,
  });
  running.push(followers);
  const verifier = createVerifier({ registry: new IssuerRegistry([], { allowEmpty: true }), audience: AUDIENCE });
  followers.attach(verifier);
  const hold = () => {
    let open: () => void = () => undefined;
    gate = new Promise((resolve) => {
      open = resolve;
    });
    return open;
  };
  return { followers, verifier, opened, events, hold, attempts: () => attempts };
}

/** The backends on the server that are listening: the connections whose last statement was `LISTEN`. */
async function listeningBackends(): Promise<number> {
  const { rows } = await operator.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'followers-test-listen' AND query LIKE 'LISTEN %'`,
  );
  return (rows[0] as { n: number }).n;
}

async function channelsOf(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ channel: string }>('SELECT pg_listening_channels() AS channel');
  return rows.map(({ channel }) => channel).sort();
}

describe.skipIf(SKIP)('postgresFollowers on a real PostgreSQL', () => {
  beforeAll(async () => {
    acme = await createTestIssuer({ audience: AUDIENCE, issuer: 'https://acme.test', product: 'acme', kid: 'acme-1' });
    await acme.listen();
    db = await createTestDatabase('followers');
    operator = openPool(db.url, { max: 2 });
    await migrate(operator);
  });

  afterAll(async () => {
    await Promise.all([operator, ...pools].map((pool) => pool?.end().catch(() => undefined)));
    await acme?.close();
  });

  beforeEach(async () => {
    await clearRegistry(operator);
    await clearControls(operator, TABLES.keyHistory);
  });

  afterEach(async () => {
    await Promise.all(running.map((followers) => followers.close()));
    running = [];
  });

  it('listens on every channel through one connection per instance', async () => {
    const [a, b] = [await instance(), await instance()];
    expect(a.opened).toHaveLength(1);
    expect(b.opened).toHaveLength(1);
    expect(await listeningBackends()).toBe(2);
    for (const { opened } of [a, b]) expect(await channelsOf(opened[0] as pg.Client)).toEqual([CONTROLS_CHANNEL, REGISTRY_CHANNEL].sort());
    expect(a.followers.listener.listening && a.followers.registry?.listening && a.followers.controls?.listening).toBe(true);
  });

  it("shares the connection with a PostgresDirectory given the followers' listener: still one per instance", async () => {
    const a = await instance();
    const directory = new PostgresDirectory(pools.at(-1) as pg.Pool, { listen: a.followers.listener });
    await directory.start();
    try {
      expect(a.opened).toHaveLength(1);
      expect(await channelsOf(a.opened[0] as pg.Client)).toEqual([CONTROLS_CHANNEL, DIRECTORY_CHANNEL, REGISTRY_CHANNEL].sort());
      expect(directory.caching).toBe(true);
    } finally {
      await directory.close();
    }
    expect(await channelsOf(a.opened[0] as pg.Client)).toEqual([CONTROLS_CHANNEL, REGISTRY_CHANNEL].sort());
  });

  it("refuses a PostgresDirectory's second start() on the followers' listener, and leaves no channel behind at close", async () => {
    const a = await instance();
    const directory = new PostgresDirectory(pools.at(-1) as pg.Pool, { listen: a.followers.listener });
    await directory.start();
    try {
      await expect(directory.start()).rejects.toThrow(/PostgresDirectory: start\(\) was called already/);
    } finally {
      await directory.close();
    }
    expect(await channelsOf(a.opened[0] as pg.Client)).toEqual([CONTROLS_CHANNEL, REGISTRY_CHANNEL].sort());
  });

  it("refuses a PostgresDirectory's start() after its close(), listening on nothing", async () => {
    const a = await instance();
    const directory = new PostgresDirectory(pools.at(-1) as pg.Pool, { listen: a.followers.listener });
    await directory.start();
    await directory.close();
    await expect(directory.start()).rejects.toThrow(/PostgresDirectory: closed/);
    expect(await channelsOf(a.opened[0] as pg.Client)).toEqual([CONTROLS_CHANNEL, REGISTRY_CHANNEL].sort());
    expect(directory.caching).toBe(false);
  });

  it('leaves no channel behind when a PostgresDirectory is closed while its start() runs', async () => {
    const a = await instance();
    const directory = new PostgresDirectory(pools.at(-1) as pg.Pool, { listen: a.followers.listener });
    const starting = directory.start();
    await directory.close();
    await expect(starting).rejects.toThrow(/PostgresDirectory: closed/);
    expect(await channelsOf(a.opened[0] as pg.Client)).toEqual([CONTROLS_CHANNEL, REGISTRY_CHANNEL].sort());
    expect(directory.caching).toBe(false);
  });

  it('attaches the registry, the controls and the key history to the verifier in one call', async () => {
    const a = await instance();
    await addIssuer(operator, acme.entry, BY);
    await eventually('the registry applies the new issuer on its notification', async () => (await outcome(a.verifier)) === 'accepted');
    await recordControl(operator, { action: 'suspend_issuer', issuer: acme.issuer });
    await eventually('the controls apply the suspension on theirs', async () => (await outcome(a.verifier)) === 'issuer_suspended');
    await a.followers.keyHistory?.flush();
    const { rows } = await operator.query(`SELECT issuer, kid FROM ${TABLES.keyHistory}`);
    expect(rows).toEqual([{ issuer: acme.issuer, kid: 'acme-1' }]);
  });

  it('closes only once a connection being opened after a drop is open and ended: none is left behind', async () => {
    const a = await instance();
    const open = a.hold();
    const first = a.opened[0] as pg.Client;
    await operator.query('SELECT pg_terminate_backend($1)', [(first as unknown as { processID: number }).processID]);
    await eventually('the listener is opening a new connection', () => a.attempts() === 2);
    const closing = a.followers.close();
    open();
    await closing;
    running = running.filter((followers) => followers !== a.followers);
    expect(a.opened).toHaveLength(2);
    await eventually('no backend listens', async () => (await listeningBackends()) === 0);
  });

  it('reconnects every channel after a drop, and each follower reads what it missed', async () => {
    const a = await instance();
    const open = a.hold();
    const first = a.opened[0] as pg.Client;
    await operator.query('SELECT pg_terminate_backend($1)', [(first as unknown as { processID: number }).processID]);
    await eventually(
      'both followers see the drop',
      () => a.events.includes('registry registry_stale') && a.events.includes('controls stall'),
    );
    expect(a.followers.listener.listening).toBe(false);
    // Written while nothing listens: their notifications are lost, and nothing polls.
    await addIssuer(operator, acme.entry, BY);
    await recordControl(operator, { action: 'revoke_key', issuer: acme.issuer, kid: 'acme-1' });
    expect(await outcome(a.verifier)).toBe('unknown_issuer');
    open();
    await eventually(
      'the registry and the controls catch up once the connection is back',
      async () => (await outcome(a.verifier)) === 'key_revoked',
      5000,
    );
    expect(a.opened).toHaveLength(2);
    await eventually('one backend listens: the new connection', async () => (await listeningBackends()) === 1);
    expect(await channelsOf(a.opened[1] as pg.Client)).toEqual([CONTROLS_CHANNEL, REGISTRY_CHANNEL].sort());
    await eventually(
      'each recovery is reported',
      () => a.events.includes('registry registry_recovered') && a.events.includes('controls recovered'),
    );
    expect(a.events.filter((event) => event.endsWith('stall') || event.endsWith('stale')).sort()).toEqual([
      'controls stall',
      'registry registry_stale',
    ]);
  });

  it('closes the connection with the followers', async () => {
    const a = await instance();
    await a.followers.close();
    running = [];
    await eventually('no backend listens any more', async () => (await listeningBackends()) === 0);
  });

  it('closes what it started when one follower cannot start', async () => {
    await operator.query(`ALTER TABLE ${TABLES.keyHistory} RENAME TO paygate_key_history_away`);
    try {
      await expect(instance()).rejects.toThrow(/paygate_key_history/);
      await eventually('no backend listens', async () => (await listeningBackends()) === 0);
    } finally {
      await operator.query(`ALTER TABLE paygate_key_history_away RENAME TO ${TABLES.keyHistory}`);
    }
  });
});

describe('postgresFollowers on PGlite', () => {
  let lite: PGlite;
  let issuer: TestIssuer;
  beforeAll(async () => {
    issuer = await createTestIssuer({ audience: AUDIENCE, issuer: 'https://lite.test', product: 'lite', kid: 'lite-1' });
    await issuer.listen();
    lite = await createTestPglite();
    await migrate(lite, { only: ['registry', 'controls', 'keys'] });
  });
  afterAll(async () => {
    await lite?.close();
    await issuer?.close();
  });

  it('follows the registry and the controls through its own listen(), the controls reaching an issuer as it is added', async () => {
    const followers = await postgresFollowers(lite, {
      registry: { pollInterval: NO_POLL, onEvent: () => undefined },
      controls: { pollInterval: NO_POLL, compactInterval: 0 },
    });
    try {
      const verifier = createVerifier({ registry: new IssuerRegistry([], { allowEmpty: true }), audience: AUDIENCE });
      followers.attach(verifier);
      // Suspended before it is registered: applied as soon as the registry brings it.
      await recordControl(lite, { action: 'suspend_issuer', issuer: issuer.issuer });
      await addIssuer(lite, issuer.entry, BY);
      await eventually('the suspension applies with the issuer', async () =>
        verifier.verify(await issuer.token()).then(
          () => false,
          (error: { code?: string }) => error.code === 'issuer_suspended',
        ),
      );
      expect(followers.listener.listening).toBe(true);
    } finally {
      await followers.close();
    }
  });

  it('applies a control held ahead of its issuer as the registry brings the issuer, before the controls read again', async () => {
    const followers = await postgresFollowers(lite, {
      registry: { pollInterval: NO_POLL, onEvent: () => undefined },
      controls: { pollInterval: NO_POLL, compactInterval: 0 },
    });
    const other = await createTestIssuer({ audience: AUDIENCE, issuer: 'https://ahead.test', product: 'ahead', kid: 'ahead-1' });
    await other.listen();
    let open = (): void => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    try {
      const verifier = createVerifier({ registry: new IssuerRegistry([], { allowEmpty: true }), audience: AUDIENCE });
      followers.attach(verifier);
      await recordControl(lite, { action: 'suspend_issuer', issuer: other.issuer });
      await followers.controls.reload();
      // The controls' next read is held (a slow database): only what they hold already can apply.
      const query = lite.query.bind(lite);
      vi.spyOn(lite, 'query').mockImplementation(async (text: string, ...rest: unknown[]) => {
        if (text.includes(TABLES.controls)) await gate;
        return query(text, ...(rest as [unknown[]]));
      });
      await addIssuer(lite, other.entry, BY);
      await followers.registry.reload();
      const outcome = await verifier.verify(await other.token()).then(
        () => 'accepted',
        (error: { code?: string }) => error.code,
      );
      expect(outcome).toBe('issuer_suspended');
    } finally {
      open();
      vi.restoreAllMocks();
      await followers.close();
      await other.close();
    }
  });

  it('attaches none when the verifier lacks what one follower calls', async () => {
    const followers = await postgresFollowers(lite, { keyHistory: false, registry: { onEvent: () => undefined } });
    try {
      const applied: IssuerRegistry[] = [];
      const partial = { setRegistry: (registry: IssuerRegistry) => applied.push(registry) } as unknown as Verifier;
      expect(() => followers.attach(partial)).toThrow(/verifier must be a Verifier/);
      await addIssuer(lite, { issuer: 'https://other.test', jwksUri: 'https://other.test/jwks.json', products: ['other'] }, BY);
      await followers.registry.reload();
      expect(applied).toHaveLength(1);
    } finally {
      await followers.close();
    }
  });
});

describe('postgresFollowers options', () => {
  const pool = { query: async () => ({ rows: [] }), connect: async () => ({}), idleCount: 0 };

  it.each([
    ['registry', { registry: { listen: false } }],
    ['controls', { controls: { heartbeatInterval: 1000 } }],
  ] as const)('refuses how %s listens, which is the shared listener', async (name, options) => {
    await expect(postgresFollowers(pool, options as PostgresFollowersOptions)).rejects.toThrow(
      new RegExp(`postgresFollowers: ${name}\\.(listen|heartbeatInterval): the followers share one listener`),
    );
  });

  it("gives a follower the listener's statementTimeout when its own is undefined", async () => {
    vi.useFakeTimers();
    try {
      const silent = { query: () => new Promise<never>(() => undefined) };
      let failure: unknown;
      const started = postgresFollowers(silent, {
        listen: false,
        statementTimeout: 50,
        registry: { statementTimeout: undefined },
        controls: false,
        keyHistory: false,
      }).catch((error: unknown) => {
        failure = error;
      });
      await vi.advanceTimersByTimeAsync(50);
      expect(failure).toMatchObject({ name: 'StatementTimeoutError', message: expect.stringMatching(/within 50 ms/) });
      await vi.advanceTimersByTimeAsync(600_000);
      await started;
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses a channel name that is not a lower-case identifier', async () => {
    const listener = postgresListener(pool, { listen: false });
    await expect(
      listener.listen(
        'x; DROP TABLE y',
        () => undefined,
        () => undefined,
      ),
    ).rejects.toThrow(TypeError);
  });
});
