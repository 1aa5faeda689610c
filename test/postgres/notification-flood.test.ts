/**
 * Any role may `NOTIFY`, a role with no grants included. An instance reads only when a
 * notification names a change past the one it applied, and at most once per 250 ms: a flood of
 * notifications costs next to nothing, and a real change still arrives at once.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IssuerRegistry, createVerifier } from '../../src/index.js';
import { CONTROLS_CHANNEL, REGISTRY_CHANNEL } from '../../src/postgres/schema-names.js';
import {
  type PostgresControls,
  type PostgresRegistry,
  type SqlClient,
  addIssuer,
  migrate,
  postgresControls,
  postgresRegistry,
} from '../../src/postgres/index.js';
import { recordControl } from '../../src/postgres/internal.js';
import { NOTIFIED_READ_SPACING } from '../../src/postgres/table-follower.js';
import { type TestIssuer, createTestIssuer } from '../../src/testing/index.js';
import { LOADED_MARGIN_MS } from '../support/loaded-machine.js';
import { eventually } from './eventually.js';
import { createTestDatabase, openPool, skipWithoutPostgres } from './pg-server.js';
import { loginRole, urlAs } from './roles.js';

const SKIP = skipWithoutPostgres('test/postgres/notification-flood.test.ts');
const AUDIENCE = 'https://payments.test';
/** Long enough that only notifications bring a read during a test. */
const NO_POLL = 600_000;
/** A handful: the most reads a flood may cost one follower. */
const HANDFUL = 5;
/**
 * The shortest gap asserted between two reads' statements: half the spacing. The spacing runs from
 * each read's start, and the test notes when its statement is issued, which behind the flood's
 * notifications on the event loop can come tens of milliseconds later (225 ms was once seen for
 * 250). A read without spacing follows the last within a few milliseconds, so half still tells.
 */
const SHORTEST_GAP_MS = NOTIFIED_READ_SPACING / 2;

/** A client that notes when each statement starts. */
function counting(pool: pg.Pool): SqlClient & { readonly reads: number[] } {
  const reads: number[] = [];
  return {
    reads,
    query: (text, params) => {
      reads.push(Date.now());
      return pool.query(text, params);
    },
  };
}

interface Instance {
  readonly registry: PostgresRegistry;
  readonly controls: PostgresControls;
  readonly registryReads: number[];
  readonly controlReads: number[];
  readonly accepts: () => Promise<boolean>;
}

/** The file's database (notifications, like tables, are per database). */
let url: string;
let admin: pg.Pool;
let mute: pg.Pool;
let acme: TestIssuer;
const pools: pg.Pool[] = [];
const instances: Instance[] = [];

async function instance(): Promise<Instance> {
  const pool = openPool(url, { max: 4 });
  pools.push(pool);
  const [forRegistry, forControls] = [counting(pool), counting(pool)];
  const listen = () => pool.connect();
  const registry = await postgresRegistry(forRegistry, { listen, pollInterval: NO_POLL, onEvent: () => undefined });
  const controls = await postgresControls(forControls, { listen, pollInterval: NO_POLL, compactInterval: 0, onError: () => undefined });
  const verifier = createVerifier({ registry: new IssuerRegistry([], { allowEmpty: true }), audience: AUDIENCE });
  registry.attach(verifier);
  controls.attach(verifier);
  const made = {
    registry,
    controls,
    registryReads: forRegistry.reads,
    controlReads: forControls.reads,
    accepts: async () =>
      verifier.verify(await acme.token()).then(
        () => true,
        () => false,
      ),
  };
  instances.push(made);
  return made;
}

/** `count` notifications on `channel` from the role with no grants, in statements of 500, each delivered at its commit. */
async function flood(channel: string, count: number, payload: (index: number) => string): Promise<void> {
  for (let start = 0; start < count; start += 500) {
    const payloads = Array.from({ length: Math.min(500, count - start) }, (_, offset) => payload(start + offset));
    await mute.query('SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', [channel, payloads]);
  }
}

/** Waits `ms` milliseconds: the flood has no effect to poll for, so the test gives reads this long to happen. */
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The gaps between consecutive reads, in ms. */
function gaps(reads: readonly number[]): number[] {
  return reads.slice(1).map((at, index) => at - (reads[index] as number));
}

describe.skipIf(SKIP)('a flood of notifications from a role with no grants', () => {
  beforeAll(async () => {
    url = (await createTestDatabase('notification_flood')).url;
    admin = openPool(url, { max: 2 });
    pools.push(admin);
    await migrate(admin, { only: ['controls', 'registry'] });
    mute = openPool(urlAs(url, await loginRole(admin, 'nobody')), { max: 1 });
    pools.push(mute);
    acme = await createTestIssuer({ audience: AUDIENCE, issuer: 'https://acme.test', product: 'acme', kid: 'acme-1' });
    await acme.listen();
    await Promise.all([instance(), instance()]);
  });

  afterAll(async () => {
    await Promise.all(instances.flatMap(({ registry, controls }) => [registry.close(), controls.close()]));
    await Promise.all(pools.map((pool) => pool.end()));
    await acme?.close();
  });

  it('costs nothing when the payloads name no change past the one applied', async () => {
    const before = instances.map(({ registryReads, controlReads }) => [registryReads.length, controlReads.length]);
    await flood(REGISTRY_CHANNEL, 5000, (index) => (index % 2 === 0 ? '0' : `not a change ${index}`));
    await flood(CONTROLS_CHANNEL, 5000, (index) => (index % 2 === 0 ? '{"id": 0}' : `{"id": "${index}"`));
    await settle(2 * NOTIFIED_READ_SPACING);
    expect(instances.map(({ registryReads, controlReads }) => [registryReads.length, controlReads.length])).toEqual(before);
  });

  it('costs each instance a handful of reads, at most one per 250 ms, when the payloads name changes that do not exist', async () => {
    const from = instances.map(({ registryReads, controlReads }) => [registryReads.length, controlReads.length] as const);
    const started = Date.now();
    await flood(REGISTRY_CHANNEL, 5000, (index) => String(1_000_000 + index));
    await flood(CONTROLS_CHANNEL, 5000, (index) => JSON.stringify({ id: 1_000_000 + index, action: 'suspend_issuer', issuer: 'x' }));
    const elapsed = Date.now() - started;
    await eventually('every follower has read', () =>
      instances.every(
        ({ registryReads, controlReads }, index) =>
          registryReads.length > (from[index]?.[0] ?? 0) && controlReads.length > (from[index]?.[1] ?? 0),
      ),
    );
    await settle(2 * NOTIFIED_READ_SPACING);
    // At most one read per spacing while the flood lasted, and one for the last notifications.
    const bound = Math.min(HANDFUL, 2 + Math.ceil(elapsed / NOTIFIED_READ_SPACING));
    instances.forEach(({ registryReads, controlReads }, index) => {
      const [registryFrom, controlsFrom] = from[index] as readonly [number, number];
      for (const reads of [registryReads.slice(registryFrom), controlReads.slice(controlsFrom)]) {
        expect(reads.length).toBeGreaterThan(0);
        expect(reads.length).toBeLessThanOrEqual(bound);
        for (const gap of gaps(reads)) expect(gap).toBeGreaterThanOrEqual(SHORTEST_GAP_MS);
      }
    });
  });

  it('still applies a real change on every instance within a second after the flood', async () => {
    const BOUND_MS = 1000;
    await flood(REGISTRY_CHANNEL, 1000, (index) => String(2_000_000 + index));
    await addIssuer(admin, acme.entry, { by: 'alice' });
    await eventually(
      'both accept acme',
      async () => (await Promise.all(instances.map(({ accepts }) => accepts()))).every(Boolean),
      BOUND_MS + LOADED_MARGIN_MS,
    );
    await recordControl(admin, { action: 'suspend_issuer', issuer: acme.issuer });
    await eventually(
      'both refuse acme, suspended',
      async () => (await Promise.all(instances.map(({ accepts }) => accepts()))).every((ok) => !ok),
      BOUND_MS + LOADED_MARGIN_MS,
    );
  });
});
