/**
 * `paygate-auth keys generate`: a new RS256 key pair. The private key goes to a file created with
 * mode 0600 (never overwritten, never printed); the public JWK goes to standard output, and
 * optionally into a JWKS file to publish.
 */
import { quote } from '../internal/index.js';
import { KeyStoreError, generateKeyFile } from '../issuer/index.js';
import { makeDirectoryDurably, sweepTemporaries, writeFileDurably } from '../issuer/internal.js';
import { type CliCommand, UsageError } from './command.js';
import { parseOptions, requiredValue, stringValue } from './cli-options.js';
import { describeFileError, isFileSystemError } from './file-errors.js';
import { EXIT } from './run-cli.js';

const HELP = `Usage: paygate-auth keys generate --out <private-key-file> [options]

Generates an RS256 key pair. Its kid is the key's RFC 7638 thumbprint.

  --out <file>               where the private key is written (mode 0600; never overwritten;
                             never "-": the private key is never printed)
  --format pkcs8|jwk         PKCS#8 PEM (default) or a private JWK
  --modulus-length <bits>    2048 (default), 3072 or 4096
  --jwks <file>              also write a JWKS holding the public key, to publish (never overwritten)

The directories of --out (mode 0700) and --jwks (0755) are created if missing.

The public JWK is printed on standard output; the private key is never printed.
Exit codes: 0 written, 1 a file exists or cannot be written, 2 usage mistake.
`;

const OPTIONS = {
  out: { type: 'string' },
  format: { type: 'string' },
  'modulus-length': { type: 'string' },
  jwks: { type: 'string' },
} as const;

/**
 * `value` of `option`, refused when it names a directory (`keys/`), or is `-`: a file is written
 * there, never standard output (the private key is never printed; the public JWK always is).
 */
function fileValue(option: string, value: string | undefined): string | undefined {
  if (value === '-')
    throw new UsageError(
      `${option} must name a file, got "-" (standard output): the public JWK is printed anyway, and the private key never is; give a file's path`,
    );
  if (value !== undefined && /[\\/]$/.test(value))
    throw new UsageError(
      `${option} must name a file, got ${quote(value)} (a directory): add the file's name, as in ${quote(`${value}key.pem`)}`,
    );
  return value;
}

/** A file error of `option`'s file as one line naming it (and `more`); any other error as it is. */
function cannotWrite(error: unknown, option: string, file: string, more = ''): unknown {
  const problem = describeFileError(error, option, file);
  return problem === undefined ? error : new Error(`cannot write ${problem}${more}`, { cause: error });
}

/**
 * Refuses, before a key is made, a `--jwks` file that could not be written: `--out` itself, or a
 * file that exists (a JWKS is never overwritten). A key written and then no JWKS would leave the
 * operator to run again with another `--out` as well.
 */
async function checkJwksFile(jwksFile: string, out: string): Promise<void> {
  const [fs, path] = await Promise.all([import('node:fs/promises'), import('node:path')]);
  if (path.resolve(jwksFile) === path.resolve(out)) {
    throw new UsageError(`--jwks must name another file than --out, got ${quote(jwksFile)} for both: give the JWKS its own file`);
  }
  const exists = await fs.lstat(jwksFile).then(
    () => true,
    (error: unknown) => {
      if (isFileSystemError(error) && error.code === 'ENOENT') return false;
      throw cannotWrite(error, '--jwks', jwksFile, '; nothing was written');
    },
  );
  if (exists) {
    throw new Error(
      `cannot write --jwks ${quote(jwksFile)}: exists already (EEXIST); a JWKS file is never overwritten, and nothing was written: give another --jwks, or move that file away`,
    );
  }
}

/** `paygate-auth keys generate`. */
export const keysGenerateCommand: CliCommand = {
  name: 'keys generate',
  summary: 'generate an RS256 key pair (private key file mode 0600, public JWK printed)',
  help: HELP,
  async run(args, io) {
    const parsed = parseOptions(args, OPTIONS, 0);
    const out = fileValue('--out', requiredValue(parsed, 'out')) as string;
    const format = stringValue(parsed, 'format') ?? 'pkcs8';
    if (format !== 'pkcs8' && format !== 'jwk') throw new UsageError(`--format must be "pkcs8" or "jwk", got ${quote(format)}`);
    const bits = stringValue(parsed, 'modulus-length');
    const modulusLength = bits === undefined ? 2048 : /^\d+$/.test(bits) ? Number(bits) : Number.NaN;
    if (modulusLength !== 2048 && modulusLength !== 3072 && modulusLength !== 4096)
      throw new UsageError(`--modulus-length must be 2048, 3072 or 4096, got ${quote(bits ?? '')}`);
    const jwksFile = fileValue('--jwks', stringValue(parsed, 'jwks'));
    if (jwksFile !== undefined) await checkJwksFile(jwksFile, out);
    const publicJwk = await generateKeyFile(out, { format, modulusLength }).catch((error: unknown) => {
      if (error instanceof KeyStoreError && error.code === 'key_exists') {
        throw new Error(
          `cannot write --out ${quote(out)}: exists already (key_exists); a key file is never overwritten: give another --out, or move that file away`,
          { cause: error },
        );
      }
      throw cannotWrite(error, '--out', out);
    });
    const { kid } = publicJwk;
    if (jwksFile !== undefined) {
      // Crash-safe, as the key file: a crash leaves no JWKS or the whole one, never half of one.
      // Its directory is created as --out's is (after it: a directory both share stays 0700).
      const { dirname } = await import('node:path');
      // The temporary file a run killed halfway left beside it (`<jwks>.<uuid>.tmp`) is removed first.
      await makeDirectoryDurably(dirname(jwksFile), 0o755)
        .then(() => sweepTemporaries(jwksFile))
        .then(() => writeFileDurably(jwksFile, `${JSON.stringify({ keys: [publicJwk] }, null, 2)}\n`, { mode: 0o644, overwrite: false }))
        .catch((error: unknown) => {
          throw cannotWrite(error, '--jwks', jwksFile, `; the private key was written to ${out} (kid ${kid})`);
        });
    }
    io.stdout(`${JSON.stringify(publicJwk, null, 2)}\n`);
    io.stderr(
      `Wrote the private key to ${out} (mode 0600, ${format === 'pkcs8' ? 'PKCS#8 PEM' : 'JWK'}); kid ${kid}.${jwksFile === undefined ? '' : ` Wrote the JWKS to ${jwksFile}.`}\n`,
    );
    return EXIT.ok;
  },
};
