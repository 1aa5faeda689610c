/**
 * Mints a demo token the running example gateway accepts, and prints it (only it) on stdout:
 *
 *   npm run -s example:token -- --scope "pay:processPayments hub:subscribe" --tenant clinic-2
 *   TOKEN=$(npm run -s example:token -- --tenant public)
 *
 * Options: --scope <space-delimited scopes> (default pay:processPayments), --tenant <tenant id or
 * ern:demo/tenants/<id>> (default clinic-1), --user <user id> (user_ern //users/<id>),
 * --lifetime <seconds> (default 3600, at most 86400).
 */
import { parseArgs } from 'node:util';
import { parseReference, quote } from 'paygate-auth';
import { DEFAULT_SCOPE, DEFAULT_TENANT, loadDemoKey, mintToken } from './demo.mjs';

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      scope: { type: 'string', default: DEFAULT_SCOPE },
      tenant: { type: 'string', default: DEFAULT_TENANT },
      user: { type: 'string' },
      lifetime: { type: 'string', default: '3600' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (error) {
  fail(`${error.message}\nUsage: npm run -s example:token -- [--scope "<scopes>"] [--tenant <id>] [--user <id>] [--lifetime <seconds>]`);
}
if (values.help) {
  process.stdout.write('Usage: npm run -s example:token -- [--scope "<scopes>"] [--tenant <id>] [--user <id>] [--lifetime <seconds>]\n');
  process.exit(0);
}
const lifetime = Number(values.lifetime);
if (!/^\d+$/.test(values.lifetime) || lifetime < 1 || lifetime > 86_400)
  fail(`--lifetime must be whole seconds from 1 to 86400, got ${quote(values.lifetime)}`);
if (!/^(ern:[A-Za-z0-9._-]+\/tenants\/)?[A-Za-z0-9._-]+$/.test(values.tenant))
  fail(`--tenant must be a tenant id (clinic-1) or ern:demo/tenants/<id>, got ${quote(values.tenant)}`);
if (values.user !== undefined) {
  // The gateway refuses a token whose user_ern is no user reference: refuse such a --user here.
  try {
    parseReference(`//users/${values.user}`, 'users');
  } catch {
    fail(`--user must be a user id (letters, digits, "-", "_", "."), got ${quote(values.user)}`);
  }
}

const { key } = await loadDemoKey();
process.stdout.write(`${await mintToken(key, { scope: values.scope, tenant: values.tenant, user: values.user, lifetime })}\n`);
