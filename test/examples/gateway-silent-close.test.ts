/**
 * The example gateway's shutdown when the network to its database goes silent once it is up (a
 * partition: nothing comes back, not even the server's side of a close). The TCP proxy is started
 * with `halfOpen: true` (test/postgres/tcp-proxy.ts), so a silenced connection leaves the client's
 * FIN unanswered: closing the stores must still end, within the bounds the settings set. Three
 * steps wait on the database, each at most the statement timeout (deleting the heartbeat row, the
 * directory's and the followers' close); pg-pool's `end()` does not wait for its idle connections'
 * close to complete, so the pool adds nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error the example is plain JavaScript
import { openStores } from '../../examples/gateway/stores.mjs';
// @ts-expect-error the example is plain JavaScript
import { readSettings } from '../../examples/gateway/settings.mjs';
import { LOADED_MARGIN_MS } from '../support/loaded-machine.js';
import { eventually } from '../postgres/eventually.js';
import { type TestDatabase, createTestDatabase, skipWithoutPostgres } from '../postgres/pg-server.js';
import { type TcpProxy, startProxy } from '../postgres/tcp-proxy.js';

const SKIP = skipWithoutPostgres('test/examples/gateway-silent-close.test.ts');
/** Both the statement and the connect timeout. */
const BOUND_MS = 1000;
/** Three statement timeouts: the heartbeat row, the directory, the followers. */
const CLOSE_BOUND_MS = 3 * BOUND_MS;

let db: TestDatabase;
let proxy: TcpProxy;

describe.skipIf(SKIP)('the example gateway closing its stores on a black-holed network', () => {
  beforeAll(async () => {
    db = await createTestDatabase('gateway_silent_close');
    proxy = await startProxy(db.port, { halfOpen: true });
  });

  afterAll(async () => {
    await proxy?.close();
  });

  it('closes the stores within three statement timeouts when the network goes silent, FINs unanswered', async () => {
    const env = {
      DATABASE_URL: proxy.via(db.url),
      PAYGATE_STATEMENT_TIMEOUT_MS: String(BOUND_MS),
      PAYGATE_CONNECT_TIMEOUT_MS: String(BOUND_MS),
    };
    const stores = await openStores(readSettings(env), { seeds: [], memoryDirectory: undefined, issuers: [] });
    // Several connections in the pool, idle when the network goes silent, as after a burst of requests.
    await Promise.all(Array.from({ length: 4 }, () => stores.idempotency.purgeExpired()));
    proxy.silence();
    const started = performance.now();
    let outcome: string | undefined;
    stores.close().then(
      () => {
        outcome = 'closed';
      },
      (error: Error) => {
        outcome = `failed: ${error.message}`;
      },
    );
    expect(proxy.silenced).toBeGreaterThan(1);
    // The margin is the loaded machine's (test/support/loaded-machine.ts).
    await eventually('the stores are closed', () => outcome !== undefined, CLOSE_BOUND_MS + LOADED_MARGIN_MS);
    expect(outcome).toBe('closed');
    expect(performance.now() - started).toBeLessThan(CLOSE_BOUND_MS + LOADED_MARGIN_MS);
  });
});
