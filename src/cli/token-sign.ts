/**
 * `paygate-auth token sign`: a token signed by hand with a private key file, built by the same
 * rules as `paygate-auth/issuer`'s `sign()` (so a token the gateway would reject is refused, naming
 * the option). For trying things out: it signs at once, whatever the key's publication time.
 */
import { IssuerError, KeyStoreError, readPrivateKeyFile, signToken } from '../issuer/index.js';
import type { CliCommand } from './command.js';
import { flagMistake, parseOptions, requiredValue, requiredValues, secondsValue, stringValue, stringValues } from './cli-options.js';
import { describeFileError } from './file-errors.js';
import { EXIT } from './run-cli.js';

const HELP = `Usage: paygate-auth token sign --key <private-key-file> --issuer <iss> --audience <aud> --tenant <ern> --scope <scope> [options]

Signs a token the gateway would accept, and prints it. Refuses (naming the option) an unknown
scope, a malformed tenant ERN, a tenant of another product, a lifetime over the maximum.

  --key <file>               private key: PKCS#8 PEM or a private JWK, RSA of at least 2048 bits
                             (mode 0600 required)
  --kid <kid>                the key's kid (default: the JWK's kid, else the RFC 7638 thumbprint)
  --issuer <iss>             iss and sub: an https: URI (http: only on a loopback host)
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
const OPTION_OF: Readonly<Record<string, string>> = {
  tenant: '--tenant',
  scopes: '--scope',
  user: '--user',
  tenantName: '--tenant-name',
  lifetime: '--lifetime',
  kid: '--kid',
};

/** The flag each `signToken` option comes from, to name it in a usage mistake. */
const FLAG_OF_OPTION: Readonly<Record<string, string>> = {
  issuer: '--issuer',
  audience: '--audience',
  product: '--product',
  maxLifetime: '--max-lifetime',
};

/** `paygate-auth token sign`. */
export const tokenSignCommand: CliCommand = {
  name: 'token sign',
  summary: 'sign a token the gateway would accept, with a private key file',
  help: HELP,
  async run(args, io) {
    const parsed = parseOptions(args, OPTIONS, 0);
    const keyFile = requiredValue(parsed, 'key');
    const issuer = requiredValue(parsed, 'issuer');
    const audiences = requiredValues(parsed, 'audience', 'https://payments.example');
    const tenant = requiredValue(parsed, 'tenant');
    const scopes = requiredValues(parsed, 'scope', 'pay:processPayments');
    const maxLifetime = secondsValue(parsed, 'max-lifetime');
    const products = stringValues(parsed, 'product');
    // Not a whole number of seconds is a usage mistake (exit 2), as for --max-lifetime; over the
    // maximum is sign()'s refusal (exit 1, lifetime_exceeded).
    const lifetime = secondsValue(parsed, 'lifetime');
    const input = {
      tenant,
      scopes,
      ...(stringValue(parsed, 'user') === undefined ? {} : { user: stringValue(parsed, 'user') }),
      ...(stringValue(parsed, 'tenant-name') === undefined ? {} : { tenantName: stringValue(parsed, 'tenant-name') }),
      ...(lifetime === undefined ? {} : { lifetime }),
    };
    let token: string;
    try {
      token = await signToken(input, {
        key: readPrivateKeyFile(keyFile, { kid: stringValue(parsed, 'kid') }),
        issuer,
        audience: audiences.length === 1 ? (audiences[0] as string) : audiences,
        ...(products.length === 0 ? {} : { product: products }),
        ...(maxLifetime === undefined ? {} : { maxLifetime }),
        emitExp: parsed.values['no-exp'] !== true,
      });
    } catch (error) {
      if (error instanceof IssuerError) {
        io.stderr(
          `paygate-auth token sign: refused (${error.code}${error.field === undefined ? '' : `, ${OPTION_OF[error.field] ?? error.field}`}): ${error.message}\n`,
        );
        return EXIT.failed;
      }
      if (error instanceof KeyStoreError) {
        io.stderr(`paygate-auth token sign: refused (${error.code}, --key): ${error.message}\n`);
        return EXIT.failed;
      }
      const mistake = flagMistake(error, 'signToken', FLAG_OF_OPTION);
      if (mistake !== undefined) throw mistake;
      const unreadable = describeFileError(error, '--key', keyFile);
      if (unreadable !== undefined) {
        io.stderr(`paygate-auth token sign: cannot read ${unreadable}\n`);
        return EXIT.failed;
      }
      throw error;
    }
    io.stdout(`${token}\n`);
    return EXIT.ok;
  },
};
