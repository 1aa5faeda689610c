/**
 * A follower that only polls (the key history's flushes, the heartbeats): its default log line for
 * a stall. Following a table itself is tested through the followers that use it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { poller } from '../../src/postgres/table-follower.js';
import { eventually } from './eventually.js';

const idle = { query: async () => ({ rows: [] }) };

describe('poller', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('logs a stall in one line, the error cut and escaped, where no onError is given', async () => {
    const lines = vi.spyOn(console, 'error').mockImplementation(() => {});
    let runs = 0;
    const { follower } = poller(idle, {
      owner: 'test',
      logPrefix: 'test:',
      interval: 100,
      work: async () => {
        runs += 1;
        if (runs > 1) throw new Error(`down\nforged line \u2028\u202e\u001b[31m${'x'.repeat(5000)}`);
      },
    });
    await follower.start();
    try {
      await eventually('the stall logged', () => lines.mock.calls.length > 0);
      const line = String(lines.mock.calls[0]?.[0]);
      expect(line).toContain('test: down\\u000aforged line \\u2028\\u202e\\u001b[31m');
      expect(line.length).toBeLessThan(1100);
    } finally {
      await follower.close();
    }
  });
});
