/**
 * The links of `bench/fleet-links.mjs` and `bench/fleet-links-count.mjs`: on a migrated database,
 * the handler with `PostgresDirectory` started and the PostgreSQL stores on `pool`, and a raw
 * single-statement `INSERT … RETURNING` of the same record into a copy of the links table.
 */
import { randomUUID } from 'node:crypto';
import { createVerifier } from 'paygate-auth';
import { createPaymentLinkHandler } from 'paygate-auth/payment-links';
import { PostgresDirectory, PostgresIdempotencyStore, PostgresPaymentLinkStore, migrate } from 'paygate-auth/postgres';
import { createTestIssuer } from 'paygate-auth/testing';

const AUDIENCE = 'https://payments.bench';
const TENANT = 'ern:bench/tenants/clinic-1';

/**
 * Migrates through `admin`, seeds and starts the directory, warms it with 16 links at once:
 * resolves `{ link, raw, close }`, `link()` and `raw()` each one operation (a link refused throws).
 * `statementTimeout` bounds the directory's and the stores' statements (ms; longer under valgrind).
 */
export async function linkBench(admin, pool, statementTimeout = 5000) {
  const issuer = await createTestIssuer({ audience: AUDIENCE, issuer: 'https://auth.bench.example', product: 'bench', tenant: TENANT });
  await issuer.listen();
  await migrate(admin);
  await admin.query('CREATE TABLE bench_raw (LIKE paygate_payment_links INCLUDING ALL)');
  const directory = new PostgresDirectory(pool, { statementTimeout });
  await directory.seed([
    {
      tenant: TENANT,
      stores: [{ id: '3b0f6d2a-6c1e-4f5a-9d7b-2e8c4a1f0001' }],
      departments: [{ ref: 'cardiology' }],
      paymentMethods: { allowed: ['visa', 'mc'] },
    },
  ]);
  await directory.start();
  const verifier = createVerifier({ registry: [issuer.entry], audience: AUDIENCE });
  const auth = await verifier.verify(await issuer.token({ scope: 'pay:processPayments' }));
  const handler = createPaymentLinkHandler({
    payPageUrl: 'https://pay.example/l',
    directory,
    store: new PostgresPaymentLinkStore(pool, { statementTimeout }),
    idempotency: new PostgresIdempotencyStore(pool, { statementTimeout }),
  });
  const body = JSON.stringify({
    amount: '125.5',
    currency: 'EUR',
    department: '//departments/cardiology',
    shopper: '//customers/c-1',
    email: 'jane@example.com',
    description: 'Consultation',
    meta: { order_id: 'A-1001' },
  });
  let key = 0;
  const link = async () => {
    const headers = { 'content-type': 'application/json', 'idempotency-key': `fleet-${key++}` };
    const { status, body: answer } = await handler({ auth, headers, body });
    if (status !== 201) throw new Error(`a link was refused: ${status} ${JSON.stringify(answer)}`);
  };
  // Warm: the directory's cache, the shopper, the pool's connections.
  await Promise.all(Array.from({ length: 16 }, link));
  const { rows: sample } = await admin.query('SELECT record::text AS record FROM paygate_payment_links LIMIT 1');
  const record = sample[0].record;
  // The raw INSERT: the same record, a fresh id and code, one statement on a pooled connection.
  const raw = async () => {
    const client = await pool.connect();
    try {
      await client.query('INSERT INTO bench_raw (id, tenant, link_code, record) VALUES ($1, $2, $3, $4) RETURNING id', [
        randomUUID(),
        TENANT,
        randomUUID(),
        record,
      ]);
    } finally {
      client.release();
    }
  };
  const close = async () => {
    await directory.close();
    await issuer.close();
  };
  return { link, raw, close };
}

/** Runs `one()` `total` times with `concurrency` in flight. */
export async function runMany(one, total, concurrency) {
  let started = 0;
  const lane = async () => {
    while (started < total) {
      started += 1;
      await one();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
}
