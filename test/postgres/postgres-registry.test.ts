/**
 * The issuer registry followed from PostgreSQL: instances (each its own pool, its own verifier)
 * apply every change written to the table through notifications, and by polling; a database that
 * stops answering (a stopped server, a network gone silent through a TCP proxy) leaves the last
 * registry in force and says so once, and a change made after it answers again still arrives.
 */
import type { PGlite } from '@electric-sql/pglite';
import { createTestPglite } from './pglite.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IssuerRegistry, type Verifier, createVerifier } from '../../src/index.js';
import {
  ClosedError,
  type PostgresRegistry,
  type PostgresRegistryOptions,
  type RegistryEvent,
  StatementTimeoutError,
  addIssuer,
  migrate,
  postgresRegistry,
  readIssuerChanges,
  registryDigest,
  removeIssuer,
  updateIssuer,
} from '../../src/postgres/index.js';
import { TABLES } from '../../src/postgres/schema-names.js';
import { type TestIssuer, createTestIssuer } from '../../src/testing/index.js';
import { LOADED_MARGIN_MS, PATIENCE_MS } from '../support/loaded-machine.js';
import { verifyUntilCached } from '../support/result-cache.js';
import { eventually } from './eventually.js';
import { type PgServer, createTestDatabase, countSessions, openPool, skipWithoutPostgres, startPostgres } from './pg-server.js';
import { clearRegistry, loginRole, urlAs, writtenBeforeKeyCheck } from './roles.js';
import { type TcpProxy, startProxy } from './tcp-proxy.js';

const SKIP = skipWithoutPostgres('test/postgres/postgres-registry.test.ts');
const AUDIENCE = 'https://payments.test';
/** Long enough that only a notification or a reconnection can bring a change during a test. */
const NO_POLL = 600_000;
const BY = { by: 'test' };

/** The database of the tests below: their own on the shared server, then on a server of their own that they stop. */
let url: string;
let server: PgServer;
let acme: TestIssuer;
let beta: TestIssuer;
let operator: ReturnType<typeof openPool>;
const pools: ReturnType<typeof openPool>[] = [];
let running: PostgresRegistry[] = [];

interface Instance {
  readonly registry: PostgresRegistry;
  readonly verifier: Verifier;
  readonly events: RegistryEvent[];
  /** The sessions its pool checked out so far: a read, a retry, a listening connection each. */
  readonly sessions: () => number;
}

/**
 * One gateway instance: its own pool, registry and verifier (trusting no issuer until attached). A
 * start that misses a short `statementTimeout` on the loaded machine (postgresRegistry rejects,
 * and closes) is tried again: the bound under test is the running registry's.
 */
async function instance(options: PostgresRegistryOptions = {}, to = url): Promise<Instance> {
  const pool = openPool(to, { max: 4 });
  pools.push(pool);
  const sessions = countSessions(pool);
  const deadline = Date.now() + PATIENCE_MS;
  let events: RegistryEvent[] = [];
  let registry: PostgresRegistry;
  for (;;) {
    events = [];
    const reported = events;
    try {
      registry = await postgresRegistry(pool, { pollInterval: NO_POLL, onEvent: (event) => reported.push(event), ...options });
      break;
    } catch (error) {
      if (!(error instanceof StatementTimeoutError) || Date.now() > deadline) throw error;
    }
  }
  running.push(registry);
  const verifier = createVerifier({ registry: new IssuerRegistry([], { allowEmpty: true }), audience: AUDIENCE });
  registry.attach(verifier);
  return { registry, verifier, events, sessions };
}

const count = (events: readonly RegistryEvent[], type: RegistryEvent['type']) => events.filter((event) => event.type === type).length;

/**
 * Resolves, once no instance's registry is stale, with how many events each has reported: a
 * heartbeat that missed its bound on the loaded machine is a stale registry and a recovery of their
 * own, so a test that brings the database down counts only what follows.
 */
/** The latest `registry_loaded`: on a loaded machine a missed heartbeat's stale and recovered events may follow it. */
const lastLoaded = (events: readonly RegistryEvent[]) => events.filter((event) => event.type === 'registry_loaded').at(-1);

/**
 * Whether the registry went stale after event `from` and recovered: at least one
 * `registry_recovered` since, and every `registry_stale` since answered by one. Other events may
 * follow the recovery (a change read right after it is a `registry_loaded` of its own).
 */
function recoveredSince(events: readonly RegistryEvent[], from: number): boolean {
  const since = events.slice(from);
  return count(since, 'registry_recovered') > 0 && count(since, 'registry_stale') === count(since, 'registry_recovered');
}

async function settled(instances: readonly Instance[]): Promise<number[]> {
  await eventually('no registry is stale', () =>
    instances.every(({ events }) => count(events, 'registry_stale') === count(events, 'registry_recovered')),
  );
  return instances.map(({ events }) => events.length);
}

async function outcome(verifier: Verifier, token: string): Promise<string> {
  return verifier.verify(token).then(
    () => 'accepted',
    (error: { code?: string }) => error.code ?? 'failed',
  );
}

async function allAccept(instances: readonly Instance[], issuer: TestIssuer, claims = {}): Promise<boolean> {
  const token = await issuer.token(claims);
  return (await Promise.all(instances.map(({ verifier }) => outcome(verifier, token)))).every((result) => result === 'accepted');
}

describe.skipIf(SKIP)('postgresRegistry on a real PostgreSQL', () => {
  beforeAll(async () => {
    acme = await createTestIssuer({ audience: AUDIENCE, issuer: 'https://acme.test', product: 'acme', kid: 'acme-1' });
    beta = await createTestIssuer({ audience: AUDIENCE, issuer: 'https://beta.test', product: 'beta', kid: 'beta-1' });
    await Promise.all([acme.listen(), beta.listen()]);
    url = (await createTestDatabase('registry')).url;
    operator = openPool(url, { max: 2 });
    await migrate(operator, { only: 'registry' });
  });

  afterAll(async () => {
    await Promise.all([operator, ...pools].map((pool) => pool?.end().catch(() => undefined)));
    await Promise.all([acme?.close(), beta?.close()]);
  });

  beforeEach(() => clearRegistry(operator));
  afterEach(async () => {
    await Promise.all(running.map((registry) => registry.close()));
    running = [];
  });

  it('loads the registry at start, applies it to a verifier attached, and reports what it loaded', async () => {
    const added = await addIssuer(operator, acme.entry, BY);
    const before = Date.now();
    const a = await instance();
    expect(await allAccept([a], acme)).toBe(true);
    expect(a.registry.registry().issuers).toEqual([acme.issuer]);
    expect(a.events).toEqual([
      {
        type: 'registry_loaded',
        issuers: 1,
        change: { added: [acme.issuer], updated: [], removed: [] },
        through: added.id,
        digest: await registryDigest(new IssuerRegistry([acme.entry])),
        refused: 0,
      },
    ]);
    expect(a.registry).toMatchObject({ through: added.id, digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(a.registry.loadedAt).toBeGreaterThanOrEqual(before);
    expect(a.registry.loadedAt).toBeLessThanOrEqual(Date.now());
  });

  it('starts on an empty table with a registry that trusts no issuer', async () => {
    const a = await instance();
    expect(a.registry.registry().size).toBe(0);
    expect(await outcome(a.verifier, await acme.token())).toBe('unknown_issuer');
  });

  it('applies a row added by hand by a role with only INSERT: audited with that role, applied by both, and a new instance agrees', async () => {
    const [a, b] = await Promise.all([instance(), instance()]);
    const writer = await loginRole(operator, 'writer');
    await operator.query(`GRANT INSERT ON ${TABLES.issuers} TO ${writer}`);
    const hand = openPool(urlAs(url, writer), { max: 1 });
    pools.push(hand);
    await hand.query(`INSERT INTO ${TABLES.issuers} (issuer, entry) VALUES ($1, $2)`, [acme.issuer, JSON.stringify(acme.entry)]);
    const [change] = await readIssuerChanges(operator);
    expect(change).toMatchObject({ action: 'add', issuer: acme.issuer, role: writer, actor: null });
    await eventually('both accept acme', () => allAccept([a, b], acme));
    const late = await instance();
    expect(await allAccept([late], acme)).toBe(true);
    const held = [a, b, late].map(({ registry }) => ({ through: registry.through, digest: registry.digest }));
    expect(held).toEqual(Array(3).fill({ through: change?.id, digest: await registryDigest(new IssuerRegistry([acme.entry])) }));
  });

  it('follows the table, not the length of its audit: a last change id that went back loads the table again', async () => {
    await addIssuer(operator, acme.entry, BY);
    await addIssuer(operator, beta.entry, BY);
    const a = await instance({ listen: false });
    expect(a.registry.through).toBeGreaterThan(1);
    // A superuser empties both tables and starts the ids again: the table now holds beta at change 1.
    await clearRegistry(operator);
    await operator.query(`SELECT setval(pg_get_serial_sequence('${TABLES.issuerChanges}', 'id'), 1, false)`);
    await addIssuer(operator, beta.entry, BY);
    await a.registry.reload();
    expect(a.registry.registry().issuers).toEqual([beta.issuer]);
    expect(a.registry.through).toBe(1);
  });

  it('applies an issuer added on another instance within 1 s, through its notification', async () => {
    const [a, b] = await Promise.all([instance(), instance()]);
    expect(a.registry.listening && b.registry.listening).toBe(true);
    await addIssuer(operator, acme.entry, BY);
    await eventually('both accept acme', () => allAccept([a, b], acme), 1000 + LOADED_MARGIN_MS);
  });

  it('applies a tenant taken out of an entry within 1 s', async () => {
    await addIssuer(operator, { ...beta.entry, tenants: ['t-1', 't-2'] }, BY);
    const [a, b] = await Promise.all([instance(), instance()]);
    expect(await allAccept([a, b], beta)).toBe(true);
    await updateIssuer(operator, { ...beta.entry, tenants: ['t-2'] }, BY);
    const token = await beta.token();
    await eventually(
      'both refuse tenant t-1',
      async () => (await outcome(a.verifier, token)) !== 'accepted' && (await outcome(b.verifier, token)) !== 'accepted',
      1000 + LOADED_MARGIN_MS,
    );
    expect(await allAccept([a, b], beta, { tenant_ern: 'ern:beta/tenants/t-2' })).toBe(true);
  });

  it('makes every instance refuse a removed issuer within 1 s, cached results included', async () => {
    await addIssuer(operator, acme.entry, BY);
    const [a, b] = await Promise.all([instance(), instance()]);
    const token = await acme.token();
    await Promise.all([verifyUntilCached(a.verifier, token), verifyUntilCached(b.verifier, token)]);
    await removeIssuer(operator, acme.issuer, BY);
    await eventually(
      'both refuse unknown_issuer',
      async () => (await outcome(a.verifier, token)) === 'unknown_issuer' && (await outcome(b.verifier, token)) === 'unknown_issuer',
      1000 + LOADED_MARGIN_MS,
    );
    expect(lastLoaded(b.events)).toMatchObject({ type: 'registry_loaded', issuers: 0, change: { removed: [acme.issuer] } });
  });

  it('polls at its interval when it does not listen', async () => {
    const a = await instance({ listen: false, pollInterval: 100 });
    expect(a.registry.listening).toBe(false);
    await addIssuer(operator, acme.entry, BY);
    await eventually('applied by polling', () => allAccept([a], acme));
  });

  it('reads the table once at start-up, then only the rows changed since the change it applied', async () => {
    await addIssuer(operator, acme.entry, BY);
    await addIssuer(operator, beta.entry, BY);
    const rowsRead: number[] = [];
    const counting = {
      query: async (text: string, params?: unknown[]) => {
        const result = await operator.query(text, params);
        rowsRead.push(result.rows.length);
        return result;
      },
    };
    const registry = await postgresRegistry(counting, { listen: false, pollInterval: NO_POLL, onEvent: () => undefined });
    running.push(registry);
    expect(rowsRead).toEqual([2]);
    await registry.reload();
    // No change since: the last change id, one row.
    expect(rowsRead.slice(1)).toEqual([1]);
    await updateIssuer(operator, { ...acme.entry, products: ['acme', 'more'] }, BY);
    await registry.reload();
    // The last change id and acme's row as it is now.
    expect(rowsRead.slice(2)).toEqual([2]);
    expect([...(registry.registry().get(acme.issuer)?.products ?? [])]).toEqual(['acme', 'more']);
    await removeIssuer(operator, beta.issuer, BY);
    await registry.reload();
    expect(rowsRead.slice(3)).toEqual([2]);
    expect(registry.registry().issuers).toEqual([acme.issuer]);
  });

  it('reads the table whole when more than 1000 changes came since the one applied, and agrees with a new instance', async () => {
    const a = await instance();
    await operator.query(
      `INSERT INTO ${TABLES.issuers} (issuer, entry)
       SELECT 'https://auth-' || i || '.bulk.test', jsonb_build_object('issuer', 'https://auth-' || i || '.bulk.test',
              'jwksUri', 'https://auth-' || i || '.bulk.test/jwks.json', 'products', jsonb_build_array('bulk'))
         FROM generate_series(1, 1001) AS i`,
    );
    await eventually('a applies the 1001 issuers', () => a.registry.registry().size === 1001, 5000);
    const late = await instance();
    expect(late.registry.through).toBe(a.registry.through);
    expect(late.registry.digest).toBe(a.registry.digest);
  });

  it('applies the registry in force to a verifier attached later, and nothing to one detached', async () => {
    await addIssuer(operator, acme.entry, BY);
    const a = await instance();
    const late = createVerifier({ registry: new IssuerRegistry([], { allowEmpty: true }), audience: AUDIENCE });
    const detach = a.registry.attach(late);
    expect(await outcome(late, await acme.token())).toBe('accepted');
    detach();
    await addIssuer(operator, beta.entry, BY);
    await eventually('the attached one accepts beta', () => allAccept([a], beta));
    expect(await outcome(late, await beta.token())).toBe('unknown_issuer');
  });

  it('leaves out a row whose entry was edited by hand into one the registry refuses: its issuer refused, the others applied', async () => {
    await addIssuer(operator, acme.entry, BY);
    await addIssuer(operator, beta.entry, BY);
    const a = await instance();
    await operator.query(`UPDATE ${TABLES.issuers} SET entry = jsonb_set(entry, '{products}', '[]') WHERE issuer = $1`, [acme.issuer]);
    await eventually('acme refused', async () => (await outcome(a.verifier, await acme.token())) === 'unknown_issuer');
    expect(await allAccept([a], beta)).toBe(true);
    expect(a.events).toContainEqual({
      type: 'registry_row_refused',
      row: acme.issuer,
      rule: 'invalid_entry',
      reason: expect.stringContaining(`row "${acme.issuer}" ("${acme.issuer}").products must be a non-empty array`),
    });
    expect(a.registry.refused).toEqual([expect.objectContaining({ row: acme.issuer, rule: 'invalid_entry' })]);
  });

  it('holds each row to its entry issuer in the schema: a decoy key is refused when written', async () => {
    await expect(
      operator.query(`INSERT INTO ${TABLES.issuers} (issuer, entry) VALUES ('decoy', $1)`, [JSON.stringify(acme.entry)]),
    ).rejects.toMatchObject({ code: '23514' });
  });

  it('isolates each bad row: an http: issuer, an unknown field and a decoy key (so a repeated issuer) are left out, the rest applies', async () => {
    await addIssuer(operator, acme.entry, BY);
    await addIssuer(operator, beta.entry, BY);
    const [a, b] = await Promise.all([instance(), instance()]);
    const plain = { issuer: 'http://auth.plain.example', jwksUri: 'http://auth.plain.example/jwks.json', products: ['plain'] };
    const newer = {
      issuer: 'https://auth.newer.example',
      jwksUri: 'https://auth.newer.example/jwks.json',
      products: ['newer'],
      audience: 'x',
    };
    const rows: [string, unknown][] = [
      [plain.issuer, plain],
      [newer.issuer, newer],
      ['decoy', acme.entry],
    ];
    // One statement, so one commit: a follower reads the three rows in one change, whatever the load.
    await writtenBeforeKeyCheck(operator, () =>
      operator.query(
        `INSERT INTO ${TABLES.issuers} (issuer, entry) VALUES ($1, $2), ($3, $4), ($5, $6)`,
        rows.flatMap(([key, entry]) => [key, JSON.stringify(entry)]),
      ),
    );
    await eventually(
      'both refuse acme, named by the decoy too',
      async () =>
        (await Promise.all([a, b].map(async ({ verifier }) => outcome(verifier, await acme.token())))).every(
          (got) => got === 'unknown_issuer',
        ),
      1000,
    );
    expect(await allAccept([a, b], beta)).toBe(true);
    const rules = (events: readonly RegistryEvent[]) =>
      events.flatMap((event) => (event.type === 'registry_row_refused' ? [[event.row, event.rule]] : [])).slice(-4);
    for (const { events } of [a, b]) {
      expect(rules(events)).toEqual([
        ['decoy', 'key_mismatch'],
        [plain.issuer, 'invalid_entry'],
        [newer.issuer, 'invalid_entry'],
        [acme.issuer, 'repeated_issuer'],
      ]);
    }
    expect(a.events.find((event) => event.type === 'registry_row_refused' && event.row === newer.issuer)).toMatchObject({
      reason: expect.stringContaining('.audience is not an entry field'),
    });
    // A removal made afterwards is applied by both, and a new instance starts on the same table.
    await removeIssuer(operator, beta.issuer, BY);
    await eventually(
      'both refuse beta, removed',
      async () =>
        (await Promise.all([a, b].map(async ({ verifier }) => outcome(verifier, await beta.token())))).every(
          (got) => got === 'unknown_issuer',
        ),
      1000,
    );
    const late = await instance();
    expect(late.registry.registry().size).toBe(0);
    expect(late.registry.digest).toBe(a.registry.digest);
    expect(late.events.filter((event) => event.type === 'registry_row_refused').map((event) => event.row)).toContain('decoy');
  });

  it('judges a change by the rows it touches: a decoy written later refuses its issuer, its removal restores it, and a new instance agrees at each step', async () => {
    await addIssuer(operator, acme.entry, BY);
    await addIssuer(operator, beta.entry, BY);
    const a = await instance();
    await writtenBeforeKeyCheck(operator, () =>
      operator.query(`INSERT INTO ${TABLES.issuers} (issuer, entry) VALUES ('decoy', $1)`, [JSON.stringify(acme.entry)]),
    );
    await eventually(
      'a refuses acme, named by the decoy',
      async () => (await outcome(a.verifier, await acme.token())) === 'unknown_issuer',
    );
    expect(a.registry.refused.map(({ row, rule }) => [row, rule])).toEqual([
      ['decoy', 'key_mismatch'],
      [acme.issuer, 'repeated_issuer'],
    ]);
    expect(await allAccept([a], beta)).toBe(true);
    const colliding = await instance();
    expect([colliding.registry.through, colliding.registry.digest]).toEqual([a.registry.through, a.registry.digest]);
    const whileColliding = a.registry.digest;
    await operator.query(`DELETE FROM ${TABLES.issuers} WHERE issuer = 'decoy'`);
    await eventually('a accepts acme again', () => allAccept([a], acme));
    expect(a.registry.refused).toEqual([]);
    expect(lastLoaded(a.events)).toMatchObject({ type: 'registry_loaded', change: { added: [acme.issuer] }, refused: 0 });
    const after = await instance();
    expect([after.registry.through, after.registry.digest]).toEqual([a.registry.through, a.registry.digest]);
    expect(a.registry.digest).not.toBe(whileColliding);
  });

  it.each([
    ['pollInterval', { pollInterval: 50 }],
    ['reconnectDelay', { reconnectDelay: 1.5 }],
    ['listen', { listen: 'yes' }],
    ['statementTimeout', { statementTimeout: 0 }],
    ['heartbeatInterval', { heartbeatInterval: 10 }],
    ['onEvent', { onEvent: 'console' }],
    ['jwksAllowedHosts', { jwksAllowedHosts: '10.0.0.7' }],
  ])('refuses a bad %s with a TypeError naming it', async (name, options) => {
    await expect(postgresRegistry(operator, options as PostgresRegistryOptions)).rejects.toThrow(
      new RegExp(`^postgresRegistry: ${name} must`),
    );
  });

  it('loads an entry whose JWKS is at a private address when jwksAllowedHosts names it, and the verifier attached downloads by it', async () => {
    const jwksUri = 'https://10.0.0.7/jwks.json';
    await addIssuer(operator, { ...acme.entry, jwksUri }, { ...BY, jwksAllowedHosts: ['10.0.0.7'] });
    const pool = openPool(url, { max: 2 });
    pools.push(pool);
    const registry = await postgresRegistry(pool, { pollInterval: NO_POLL, jwksAllowedHosts: ['10.0.0.7'] });
    running.push(registry);
    const requested: string[] = [];
    const fetch = async (input: string) => {
      requested.push(input);
      return Response.json(acme.jwks);
    };
    const verifier = createVerifier({ registry: new IssuerRegistry([], { allowEmpty: true }), audience: AUDIENCE, fetch });
    registry.attach(verifier);
    expect(await outcome(verifier, await acme.token())).toBe('accepted');
    expect(requested).toEqual([jwksUri]);
  });

  it('refuses reload() after close() with a ClosedError naming the registry, and applies nothing', async () => {
    const a = await instance();
    await a.registry.close();
    await addIssuer(operator, acme.entry, BY);
    const refused = await a.registry.reload().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ClosedError);
    expect(refused).toMatchObject({ code: 'closed', owner: 'postgresRegistry', message: expect.stringContaining('reload()') });
    expect(a.registry.registry().size).toBe(0);
  });

  it('refuses attach() after close() with a ClosedError: a verifier attached then would never follow the table', async () => {
    const a = await instance();
    await a.registry.close();
    const late = createVerifier({ registry: new IssuerRegistry([], { allowEmpty: true }), audience: AUDIENCE });
    expect(() => a.registry.attach(late)).toThrow(ClosedError);
  });

  it('resolves close() called again after it closed', async () => {
    const a = await instance();
    await a.registry.close();
    await expect(a.registry.close()).resolves.toBeUndefined();
  });

  it('refuses to attach something that is not a verifier', async () => {
    const a = await instance();
    expect(() => a.registry.attach({} as never)).toThrow(TypeError);
  });
});

describe.skipIf(SKIP)('postgresRegistry when the database stops answering', () => {
  const STATEMENT_TIMEOUT = 300;
  let proxy: TcpProxy;

  beforeAll(async () => {
    acme = await createTestIssuer({ audience: AUDIENCE, issuer: 'https://acme.test', product: 'acme', kid: 'acme-1' });
    beta = await createTestIssuer({ audience: AUDIENCE, issuer: 'https://beta.test', product: 'beta', kid: 'beta-1' });
    await Promise.all([acme.listen(), beta.listen()]);
    server = await startPostgres();
    url = server.url;
    proxy = await startProxy(server.port);
    operator = openPool(url, { max: 2 });
    await migrate(operator, { only: 'registry' });
  });

  afterAll(async () => {
    await Promise.all(running.map((registry) => registry.close()));
    running = [];
    await proxy?.close();
    await Promise.all([operator, ...pools].map((pool) => pool?.end().catch(() => undefined)));
    await server?.dispose();
    await Promise.all([acme?.close(), beta?.close()]);
  });

  const options = { statementTimeout: STATEMENT_TIMEOUT, heartbeatInterval: 200, reconnectDelay: 50, pollInterval: 500 };

  it('keeps the last registry through a silent network, reports it stale once, and recovers', async () => {
    await addIssuer(operator, acme.entry, BY);
    const [a, b] = await Promise.all([
      instance(options, proxy.via(server.url)),
      instance({ ...options, listen: false }, proxy.via(server.url)),
    ]);
    const before = await settled([a, b]);
    const staleSinceSilence = () =>
      [a, b].map(({ events }, index) => events.slice(before[index]).filter((event) => event.type === 'registry_stale'));
    const loadedAt = a.registry.loadedAt as number;
    proxy.silence();
    await eventually('both report registry_stale', () => staleSinceSilence().every((stale) => stale.length > 0));
    expect(await allAccept([a, b], acme)).toBe(true);
    // Once: nothing more over two more sessions each tried in the silence (a third has started).
    const tried = [a.sessions(), b.sessions()];
    await eventually('two more sessions each', () => [a, b].every(({ sessions }, index) => sessions() > (tried[index] ?? 0) + 2));
    for (const stale of staleSinceSilence()) {
      expect(stale).toEqual([{ type: 'registry_stale', error: expect.any(String), since: expect.any(Number), issuers: 1 }]);
    }
    expect(staleSinceSilence()[0]?.[0]).toMatchObject({ since: loadedAt });
    expect(a.registry.listening).toBe(false);
    proxy.heal();
    proxy.reset();
    await addIssuer(operator, beta.entry, BY);
    await eventually('both accept beta after the heal', () => allAccept([a, b], beta));
    await eventually('both report registry_recovered', () =>
      [a, b].every(({ events }, index) => recoveredSince(events, before[index] ?? 0)),
    );
    expect(a.registry.listening).toBe(true);
  });

  it('keeps the last registry while the server is stopped, and applies a change made after its restart', async () => {
    const a = await instance(options, proxy.via(server.url));
    const registered = a.registry.registry().issuers;
    expect(registered.length).toBeGreaterThan(0);
    const [before = 0] = await settled([a]);
    await server.stop();
    try {
      await eventually('registry_stale', () => count(a.events.slice(before), 'registry_stale') > 0);
      expect(await allAccept([a], acme)).toBe(true);
      expect(a.registry.registry().issuers).toEqual(registered);
    } finally {
      await server.start();
    }
    await removeIssuer(operator, acme.issuer, BY);
    await eventually('acme refused after the restart', async () => (await outcome(a.verifier, await acme.token())) === 'unknown_issuer');
    await eventually('registry_recovered', () => recoveredSince(a.events, before));
    const recovered = a.events.slice(before).find((event) => event.type === 'registry_recovered');
    expect(recovered).toMatchObject({ staleForMs: expect.any(Number) });
    expect((recovered as { staleForMs: number }).staleForMs).toBeGreaterThan(0);
  });
});

describe('postgresRegistry on PGlite', () => {
  let lite: PGlite;
  let issuer: TestIssuer;
  beforeAll(async () => {
    issuer = await createTestIssuer({ audience: AUDIENCE, issuer: 'https://lite.test', product: 'lite', kid: 'lite-1' });
    await issuer.listen();
    lite = await createTestPglite();
    await migrate(lite, { only: 'registry' });
  });
  afterAll(async () => {
    await lite?.close();
    await issuer?.close();
  });

  it('applies an issuer added through the same database to the verifier attached, by its in-process notification', async () => {
    const registry = await postgresRegistry(lite, { pollInterval: NO_POLL, onEvent: () => undefined });
    try {
      const verifier = createVerifier({ registry: new IssuerRegistry([], { allowEmpty: true }), audience: AUDIENCE });
      registry.attach(verifier);
      expect(registry.listening).toBe(true);
      await addIssuer(lite, issuer.entry, BY);
      await eventually('lite accepted', async () => (await outcome(verifier, await issuer.token())) === 'accepted');
    } finally {
      await registry.close();
    }
  });
});
