/**
 * The example gateway's start-up when the network to its database is silent (a failover, a
 * partition: the connection is taken, nothing comes back), through the TCP proxy
 * (test/postgres/tcp-proxy.ts): it gives up within the bound its settings set, and its one line
 * names the database, the bound and the variable that sets it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error the example is plain JavaScript
import { openStores } from '../../examples/gateway/stores.mjs';
// @ts-expect-error the example is plain JavaScript
import { readSettings } from '../../examples/gateway/settings.mjs';
import { LOADED_MARGIN_MS } from '../support/loaded-machine.js';
import { type TestDatabase, createTestDatabase, skipWithoutPostgres } from '../postgres/pg-server.js';
import { type TcpProxy, startProxy } from '../postgres/tcp-proxy.js';

const SKIP = skipWithoutPostgres('test/examples/gateway-silent-database.test.ts');
/** The bound under test; the other one is far longer, so that it cannot be what ended the wait. */
const BOUND_MS = 1000;
const LONG_MS = 30_000;

let db: TestDatabase;
let proxy: TcpProxy;

/** Opens the gateway's stores through the silenced proxy: the error's name and message, and the time taken. */
async function startSilent(env: Record<string, string>): Promise<{ name: string; message: string; elapsed: number }> {
  proxy.silence();
  const settings = readSettings({ DATABASE_URL: proxy.via(db.url), ...env });
  const started = performance.now();
  const error = await openStores(settings, { seeds: [], memoryDirectory: undefined, issuers: [] }).then(
    () => new Error('opened'),
    (caught: Error) => caught,
  );
  return { name: error.name, message: error.message, elapsed: performance.now() - started };
}

describe.skipIf(SKIP)('the example gateway starting while its database is silent', () => {
  beforeAll(async () => {
    db = await createTestDatabase('gateway_silent');
    proxy = await startProxy(db.port);
  });

  afterEach(() => {
    proxy.reset();
    proxy.heal();
  });

  afterAll(async () => {
    await proxy?.close();
  });

  it.each([
    ['PAYGATE_STATEMENT_TIMEOUT_MS', { PAYGATE_STATEMENT_TIMEOUT_MS: String(BOUND_MS), PAYGATE_CONNECT_TIMEOUT_MS: String(LONG_MS) }],
    ['PAYGATE_CONNECT_TIMEOUT_MS', { PAYGATE_CONNECT_TIMEOUT_MS: String(BOUND_MS), PAYGATE_STATEMENT_TIMEOUT_MS: String(LONG_MS) }],
  ])('gives up within %s, naming the database, the bound and that variable', async (variable, env) => {
    const { name, message, elapsed } = await startSilent(env);
    expect(name).toBe('DatabaseUnreachableError');
    expect(message).toContain(`127.0.0.1:${proxy.port}/${db.name}`);
    expect(message).toContain(`within ${BOUND_MS} ms`);
    expect(message).toContain(variable);
    expect(message.split('\n')).toHaveLength(1);
    expect(elapsed).toBeLessThan(BOUND_MS + LOADED_MARGIN_MS);
  });
});
