/**
 * Payment links created per second through the reference `POST /payment-links/` handler, each
 * with its own `Idempotency-Key`, on PostgreSQL (paygate-auth/postgres) against the in-memory
 * stores, in one run: alternating rounds, the median of each, and their ratio.
 *
 * PostgreSQL: `BENCH_DATABASE_URL` when set (its paygate tables are migrated; the run's rows are
 * deleted after), otherwise a throw-away server (`initdb` + `pg_ctl` into a temporary directory,
 * as the tests start one). Without either the PostgreSQL side is reported as skipped.
 *
 * Standalone: `npm run bench:links` (BENCH_LINK_SECONDS per round,
 * default 1; BENCH_LINK_ROUNDS, default 5; BENCH_LINK_CONCURRENCY requests in flight, default 16).
 * `npm run bench` takes its default export as one section of the table; `runPaymentLinks`, then
 * `(await runPaymentLinks({ log })).row` is the table's row.
 */
import { fileURLToPath } from 'node:url';
import { createVerifier } from 'paygate-auth';
import { InMemoryDirectory, createPaymentLinkHandler } from 'paygate-auth/payment-links';
import { PostgresIdempotencyStore, PostgresPaymentLinkStore, migrate } from 'paygate-auth/postgres';
import { createTestIssuer } from 'paygate-auth/testing';
import { throwAwayServer } from './lib/postgres-server.mjs';

const AUDIENCE = 'https://payments.bench';

/** Creates links with `handler` for `seconds`, `concurrency` in flight; resolves links per second. */
/** The middle value of the rounds' rates (the mean of the two middle ones for an even count). */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function rate(handler, auth, seconds, concurrency, prefix) {
  const body = JSON.stringify({
    amount: '125.5',
    currency: 'EUR',
    department: '//departments/cardiology',
    shopper: '//customers/c-1',
    email: 'jane@example.com',
    meta: { bench: prefix },
  });
  const deadline = performance.now() + seconds * 1000;
  let created = 0;
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (performance.now() < deadline) {
      const headers = { 'content-type': 'application/json', 'idempotency-key': `${prefix}-${next++}` };
      const { status, body: answer } = await handler({ auth, headers, body });
      if (status !== 201) throw new Error(`a link was refused: ${status} ${JSON.stringify(answer)}`);
      created += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return created / ((performance.now() - started) / 1000);
}

/**
 * Measures both stores. Resolves `{ memory, postgres, ratio, where, row, text }`: medians in
 * links per second (`postgres` and `ratio` `null` when skipped), and `row`, one line for the
 * benchmark table: `{ label, value, note }`.
 */
export async function runPaymentLinks({
  seconds = Number(process.env.BENCH_LINK_SECONDS ?? 1),
  rounds = Number(process.env.BENCH_LINK_ROUNDS ?? 5),
  concurrency = Number(process.env.BENCH_LINK_CONCURRENCY ?? 16),
  databaseUrl = process.env.BENCH_DATABASE_URL,
  log = () => {},
} = {}) {
  const issuer = await createTestIssuer({
    audience: AUDIENCE,
    issuer: 'https://auth.bench.example',
    product: 'bench',
    tenant: 'ern:bench/tenants/clinic-1',
  });
  await issuer.listen();
  const verifier = createVerifier({ registry: [issuer.entry], audience: AUDIENCE });
  const auth = await verifier.verify(await issuer.token({ scope: 'pay:processPayments' }));
  const directory = new InMemoryDirectory([
    {
      tenant: auth.tenant.ern,
      stores: [{ id: '3b0f6d2a-6c1e-4f5a-9d7b-2e8c4a1f0001' }],
      departments: [{ ref: 'cardiology' }],
      paymentMethods: { allowed: ['visa'] },
    },
  ]);
  const payPageUrl = 'https://pay.example/l';
  const run = `bench-${Date.now().toString(36)}`;
  const memoryRates = [];
  const postgresRates = [];
  let server = null;
  let pool = null;
  let where = 'skipped: no BENCH_DATABASE_URL and no initdb/pg_ctl';
  try {
    if (databaseUrl === undefined) server = await throwAwayServer();
    const url = databaseUrl ?? server?.url;
    if (url !== undefined) {
      const { default: pg } = await import('pg');
      pool = new pg.Pool({ connectionString: url, max: concurrency });
      // An idle connection that the server closes (at its shutdown, after the run) is no failure of the run.
      pool.on('error', () => {});
      await migrate(pool);
      where = databaseUrl === undefined ? server.where : 'BENCH_DATABASE_URL';
    }
    for (let round = 0; round < rounds; round++) {
      const memory = createPaymentLinkHandler({ payPageUrl, directory });
      memoryRates.push(await rate(memory, auth, seconds, concurrency, `${run}-m${round}`));
      if (pool !== null) {
        const postgres = createPaymentLinkHandler({
          payPageUrl,
          directory,
          store: new PostgresPaymentLinkStore(pool),
          idempotency: new PostgresIdempotencyStore(pool),
        });
        postgresRates.push(await rate(postgres, auth, seconds, concurrency, `${run}-p${round}`));
      }
      log(
        `  payment links round ${round + 1}: in memory ${memoryRates.at(-1).toFixed(0)}/s${pool === null ? '' : `, PostgreSQL ${postgresRates.at(-1).toFixed(0)}/s`}`,
      );
    }
  } finally {
    if (pool !== null) {
      if (databaseUrl !== undefined) {
        await pool.query(`DELETE FROM paygate_payment_links WHERE tenant = $1 AND record->'meta'->>'bench' LIKE $2`, [
          auth.tenant.ern,
          `${run}-%`,
        ]);
        await pool.query(`DELETE FROM paygate_idempotency_keys WHERE tenant = $1 AND key LIKE $2`, [auth.tenant.ern, `${run}-%`]);
      }
      await pool.end();
    }
    server?.stop();
    await issuer.close();
  }
  const memory = median(memoryRates);
  const postgres = postgresRates.length === 0 ? null : median(postgresRates);
  const ratio = postgres === null ? null : postgres / memory;
  const value =
    postgres === null
      ? `${memory.toFixed(0)}/s in memory; PostgreSQL skipped`
      : `${postgres.toFixed(0)}/s on PostgreSQL, ${memory.toFixed(0)}/s in memory (${(ratio * 100).toFixed(1)} %)`;
  const note = `median of ${rounds} alternating rounds of ${seconds} s, ${concurrency} in flight, each link with its own Idempotency-Key; PostgreSQL: ${where}`;
  const row = { label: 'Payment links created per second (POST /payment-links/ handler)', value, note };
  return { memory, postgres, ratio, where, row, text: `${row.label}: ${value}\n  ${note}` };
}

/** `npm run bench`'s section: the in-memory store as the group's baseline, PostgreSQL against it. */
export default async function paymentLinkRows({ log }) {
  const { memory, postgres, where } = await runPaymentLinks({ log });
  const group = 'payment links created';
  const rows = [{ id: 'links-memory', group, label: 'in-memory store', rate: memory, role: 'baseline' }];
  if (postgres !== null) rows.push({ id: 'links-postgres', group, label: 'PostgreSQL store', rate: postgres, role: 'ours' });
  log(`  payment links on PostgreSQL: ${where}`);
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await runPaymentLinks({ log: (line) => console.log(line) });
  console.log(result.text);
}
