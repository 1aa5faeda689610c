/**
 * The demo integration shared by the example gateway, its token minter and the Express, Koa and
 * Hono examples: one issuer (product `demo`), its RSA key, two seeded tenants.
 *
 * The demo key is kept in `.tmp/example-gateway/demo-key.json` (`.tmp/` is git-ignored; override
 * the directory with PAYGATE_EXAMPLE_STATE_DIR), readable by its owner only. The server publishes
 * its public half as a JWKS on 127.0.0.1; `npm run example:token` signs with the private half,
 * so tokens minted by another process are accepted by the running server. It is a demo key for
 * loopback use: never trust it anywhere else.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InMemoryDirectory } from 'paygate-auth/payment-links';
import { generateTestKey, serveJwks, signRawToken } from 'paygate-auth/testing';

export const PRODUCT = 'demo';
export const ISSUER = 'https://auth.demo-integration.example';
export const AUDIENCE = 'https://payments.example';
export const PAY_PAGE_URL = 'https://pay.example/l';
export const DEFAULT_TENANT = 'clinic-1';
export const DEFAULT_SCOPE = 'pay:processPayments';

/** Display names of the demo tenants (`tenant_name`). */
export const TENANT_NAMES = Object.freeze({
  'clinic-1': 'Demo Clinic',
  'clinic-2': 'Second Clinic',
  public: 'Demo Integration',
});

/** The seeded tenants: departments, a store, payment methods. */
export const TENANT_SEEDS = Object.freeze([
  {
    tenant: `ern:${PRODUCT}/tenants/clinic-1`,
    stores: [{ id: '3b0f6d2a-6c1e-4f5a-9d7b-2e8c4a1f0001', name: 'Reception' }],
    departments: [
      { ref: 'cardiology', id: '8d4e2c1a-0b9f-4e3d-a2c1-5f6e7d8c0001' },
      { ref: 'radiology', id: '8d4e2c1a-0b9f-4e3d-a2c1-5f6e7d8c0002' },
    ],
    shoppers: [{ ref: 'c-1001', id: '6a7b8c9d-1e2f-4a3b-8c4d-5e6f7a8b0001' }],
    paymentMethods: { allowed: ['mc', 'visa', 'walley', 'mobilepay'], blocked: [] },
  },
  {
    tenant: `ern:${PRODUCT}/tenants/clinic-2`,
    stores: [{ id: '3b0f6d2a-6c1e-4f5a-9d7b-2e8c4a1f0002', name: 'Front desk' }],
    departments: [{ ref: 'dermatology', id: '8d4e2c1a-0b9f-4e3d-a2c1-5f6e7d8c0003' }],
    paymentMethods: { allowed: ['visa', 'mc'], blocked: ['walley'] },
  },
]);

/** A directory holding the demo tenants. */
export function demoDirectory() {
  return new InMemoryDirectory(TENANT_SEEDS);
}

const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Where the demo key lives. */
export function stateDirectory() {
  return process.env.PAYGATE_EXAMPLE_STATE_DIR || join(repositoryRoot, '.tmp', 'example-gateway');
}

/** A path for messages: relative to the repository when inside it. */
export function shownPath(path) {
  const inside = relative(repositoryRoot, path);
  return inside.startsWith('..') ? path : inside;
}

/** The saved demo key; a damaged file (not the JSON written here) is named, with what to do. */
function readKey(file) {
  const text = readFileSync(file, 'utf8');
  let saved;
  try {
    saved = JSON.parse(text);
  } catch {
    saved = undefined;
  }
  if (typeof saved?.kid !== 'string' || typeof saved.publicJwk !== 'object' || typeof saved.privateKeyPkcs8 !== 'string') {
    throw new Error(`${file} is not a demo key (damaged or cut short): delete it, and a new demo key is made at the next start`);
  }
  return {
    kid: saved.kid,
    modulusLength: saved.modulusLength,
    publicJwk: Object.freeze(saved.publicJwk),
    privateKeyPkcs8: new Uint8Array(Buffer.from(saved.privateKeyPkcs8, 'base64')),
  };
}

/**
 * The demo key: read from the state directory, or generated and saved there on first use. Two
 * processes starting at once agree on one key (the file is published with an atomic link), and a
 * crash leaves the whole file or none (written, fsynced, linked, the directory fsynced).
 */
export async function loadDemoKey() {
  const directory = stateDirectory();
  const file = join(directory, 'demo-key.json');
  try {
    return { key: readKey(file), file, created: false };
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const key = await generateTestKey({ kid: `demo-${new Date().toISOString().slice(0, 10)}` });
  const saved = {
    kid: key.kid,
    modulusLength: key.modulusLength,
    publicJwk: key.publicJwk,
    privateKeyPkcs8: Buffer.from(key.privateKeyPkcs8).toString('base64'),
  };
  const scratch = join(directory, `demo-key.${process.pid}.${randomUUID()}.tmp`);
  try {
    // Crash-safe: the text is on disk before the link names it, and the link before this returns.
    const handle = openSync(scratch, 'wx', 0o600);
    try {
      writeFileSync(handle, `${JSON.stringify(saved, null, 2)}\n`);
      fsyncSync(handle);
    } finally {
      closeSync(handle);
    }
    linkSync(scratch, file);
    syncDirectory(directory);
    return { key, file, created: true };
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
    return { key: readKey(file), file, created: false };
  } finally {
    rmSync(scratch, { force: true });
  }
}

/** Flushes `directory`'s entries (a new link) to the disk. */
function syncDirectory(directory) {
  const handle = openSync(directory, 'r');
  try {
    fsyncSync(handle);
  } finally {
    closeSync(handle);
  }
}

/** The tenant ERN for `tenant`: a tenant id of the demo product, or a full ERN. */
export function tenantErn(tenant = DEFAULT_TENANT) {
  return tenant.startsWith('ern:') ? tenant : `ern:${PRODUCT}/tenants/${tenant}`;
}

/**
 * Mints a demo token.
 * @param {{ scope?: string, tenant?: string, lifetime?: number, user?: string }} options
 *   `lifetime` in seconds (default 3600); `user` a user id for `user_ern` (`//users/<id>`).
 */
export function mintToken(key, options = {}) {
  const tenant = tenantErn(options.tenant);
  const id = tenant.split('/').pop();
  const iat = Math.floor(Date.now() / 1000);
  const claims = {
    iss: ISSUER,
    sub: ISSUER,
    aud: AUDIENCE,
    iat,
    expt: iat + (options.lifetime ?? 3600),
    tenant_ern: tenant,
    tenant_name: Object.hasOwn(TENANT_NAMES, id) ? TENANT_NAMES[id] : id,
    scope: options.scope ?? DEFAULT_SCOPE,
    user_ern: id === 'public' ? tenant : `//users/${options.user ?? 'demo-user'}`,
  };
  return signRawToken(key, { alg: 'RS256', typ: 'JWT', kid: key.kid }, claims);
}

/**
 * Publishes the key's JWKS on 127.0.0.1 (an ephemeral port), for a registry of this process only.
 * @returns `{ entry, fetch, close }` as {@link answerJwksHere} does; `fetch` is `undefined` (the global one).
 */
export async function publishJwks(key) {
  const server = await serveJwks(() => ({ keys: [key.publicJwk] }));
  return { entry: { issuer: ISSUER, jwksUri: server.url, products: [PRODUCT] }, fetch: undefined, close: () => server.close() };
}

/** Where the demo integration publishes its JWKS when the registry is shared (see {@link answerJwksHere}). */
export const SHARED_JWKS_URI = `${ISSUER}/.well-known/jwks.json`;

/**
 * The demo integration's JWKS at one address for every instance, for a registry kept in the
 * database: the entry registered there must hold on every instance and across restarts, which an
 * ephemeral port of one process would not. Each instance answers {@link SHARED_JWKS_URI} itself
 * from the shared demo key, through the verifier's `fetch` option; every other JWKS (issuers
 * added with `npx paygate-auth issuers add`) is downloaded from the network as usual.
 * @returns `{ entry, fetch, close }`: the issuer's registry entry, the verifier's `fetch`, and a
 * `close` with nothing to close.
 */
export function answerJwksHere(key) {
  const body = JSON.stringify({ keys: [key.publicJwk] });
  return {
    entry: { issuer: ISSUER, jwksUri: SHARED_JWKS_URI, products: [PRODUCT] },
    fetch: (input, init) =>
      input === SHARED_JWKS_URI
        ? Promise.resolve(new Response(body, { status: 200, headers: { 'content-type': 'application/jwk-set+json' } }))
        : globalThis.fetch(input, init),
    async close() {},
  };
}

/** A sample body for POST /payment-links/, valid for tenant clinic-1. */
export function sampleLinkBody() {
  return {
    amount: '125.5',
    currency: 'EUR',
    department: '//departments/cardiology',
    shopper: '//customers/c-1001',
    email: 'jane@example.com',
    locale: 'da-DK',
    description: 'Cardiology consultation',
    meta: { order_id: 'A-1001' },
    payment_details: {
      line_items: [
        {
          id: 'CONSULT-1',
          description: 'Consultation',
          quantity: 1,
          amount_excluding_tax: '100.4',
          tax_percentage: '25',
          tax_amount: '25.1',
          amount_including_tax: '125.5',
        },
      ],
    },
  };
}
