/**
 * The command line's close on a black-holed network: a command has done its work, and the network
 * to the database goes silent before it closes the connection (a partition, a failover). pg's
 * `end()` sends its goodbye and FIN, then waits for the server's FIN, which never comes; the
 * command must still end with its result, within its bound. The TCP proxy is started with
 * `halfOpen: true`, so that a silenced connection leaves the client's FIN unanswered
 * (test/postgres/tcp-proxy.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseTarget, withDatabase } from '../../src/cli/database-url.js';
import { LOADED_MARGIN_MS } from '../support/loaded-machine.js';
import { eventually } from '../postgres/eventually.js';
import { type TestDatabase, createTestDatabase, skipWithoutPostgres } from '../postgres/pg-server.js';
import { type TcpProxy, startProxy } from '../postgres/tcp-proxy.js';

const SKIP = skipWithoutPostgres('test/cli/silent-close.test.ts');
/** `--connect-timeout 1 --statement-timeout 1`: the close is bounded by these. */
const BOUND_MS = 1000;

let db: TestDatabase;
let proxy: TcpProxy;

describe.skipIf(SKIP)('the command line closing its connection on a black-holed network', () => {
  beforeAll(async () => {
    db = await createTestDatabase('cli_silent_close');
    proxy = await startProxy(db.port, { halfOpen: true });
  });

  afterAll(async () => {
    await proxy?.close();
  });

  it('ends with the work done, within the bound, when the network goes silent before the close', async () => {
    const target: DatabaseTarget = {
      url: proxy.via(db.url),
      from: 'DATABASE_URL',
      connectTimeout: BOUND_MS,
      statementTimeout: BOUND_MS,
    };
    let silencedAt = 0;
    let outcome: { value: unknown } | { error: unknown } | undefined;
    void withDatabase(target, async (database) => {
      const { rows } = await database.query('SELECT 41 + 1 AS answer');
      proxy.silence();
      silencedAt = performance.now();
      return rows[0];
    }).then(
      (value) => {
        outcome = { value };
      },
      (error: unknown) => {
        outcome = { error };
      },
    );
    await eventually('the work is done and the network silenced', () => silencedAt > 0);
    expect(proxy.silenced).toBe(1);
    // The bound is 1 s; the margin is the loaded machine's (test/support/loaded-machine.ts).
    await eventually('the command ends after the silence', () => outcome !== undefined, BOUND_MS + LOADED_MARGIN_MS);
    expect(outcome).toEqual({ value: { answer: 42 } });
    expect(performance.now() - silencedAt).toBeLessThan(BOUND_MS + LOADED_MARGIN_MS);
  });
});
