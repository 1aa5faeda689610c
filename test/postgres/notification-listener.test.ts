/**
 * The instance's listener on connections the test controls: one connection for every channel, a
 * drop told to every channel and one reconnection for all of them, a silent connection found by
 * its heartbeat, and the connection closed with its last channel.
 */
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { NotificationConnection, NotificationMessage } from '../../src/postgres/index.js';
import { type PostgresListener, postgresListener } from '../../src/postgres/index.js';
import { eventually } from './eventually.js';

/** A connection whose statements the test sees, and which it can drop or silence. */
class FakeConnection extends EventEmitter {
  readonly statements: string[] = [];
  silent = false;
  released = false;
  query(text: string): Promise<unknown> {
    this.statements.push(text);
    return this.silent ? new Promise(() => undefined) : Promise.resolve({ rows: [] });
  }
  release(): void {
    this.released = true;
  }
  notify(message: NotificationMessage): void {
    this.emit('notification', message);
  }
}

const db = { query: async () => ({ rows: [] }) };
let listeners: PostgresListener[] = [];

/** A listener on fake connections; `refuse` makes the next openings fail. */
function fakeListener(options: { heartbeatInterval?: number; statementTimeout?: number } = {}) {
  const opened: FakeConnection[] = [];
  const state = { refuse: false };
  const listener = postgresListener(db, {
    listen: async () => {
      if (state.refuse) throw new Error('connection refused');
      const connection = new FakeConnection();
      opened.push(connection);
      return connection as unknown as NotificationConnection;
    },
    reconnectDelay: 10,
    maxReconnectDelay: 100,
    ...options,
  });
  listeners.push(listener);
  return { listener, opened, state };
}

function hooks() {
  const seen = { payloads: [] as (string | undefined)[], reconnects: 0, drops: 0 };
  return {
    seen,
    args: [
      (payload: string | undefined) => seen.payloads.push(payload),
      () => {
        seen.reconnects++;
      },
      () => {
        seen.drops++;
      },
    ] as const,
  };
}

afterEach(async () => {
  await Promise.all(listeners.map((listener) => listener.close()));
  listeners = [];
});

describe('postgresListener', () => {
  it('serves every channel on one connection, each notification to its own channel', async () => {
    const { listener, opened } = fakeListener();
    const [a, b] = [hooks(), hooks()];
    await listener.listen('channel_a', ...a.args);
    await listener.listen('channel_b', ...b.args);
    expect(opened).toHaveLength(1);
    expect(opened[0]?.statements).toEqual(['LISTEN channel_a', 'LISTEN channel_b']);
    opened[0]?.notify({ channel: 'channel_b', payload: '7' });
    expect([a.seen.payloads, b.seen.payloads]).toEqual([[], ['7']]);
  });

  it('tells every channel of a drop, then reconnects once, listening on all in one statement', async () => {
    const { listener, opened } = fakeListener();
    const [a, b] = [hooks(), hooks()];
    await listener.listen('channel_a', ...a.args);
    await listener.listen('channel_b', ...b.args);
    opened[0]?.emit('end');
    expect([a.seen.drops, b.seen.drops]).toEqual([1, 1]);
    await eventually('both reconnected', () => a.seen.reconnects === 1 && b.seen.reconnects === 1);
    expect(opened).toHaveLength(2);
    expect(opened[1]?.statements).toEqual(['LISTEN channel_a; LISTEN channel_b']);
    expect(listener.listening).toBe(true);
  });

  it('keeps reconnecting the other channels when a new channel cannot be listened on during a drop', async () => {
    const { listener, opened, state } = fakeListener();
    const a = hooks();
    await listener.listen('channel_a', ...a.args);
    state.refuse = true;
    opened[0]?.emit('end');
    await expect(listener.listen('channel_b', ...hooks().args)).rejects.toThrow('connection refused');
    state.refuse = false;
    await eventually('the first channel reconnected', () => a.seen.reconnects === 1, 2000);
    expect(opened.at(-1)?.statements).toEqual(['LISTEN channel_a']);
  });

  it('tells the channels that saw a drop of the reconnection a new channel brings about, so that they read what they missed', async () => {
    const { listener, opened } = fakeListener();
    const a = hooks();
    await listener.listen('channel_a', ...a.args);
    opened[0]?.emit('end');
    expect(a.seen.drops).toBe(1);
    // Before the reconnection's delay ends, a new channel opens the connection at once.
    const b = hooks();
    await listener.listen('channel_b', ...b.args);
    expect(opened).toHaveLength(2);
    expect(opened[1]?.statements).toEqual(['LISTEN channel_a; LISTEN channel_b']);
    expect([a.seen.reconnects, b.seen.reconnects]).toEqual([1, 0]);
  });

  it('replaces a connection that goes silent when its heartbeat gets no answer within the timeout', async () => {
    const { listener, opened } = fakeListener({ heartbeatInterval: 100, statementTimeout: 50 });
    const a = hooks();
    await listener.listen('channel_a', ...a.args);
    (opened[0] as FakeConnection).silent = true;
    await eventually('the drop is told', () => a.seen.drops === 1, 2000);
    expect(opened[0]?.released).toBe(true);
    await eventually('a new connection', () => a.seen.reconnects === 1, 2000);
  });

  it('closes the connection with its last channel', async () => {
    const { listener, opened } = fakeListener();
    const stopA = await listener.listen('channel_a', ...hooks().args);
    const stopB = await listener.listen('channel_b', ...hooks().args);
    await stopA();
    expect(opened[0]?.statements.at(-1)).toBe('UNLISTEN channel_a');
    expect(opened[0]?.released).toBe(false);
    await stopB();
    expect(opened[0]?.released).toBe(true);
    expect(listener.listening).toBe(false);
  });
});
