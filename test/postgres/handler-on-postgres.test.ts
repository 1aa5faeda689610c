/**
 * The reference handlers on the PostgreSQL stores (PGlite, in-process): creation, replay, reuse,
 * reads scoped by tenant, on the handlers' own clock (which carries fractions of a millisecond).
 */
import type { PGlite } from '@electric-sql/pglite';
import { createTestPglite } from './pglite.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomIds } from '../../src/payment-links/index.js';
import { PostgresIdempotencyStore, PostgresPaymentLinkStore, migrate } from '../../src/postgres/index.js';
import { TABLES } from '../../src/postgres/schema-names.js';
import { TENANT_A, TENANT_B, jsonRequest, makeHandler, makeReadHandler, useCallers, validBody } from '../payment-links/support.js';

const callers = useCallers();
let db: PGlite;

beforeAll(async () => {
  db = await createTestPglite();
  await migrate(db, { only: 'links' });
});
afterAll(() => db.close());

function handlers() {
  const store = new PostgresPaymentLinkStore(db);
  return {
    create: makeHandler({ store, idempotency: new PostgresIdempotencyStore(db), ids: randomIds }),
    read: makeReadHandler({ store }),
    store,
  };
}

describe('the payment-link handlers on PostgreSQL stores', () => {
  it('creates a link, replays it for the same key and body, and stores one', async () => {
    const { create, store } = handlers();
    const auth = await callers.auth();
    const first = await create(jsonRequest(auth, validBody(), { 'idempotency-key': 'pg-1' }));
    const again = await create(jsonRequest(auth, validBody(), { 'idempotency-key': 'pg-1' }));
    expect([first.status, again.status, again.headers['idempotent-replayed']]).toEqual([201, 201, 'true']);
    expect(again.body).toEqual(first.body);
    expect((await store.list(TENANT_A)).filter((link) => link.id === (first.body as { id: string }).id)).toHaveLength(1);
  });

  it('refuses the key with another body, 409 idempotency_key_reused', async () => {
    const { create } = handlers();
    const auth = await callers.auth();
    await create(jsonRequest(auth, validBody(), { 'idempotency-key': 'pg-2' }));
    const reused = await create(jsonRequest(auth, validBody({ amount: '1' }), { 'idempotency-key': 'pg-2' }));
    expect([reused.status, (reused.body as { code: string }).code]).toEqual([409, 'idempotency_key_reused']);
  });

  it('records the completed key naming its link, and writes the link itself once', async () => {
    const { create } = handlers();
    const created = await create(jsonRequest(await callers.auth(), validBody(), { 'idempotency-key': 'pg-3' }));
    const { rows } = await db.query<{ state: string; id: string; body: unknown }>(
      `SELECT state, link_id::text AS id, response->'body' AS body FROM ${TABLES.idempotency} WHERE key = 'pg-3'`,
    );
    expect(rows).toEqual([{ state: 'completed', id: (created.body as { id: string }).id, body: null }]);
  });

  it('reads a link back for its tenant only', async () => {
    const { create, read } = handlers();
    const created = await create(jsonRequest(await callers.auth(), validBody()));
    const id = (created.body as { id: string }).id;
    const own = await read({ auth: await callers.auth(), headers: {}, params: { id } });
    const other = await read({ auth: await callers.auth({ tenant_ern: TENANT_B }), headers: {}, params: { id } });
    expect([own.status, own.body, other.status]).toEqual([200, created.body, 404]);
  });
});
