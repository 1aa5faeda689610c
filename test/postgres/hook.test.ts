/**
 * A caller's hook on a follower (`onEvent`, `onError`, `onRecovered`) that throws, or an `async`
 * one that rejects, stops nothing: not the start-up, not a load, not the retries after a stall,
 * and it never becomes an unhandled rejection (which ends a Node process). On PGlite, behind a client the test can make fail.
 */
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addIssuer, migrate, postgresControls, postgresKeyHistory, postgresRegistry } from '../../src/postgres/index.js';
import { recordControl } from '../../src/postgres/internal.js';
import { createTestIssuer } from '../../src/testing/index.js';
import { eventually } from './eventually.js';
import { writeRefusedKeyRow } from './forged-key-row.js';
import { createTestPglite } from './pglite.js';

/** Long enough that only a `reload()`, a `flush()` or a retry reads during a test. */
const NO_POLL = 600_000;

const thrower = (): never => {
  throw new Error('a listener bug');
};

let lite: PGlite;
/** `true` while every statement through {@link flaky} fails as a dropped connection does. */
let down = false;
/** The statements {@link flaky} answered, failed or not: a follower's reads, counted. */
let answered = 0;
const flaky = {
  query: async (text: string, params?: unknown[]) => {
    try {
      if (down) throw new Error('Connection terminated unexpectedly');
      return await lite.query<Record<string, unknown>>(text, params);
    } finally {
      answered += 1;
    }
  },
};

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};

describe('a follower whose hooks throw', () => {
  beforeAll(async () => {
    lite = await createTestPglite();
    await migrate(lite);
    process.on('unhandledRejection', onUnhandled);
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await lite?.close();
  });
  beforeEach(() => {
    down = false;
    unhandled.length = 0;
  });
  afterEach(() => {
    down = false;
  });

  it('postgresRegistry starts and applies each change although onEvent throws at every event', async () => {
    const registry = await postgresRegistry(flaky, { listen: false, pollInterval: NO_POLL, onEvent: thrower });
    try {
      const issuer = await createTestIssuer({ issuer: 'https://hooks.test', product: 'hooks' });
      await addIssuer(lite, issuer.entry, { by: 'test' });
      await registry.reload();
      expect(registry.registry().has('https://hooks.test')).toBe(true);
    } finally {
      await registry.close();
    }
  });

  it('postgresControls keeps retrying through a stall although onError and onRecovered throw, with no unhandled rejection', async () => {
    const errors: unknown[] = [];
    const controls = await postgresControls(flaky, {
      listen: false,
      pollInterval: 100,
      reconnectDelay: 10,
      onError: (error) => {
        errors.push(error);
        thrower();
      },
      onRecovered: thrower,
    });
    try {
      down = true;
      await eventually('the stall reported', () => errors.length > 0);
      down = false;
      const record = await recordControl(lite, { action: 'suspend_issuer', issuer: 'https://hooks.test' });
      await eventually('the action read after the stall', () => controls.state().through >= record.id);
      // A poll answered after the throwing onRecovered, and a turn of the event loop after it: a
      // rejection it left unhandled, if any, has surfaced by then.
      const read = answered;
      await eventually('a poll after the recovery', () => answered > read);
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      await controls.close();
    }
  });

  it('postgresControls keeps retrying through a stall although an async onError rejects, with no unhandled rejection', async () => {
    let reported = 0;
    const controls = await postgresControls(flaky, {
      listen: false,
      pollInterval: 100,
      reconnectDelay: 10,
      onError: async () => {
        reported += 1;
        throw new Error('a listener bug');
      },
    });
    try {
      down = true;
      await eventually('the stall reported', () => reported > 0);
      down = false;
      const record = await recordControl(lite, { action: 'suspend_issuer', issuer: 'https://hooks.test' });
      await eventually('the action read after the stall', () => controls.state().through >= record.id);
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      await controls.close();
    }
  });

  it('postgresKeyHistory starts although onEvent throws for a row it skips', async () => {
    await writeRefusedKeyRow(lite, 'https://hooks.test');
    const errors: unknown[] = [];
    const keys = await postgresKeyHistory(flaky, { flushInterval: NO_POLL, onEvent: thrower, onError: (error) => errors.push(error) });
    try {
      await keys.flush();
      expect(errors).toEqual([]);
    } finally {
      await keys.close();
    }
  });
});
