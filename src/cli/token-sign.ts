/**
 * `paygate-auth token sign`: a token signed by hand with a private key file, built by the same
 * rules as `paygate-auth/issuer`'s `sign()` (so a token the gateway would reject is refused, naming
 * the option). For trying things out: it signs at once, whatever the key's publication time.
 *
 * @module paygate-auth/cli
 */
import { calculateJwkThumbprint, exportJWK, importPKCS8 } from 'jose';
import { checkPrivateKeyFileMode, importPrivateKey } from '../issuer/file-key-store.js';
import { signCompact } from '../issuer/compact.js';
import { IssuerError, KeyStoreError } from '../issuer/errors.js';
import { type CryptoKey, signRs256 } from '../issuer/rsa-key.js';
import { type ClaimSettings, buildClaims } from '../issuer/token-claims.js';
import { parseTenantErn } from '../index.js';
import { type CliCommand, UsageError } from './command.js';
import { parseOptions, requiredValue, secondsValue, stringValue, stringValues } from './cli-options.js';
import { EXIT } from './run-cli.js';

const HELP = `Usage: paygate-auth token sign --key <private-key-file> --issuer <iss> --audience <aud> --tenant <ern> --scope <scope> [options]

Signs a token the gateway would accept, and prints it. Refuses (naming the option) an unknown
scope, a malformed tenant ERN, a tenant of another product, a lifetime over the maximum.

  --key <file>               private key: PKCS#8 PEM or a private JWK, RSA of at least 2048 bits
                             (mode 0600 required)
  --kid <kid>                the key's kid (default: the JWK's kid, else the RFC 7638 thumbprint)
  --issuer <iss>             iss and sub
  --audience <aud>           aud (repeatable)
  --tenant <ern>             tenant_ern: ern:<product>/tenants/<tenant-id>
  --scope <scope>            a scope (repeatable): pay:processPayments, pay:chargeToken,
                             pay:manageIntegration, hub:subscribe
  --user <ref>               user_ern
  --tenant-name <name>       tenant_name
  --product <name>           the products the issuer is registered for (repeatable; default the tenant's)
  --lifetime <seconds>       from iat to expiry (default 300)
  --max-lifetime <seconds>   the gateway's maximum (default 86400)
  --no-exp                   write only "expt", not also "exp"

Exit codes: 0 signed, 1 refused or the key cannot be read, 2 usage mistake.
`;

const OPTIONS = {
  key: { type: 'string' },
  kid: { type: 'string' },
  issuer: { type: 'string' },
  audience: { type: 'string', multiple: true },
  tenant: { type: 'string' },
  scope: { type: 'string', multiple: true },
  user: { type: 'string' },
  'tenant-name': { type: 'string' },
  product: { type: 'string', multiple: true },
  lifetime: { type: 'string' },
  'max-lifetime': { type: 'string' },
  'no-exp': { type: 'boolean' },
} as const;

/** The option each sign() field comes from, to name it in a refusal. */
const OPTION_OF: Readonly<Record<string, string>> = { tenant: '--tenant', scopes: '--scope', user: '--user', tenantName: '--tenant-name', lifetime: '--lifetime' };

async function readKey(file: string, kidOption: string | undefined): Promise<{ key: CryptoKey; kid: string }> {
  const { readFile } = await import('node:fs/promises');
  await checkPrivateKeyFileMode(file);
  const text = await readFile(file, 'utf8');
  const isJwk = text.trimStart().startsWith('{');
  const key = await importPrivateKey(text, isJwk ? 'jwk' : 'pkcs8', file);
  if (kidOption !== undefined) return { key, kid: kidOption };
  let n: unknown;
  let e: unknown;
  if (isJwk) {
    const jwk = JSON.parse(text) as Record<string, unknown>;
    if (typeof jwk.kid === 'string' && jwk.kid !== '') return { key, kid: jwk.kid };
    ({ n, e } = jwk);
  } else {
    ({ n, e } = await exportJWK(await importPKCS8(text, 'RS256', { extractable: true })));
  }
  return { key, kid: await calculateJwkThumbprint({ kty: 'RSA', n: n as string, e: e as string }, 'sha256') };
}

/** `paygate-auth token sign`. */
export const tokenSignCommand: CliCommand = {
  name: 'token sign',
  summary: 'sign a token the gateway would accept, with a private key file',
  help: HELP,
  async run(args, io) {
    const parsed = parseOptions(args, OPTIONS, 0);
    const keyFile = requiredValue(parsed, 'key');
    const issuer = requiredValue(parsed, 'issuer');
    const audiences = stringValues(parsed, 'audience');
    if (audiences.length === 0) throw new UsageError('--audience is required');
    const tenant = requiredValue(parsed, 'tenant');
    const maxLifetime = secondsValue(parsed, 'max-lifetime') ?? 86_400;
    let products = stringValues(parsed, 'product');
    if (products.length === 0) {
      try {
        products = [parseTenantErn(tenant).product];
      } catch {
        products = [];
      }
    }
    const settings: ClaimSettings = {
      issuer,
      audience: audiences.length === 1 ? (audiences[0] as string) : audiences,
      products,
      tenants: null,
      lifetime: Math.min(300, maxLifetime),
      maxLifetime,
      emitExp: parsed.values['no-exp'] !== true,
    };
    const lifetime = stringValue(parsed, 'lifetime');
    const input = {
      tenant,
      scopes: stringValues(parsed, 'scope'),
      ...(stringValue(parsed, 'user') === undefined ? {} : { user: stringValue(parsed, 'user') }),
      ...(stringValue(parsed, 'tenant-name') === undefined ? {} : { tenantName: stringValue(parsed, 'tenant-name') }),
      ...(lifetime === undefined ? {} : { lifetime: /^\d+$/.test(lifetime) ? Number(lifetime) : Number.NaN }),
    };
    let claims;
    try {
      claims = buildClaims(input, settings, Date.now() / 1000);
    } catch (error) {
      if (error instanceof IssuerError) {
        io.stderr(`paygate-auth token sign: refused (${error.code}${error.field === undefined ? '' : `, ${OPTION_OF[error.field] ?? error.field}`}): ${error.message}\n`);
        return EXIT.failed;
      }
      throw error;
    }
    let read;
    try {
      read = await readKey(keyFile, stringValue(parsed, 'kid'));
    } catch (error) {
      if (error instanceof KeyStoreError) {
        io.stderr(`paygate-auth token sign: refused (${error.code}, --key): ${error.message}\n`);
        return EXIT.failed;
      }
      throw error;
    }
    const { key, kid } = read;
    const token = await signCompact({ alg: 'RS256', typ: 'JWT', kid }, claims, (data) => signRs256(key, data));
    io.stdout(`${token}\n`);
    return EXIT.ok;
  },
};
