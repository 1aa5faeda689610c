/**
 * The example gateway: `npm run example` (PORT=… to change the port, default 3000).
 *
 * Starts, all on 127.0.0.1: the demo integration's JWKS endpoint, and the gateway (GET /info/,
 * POST /payment-links/, GET /payment-links/:id, and their OpenAPI document at GET /openapi.json) trusting that integration for product `demo`,
 * with two seeded tenants. Prints curl commands with freshly minted tokens, then one log line
 * per request. `npm run example:token -- --scope … --tenant …` mints more tokens. A port already
 * taken is one line naming PORT, and exit code 1.
 *
 * Start-up, in order: every setting of the environment checked (settings.mjs: one refused is one
 * line naming it, and exit code 2, before anything is opened), the port, the demo key, its JWKS, the stores (PostgreSQL when DATABASE_URL
 * is set: migrated, the directory seeded, the issuer registry seeded with the demo issuer when
 * empty; else in memory), the verifier on the stores' registry (with DATABASE_URL, the registry
 * and the operator controls follow the database from then on), the gateway, then listen. A
 * database that cannot be reached is one line naming its host (never the password), and exit
 * code 1. The banner says which store, and with DATABASE_URL which registry, is in use.
 *
 * Shutdown, on SIGTERM or SIGINT: the gateway stops taking connections and lets the requests in
 * flight finish (PAYGATE_SHUTDOWN_DRAIN_MS, default 10000: those still open then are cut), then
 * closes the JWKS server and the stores (the heartbeat row deleted, the followers, the pool), and
 * exits with code 0.
 *
 * With DATABASE_URL the demo issuer's entry is shared by every instance, so its JWKS has one
 * address for all of them, which each instance answers itself from the shared demo key
 * (`answerJwksHere`); without, it is served on an ephemeral port of 127.0.0.1.
 */
import { randomUUID } from 'node:crypto';
import { createVerifier, eventLine } from 'paygate-auth';
import { createGateway } from './app.mjs';
import {
  AUDIENCE,
  ISSUER,
  PAY_PAGE_URL,
  TENANT_SEEDS,
  answerJwksHere,
  demoDirectory,
  loadDemoKey,
  mintToken,
  publishJwks,
  sampleLinkBody,
  shownPath,
} from './demo.mjs';
import { serve } from './node-server.mjs';
import { SettingError, readSettings } from './settings.mjs';
import { DatabaseUnreachableError, RoleRefusedError, SchemaRefusedError, openStores } from './stores.mjs';

function banner({ url, jwksUrl, jwksAnsweredHere, keyFile, created, infoToken, linkToken, store, registry }) {
  const [clinic] = TENANT_SEEDS;
  const departments = clinic.departments.map((department) => `//departments/${department.ref}`).join(', ');
  const body = JSON.stringify(sampleLinkBody());
  return [
    'paygate-auth example gateway',
    `  gateway    ${url}`,
    `  issuer     ${ISSUER}`,
    `  JWKS       ${jwksUrl}${jwksAnsweredHere ? ' (answered by each instance from the demo key)' : ''}`,
    `  audience   ${AUDIENCE}`,
    `  tenant     ${clinic.tenant} (Demo Clinic): ${departments}, customer //customers/c-1001`,
    `  also       ern:demo/tenants/clinic-2 (//departments/dermatology), and the public tenant`,
    `  demo key   ${shownPath(keyFile)}${created ? ' (new)' : ''}`,
    `  store      ${store}`,
    ...(registry === undefined ? [] : [`  registry   ${registry}`]),
    '',
    'Tokens below are valid for 1 hour. More: npm run -s example:token -- --scope "pay:processPayments" --tenant clinic-2',
    '',
    '# Is authentication configured?',
    `curl -s ${url}/info/ -H "Authorization: Bearer ${infoToken}"`,
    '',
    '# Create a payment link (send it twice: the second answer is the first one replayed)',
    `curl -s -i ${url}/payment-links/ -H "Authorization: Bearer ${linkToken}" -H "Content-Type: application/json" -H "Idempotency-Key: ${randomUUID()}" -d '${body}'`,
    '',
    '# The OpenAPI 3.1 description of these routes, for client generators (no token needed)',
    `curl -s ${url}/openapi.json`,
    '',
    'Request log (method, path, status, tenant, error code):',
  ].join('\n');
}

/** Listens on `port`, or exits with a message naming PORT when the port cannot be had. */
async function listen(gateway, port) {
  try {
    return await serve(gateway, { port });
  } catch (error) {
    const reasons = { EADDRINUSE: 'is in use', EACCES: 'needs privileges this process lacks' };
    if (!Object.hasOwn(reasons, error.code)) throw error;
    console.error(`port ${port} ${reasons[error.code]}: set PORT=… to pick another (PORT=0 picks any free port)`);
    process.exit(1);
  }
}

/**
 * On SIGINT and SIGTERM: stops taking connections and lets the requests in flight finish (those
 * still open after `drainMs` are cut), then closes what they used (the JWKS server, the stores and
 * their pool), and exits with code 0 (1 when closing failed).
 */
function stopOnSignals(gateway, resources, drainMs) {
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    try {
      await gateway.close({ drainMs });
      await Promise.all(resources.map((resource) => resource.close()));
    } catch (error) {
      console.error(error);
      process.exit(1);
    }
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/**
 * The verifier's events an operator must see, one line each (hostile text capped and escaped by
 * eventLine): key-hygiene breaches, registry changes, and the operator controls applied (an issuer
 * suspended or resumed; keys removed, an operator's revoke-key among them). Successes, failures
 * and cache events are left to the request log and metrics.
 */
const LOGGED_EVENTS = new Set([
  'key_used_early',
  'key_rotation_overdue',
  'key_withdrawn',
  'registry_changed',
  'issuer_suspended',
  'issuer_resumed',
  'keys_removed',
]);

function logEvent(event) {
  if (LOGGED_EVENTS.has(event.type)) console.log(`${new Date().toISOString()} event ${eventLine(event)}`);
}

async function main() {
  // Every setting checked before anything starts: one refused stops the gateway with nothing opened.
  const settings = readSettings(process.env);
  const { port, drainMs } = settings;
  const { key, file, created } = await loadDemoKey();
  const shared = settings.databaseUrl !== undefined;
  const jwks = shared ? answerJwksHere(key) : await publishJwks(key);
  const stores = await openStores(settings, { seeds: TENANT_SEEDS, memoryDirectory: demoDirectory(), issuers: [jwks.entry] });
  const verifier = createVerifier({ registry: stores.registry, audience: AUDIENCE, fetch: jwks.fetch, onEvent: logEvent });
  stores.attach(verifier);
  const gateway = createGateway({
    verifier,
    directory: stores.directory,
    payPageUrl: PAY_PAGE_URL,
    store: stores.store,
    idempotency: stores.idempotency,
  });
  const server = await listen(gateway, port);
  stopOnSignals(server, [jwks, stores], drainMs);
  const [infoToken, linkToken] = await Promise.all([
    mintToken(key, { scope: 'pay:processPayments hub:subscribe' }),
    mintToken(key, { scope: 'pay:processPayments' }),
  ]);
  console.log(
    banner({
      url: server.url,
      jwksUrl: jwks.entry.jwksUri,
      jwksAnsweredHere: shared,
      keyFile: file,
      created,
      infoToken,
      linkToken,
      store: stores.description,
      registry: stores.registryDescription,
    }),
  );
}

main().catch((error) => {
  // A setting refused (PORT, DATABASE_URL, a PAYGATE_* variable): one line and exit code 2.
  if (error instanceof SettingError) {
    console.error(error.message);
    process.exit(2);
  }
  const oneLine = [DatabaseUnreachableError, RoleRefusedError, SchemaRefusedError].some((type) => error instanceof type);
  console.error(oneLine ? error.message : error);
  process.exit(1);
});
