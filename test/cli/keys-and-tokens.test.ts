import { generateKeyPairSync } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands.js';
import { EXIT, runCli } from '../../src/cli/run-cli.js';
import { captureIo } from './cli-io.js';

const ISS = 'https://auth.acme.example';
const AUD = 'https://payments.example';
let directory: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'paygate-cli-'));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function cli(args: readonly string[]) {
  const io = captureIo();
  const code = await runCli(args, io, COMMANDS);
  return { code, out: io.out(), err: io.err() };
}

async function generate(name: string, ...extra: string[]) {
  const out = join(directory, name);
  const jwks = join(directory, `${name}.jwks.json`);
  const result = await cli(['keys', 'generate', '--out', out, '--jwks', jwks, ...extra]);
  return { ...result, file: out, jwks };
}

const signArgs = (key: string) => [
  'token',
  'sign',
  '--key',
  key,
  '--issuer',
  ISS,
  '--audience',
  AUD,
  '--tenant',
  'ern:acme/tenants/t-1',
  '--scope',
  'pay:processPayments',
];

/** `args` with `--name value` pairs of `extra`: a repeatable --scope is added, any other option's value replaced. */
function withOptions(args: readonly string[], extra: readonly string[]): string[] {
  const result = [...args];
  for (let index = 0; index < extra.length; index += 2) {
    const [name, value] = [extra[index] as string, extra[index + 1] as string];
    const at = name === '--scope' ? -1 : result.indexOf(name);
    if (at === -1) result.push(name, value);
    else result[at + 1] = value;
  }
  return result;
}

describe('paygate-auth keys generate', () => {
  it.each(['pkcs8', 'jwk'])('writes a %s private key with mode 0600 and prints only the public JWK', async (format) => {
    const { code, out, err, file } = await generate(`key-${format}`, '--format', format);
    expect(code).toBe(EXIT.ok);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const jwk = JSON.parse(out) as Record<string, unknown>;
    expect(Object.keys(jwk).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
    expect(err).toContain(`mode 0600`);
    expect(err).toContain(`kid ${String(jwk.kid)}`);
    expect(await readFile(file, 'utf8')).toMatch(format === 'pkcs8' ? /^-----BEGIN PRIVATE KEY-----/ : /"d":/);
  });

  it('never overwrites a key file', async () => {
    const first = await generate('kept');
    const before = await readFile(first.file, 'utf8');
    const again = await cli(['keys', 'generate', '--out', first.file]);
    expect(again.code).toBe(EXIT.failed);
    expect(again.err).toContain('exists already');
    expect(await readFile(first.file, 'utf8')).toBe(before);
  });

  it.each([
    [['--format', 'pem', '--out', 'x'], '--format must be "pkcs8" or "jwk"'],
    // A value that forges a line: quoted as one escaped line (an argument is any text a script passes on).
    [['--format', 'pem\n\u001b[2J', '--out', 'x'], '--format must be "pkcs8" or "jwk", got "pem\\u000a\\u001b[2J"'],
    [['--modulus-length', '1024', '--out', 'x'], '--modulus-length must be 2048, 3072 or 4096, got "1024"'],
    [['--modulus-length', '0x800', '--out', 'x'], '--modulus-length must be 2048, 3072 or 4096, got "0x800"'],
    [['--modulus-length', '2048.0', '--out', 'x'], '--modulus-length must be 2048, 3072 or 4096, got "2048.0"'],
    [[], '--out is required'],
    [['--out', 'x', '--out', 'y'], '--out is given twice'],
    [['--out', 'x', '--bogus'], 'unknown option "--bogus"'],
    [['--out'], '--out needs a value'],
  ])('exits 2 on %j', async (args, message) => {
    const result = await cli(['keys', 'generate', ...args]);
    expect(result.code).toBe(EXIT.usage);
    expect(result.err).toContain(message);
  });
});

describe('paygate-auth token sign', () => {
  it("signs a token with the contract's header and claims that verifies against the generated JWKS", async () => {
    const key = await generate('signing');
    const { code, out } = await cli([...signArgs(key.file), '--tenant-name', 'Acme Clinic', '--lifetime', '600']);
    expect(code).toBe(EXIT.ok);
    const token = out.trim();
    const jwks = JSON.parse(await readFile(key.jwks, 'utf8')) as { keys: { kid: string }[] };
    expect(decodeProtectedHeader(token)).toStrictEqual({ alg: 'RS256', typ: 'JWT', kid: jwks.keys[0]?.kid });
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwks as never), { issuer: ISS, audience: AUD });
    expect((payload.expt as number) - (payload.iat as number)).toBe(600);
    expect(payload).toMatchObject({
      sub: ISS,
      tenant_ern: 'ern:acme/tenants/t-1',
      tenant_name: 'Acme Clinic',
      scope: 'pay:processPayments',
    });
  });

  it('and the doctor accepts what it signed', async () => {
    const key = await generate('doctor', '--format', 'jwk');
    const token = (await cli(signArgs(key.file))).out.trim();
    const doctor = await cli(['doctor', token, '--issuer', ISS, '--product', 'acme', '--jwks', key.jwks, '--audience', AUD]);
    expect(doctor.out).toContain("Accepted. The gateway's verifier (createVerifier) accepts it too.");
    expect(doctor.code).toBe(EXIT.ok);
  });

  it.each([
    ['spaces', 'pay:processPayments hub:subscribe'],
    ['commas', 'pay:processPayments,hub:subscribe'],
  ])('tells a --scope holding several scopes (%s) to give one --scope each', async (separator, scopes) => {
    const key = await generate(`several-scopes-${separator}`);
    const result = await cli(withOptions(signArgs(key.file), ['--scope', scopes]));
    expect([result.code, result.out]).toEqual([EXIT.failed, '']);
    expect(result.err).toContain('refused (invalid_scope, --scope)');
    expect(result.err).toContain('one --scope each');
  });

  it.each([
    ['--scope', '--scope pay:processPayments'],
    ['--audience', '--audience https://'],
  ])('takes a token sign without %s as a usage mistake (exit 2), naming none found and an example', async (option, example) => {
    const key = await generate(`no-${option.slice(2)}`);
    const args = signArgs(key.file);
    const at = args.indexOf(option);
    const result = await cli([...args.slice(0, at), ...args.slice(at + 2)]);
    expect([result.code, result.out]).toEqual([EXIT.usage, '']);
    expect(result.err).toContain(`${option} is required, got none`);
    expect(result.err).toContain(example);
  });

  it('refuses a --kid over 256 characters, naming it, and exits 1', async () => {
    const key = await generate('long-kid');
    const result = await cli(withOptions(signArgs(key.file), ['--kid', 'k'.repeat(257)]));
    expect([result.code, result.out]).toEqual([EXIT.failed, '']);
    expect(result.err).toContain('refused (invalid_kid, --kid): kid is 257 characters');
  });

  it('writes only expt with --no-exp', async () => {
    const key = await generate('no-exp');
    const token = (await cli([...signArgs(key.file), '--no-exp'])).out.trim();
    expect(decodeJwt(token)).not.toHaveProperty('exp');
  });

  it.each([
    [['--scope', 'pay:refund'], 'refused (invalid_scope, --scope)'],
    [['--tenant', 'ern:acme/t-1'], 'refused (invalid_tenant, --tenant)'],
    [['--product', 'globex'], 'refused (tenant_not_allowed, --tenant)'],
    [['--lifetime', '90000'], 'refused (lifetime_exceeded, --lifetime)'],
    [['--user', 'ern:globex/tenants/t-1/users/u-1'], 'refused (invalid_user, --user)'],
  ])('refuses %j, naming the option, and exits 1', async (extra, message) => {
    const key = await generate(`refused-${extra.join('')}`.replace(/[^\w-]/g, '_'));
    const result = await cli(withOptions(signArgs(key.file), extra));
    expect(result.code).toBe(EXIT.failed);
    expect(result.err).toContain(message);
    expect(result.out).toBe('');
  });

  it.each([
    [['--max-lifetime', '999999999'], '--max-lifetime must be a number of seconds above 0 and at most 604800, got 999999999'],
    [['--lifetime', '1.5'], '--lifetime must be a whole number of seconds above 0, got "1.5"'],
    [['--lifetime', '1e3'], '--lifetime must be a whole number of seconds above 0, got "1e3"'],
    [['--lifetime', '0'], '--lifetime must be a whole number of seconds above 0, got "0"'],
    [['--product', 'acme/x'], '--product must be a name'],
    [['--issuer', ' https://auth.acme.example'], '--issuer must be a non-empty string without surrounding white space'],
    [
      ['--issuer', 'auth.acme.example'],
      '--issuer must be an https: URI without credentials (http: only on a loopback host), got "auth.acme.example"',
    ],
    [['--audience', ' https://other.example'], '--audience must be a non-empty string without surrounding white space'],
  ])('takes a bad value %j as a usage mistake naming the flag (exit 2)', async (extra, message) => {
    const key = await generate(`usage-${extra.join('')}`.replace(/[^\w-]/g, '_'));
    const args = extra[0] === '--audience' ? [...signArgs(key.file), ...extra] : withOptions(signArgs(key.file), extra);
    const result = await cli(args);
    expect(result.code).toBe(EXIT.usage);
    expect(result.err).toContain(`paygate-auth token sign: ${message}`);
    expect(result.err).not.toContain('signToken');
    expect(result.out).toBe('');
  });

  it('refuses a key file that others may read', async () => {
    const key = await generate('loose');
    await chmod(key.file, 0o644);
    const result = await cli(signArgs(key.file));
    expect(result.code).toBe(EXIT.failed);
    expect(result.err).toContain('may be read by others (mode 644)');
  });

  it.each(['pkcs8', 'jwk'] as const)('refuses a %s RSA key under 2048 bits, naming its size (weak_key)', async (format) => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const file = join(directory, `weak-${format}`);
    const text =
      format === 'pkcs8'
        ? (privateKey.export({ type: 'pkcs8', format: 'pem' }) as string)
        : JSON.stringify(privateKey.export({ format: 'jwk' }));
    await writeFile(file, text, { mode: 0o600 });
    const result = await cli(signArgs(file));
    expect(result.code).toBe(EXIT.failed);
    expect(result.err).toContain('refused (weak_key, --key)');
    expect(result.err).toContain('1024-bit');
    expect(result.out).toBe('');
  });

  it('refuses a file that is not a private key, without showing its content', async () => {
    const file = join(directory, 'not-a-key.pem');
    await writeFile(file, 'hello secret world', { mode: 0o600 });
    const result = await cli(signArgs(file));
    expect(result.code).toBe(EXIT.failed);
    expect(result.err).toContain('is not a private RSA key');
    expect(result.err).not.toContain('hello secret world');
  });
});

describe('file errors of the key commands', () => {
  it('token sign --key nofile.pem fails (exit 1) with one line naming the file', async () => {
    const missing = join(directory, 'nofile.pem');
    const { code, err } = await cli(signArgs(missing));
    expect(code).toBe(EXIT.failed);
    expect(err).toBe(`paygate-auth token sign: cannot read --key "${missing}": no such file or directory (ENOENT)\n`);
  });

  it('token sign --key <a directory> fails (exit 1) saying it is a directory, whatever its mode', async () => {
    const folder = join(directory, 'a-folder');
    await mkdir(folder, { mode: 0o755 });
    await chmod(folder, 0o755);
    const { code, err } = await cli(signArgs(folder));
    expect(code).toBe(EXIT.failed);
    expect(err).toBe(`paygate-auth token sign: cannot read --key "${folder}": is a directory, not a file (EISDIR)\n`);
  });

  it('keys generate --out under a file fails (exit 1) with one line naming the file, which is not a directory', async () => {
    await writeFile(join(directory, 'a-file'), '');
    const out = join(directory, 'a-file', 'key.pem');
    const { code, err } = await cli(['keys', 'generate', '--out', out]);
    expect(code).toBe(EXIT.failed);
    expect(err).toMatch(
      /^paygate-auth keys generate: cannot write --out ".*a-file\/key\.pem": ".*a-file" exists and is not a directory \(EEXIST\)\n$/,
    );
  });

  it('keys generate --out <an existing file> fails (exit 1) naming --out and what to do', async () => {
    const out = join(directory, 'existing.pem');
    await writeFile(out, 'kept', { mode: 0o600 });
    const { code, err } = await cli(['keys', 'generate', '--out', out]);
    expect(code).toBe(EXIT.failed);
    expect(err).toBe(
      `paygate-auth keys generate: cannot write --out "${out}": exists already (key_exists); a key file is never overwritten: give another --out, or move that file away\n`,
    );
    expect(await readFile(out, 'utf8')).toBe('kept');
  });

  it('keys generate --jwks <an existing file> fails (exit 1) naming it, before any key is written', async () => {
    const jwks = join(directory, 'taken.jwks.json');
    await writeFile(jwks, '{"keys":[]}\n');
    const out = join(directory, 'not-written.pem');
    const { code, err } = await cli(['keys', 'generate', '--out', out, '--jwks', jwks]);
    expect(code).toBe(EXIT.failed);
    expect(err).toMatch(new RegExp(`^paygate-auth keys generate: cannot write --jwks "${jwks}": exists already \\(EEXIST\\);.*--jwks`));
    expect(err).not.toContain('.tmp');
    await expect(stat(out)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readFile(jwks, 'utf8')).toBe('{"keys":[]}\n');
  });

  it('keys generate --jwks in a missing directory creates the directory and writes the JWKS (exit 0)', async () => {
    const out = join(directory, 'jwks-dir-key.pem');
    const jwks = join(directory, 'public', 'new', 'jwks.json');
    const { code } = await cli(['keys', 'generate', '--out', out, '--jwks', jwks]);
    expect(code).toBe(EXIT.ok);
    expect(JSON.parse(await readFile(jwks, 'utf8'))).toMatchObject({ keys: [{ kty: 'RSA' }] });
    expect((await stat(join(directory, 'public', 'new'))).mode & 0o777).toBe(0o755);
  });

  it('keys generate --jwks removes the temporary JWKS file a killed run left beside it, once a minute old', async () => {
    const folder = join(directory, 'jwks-swept');
    await mkdir(folder);
    const left = join(folder, 'jwks.json.1b4e28ba-2fa1-11d2-883f-0016d3cca427.tmp');
    await writeFile(left, '{"keys":[');
    const old = new Date(Date.now() - 2 * 60_000);
    await utimes(left, old, old);
    const { code } = await cli(['keys', 'generate', '--out', join(folder, 'key.pem'), '--jwks', join(folder, 'jwks.json')]);
    expect(code).toBe(EXIT.ok);
    expect((await readdir(folder)).sort()).toEqual(['jwks.json', 'key.pem']);
  });

  it.each(['--out', '--jwks'])('keys generate %s - is a usage mistake (exit 2): no file named "-" is written', async (option) => {
    const args = option === '--out' ? ['--out', '-'] : ['--out', join(directory, 'dash-key.pem'), '--jwks', '-'];
    const { code, err } = await cli(['keys', 'generate', ...args]);
    expect(code).toBe(EXIT.usage);
    expect(err).toContain(`${option} must name a file, got "-" (standard output)`);
    await expect(stat('-')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(stat(join(directory, 'dash-key.pem'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it.each(['--out', '--jwks'])(
    'keys generate %s naming a directory (ending in "/") is a usage mistake (exit 2), nothing written',
    async (option) => {
      const folder = join(directory, `slash${option}/`);
      const args = option === '--out' ? ['--out', folder] : ['--out', join(directory, 'slash-key.pem'), '--jwks', folder];
      const { code, err } = await cli(['keys', 'generate', ...args]);
      expect(code).toBe(EXIT.usage);
      expect(err).toContain(`${option} must name a file, got "${folder}"`);
      await expect(stat(folder)).rejects.toMatchObject({ code: 'ENOENT' });
      await expect(stat(join(directory, 'slash-key.pem'))).rejects.toMatchObject({ code: 'ENOENT' });
    },
  );

  it('keys generate with --jwks naming the --out file is a usage mistake (exit 2), and nothing is written', async () => {
    const out = join(directory, 'same.pem');
    const { code, err } = await cli(['keys', 'generate', '--out', out, '--jwks', out]);
    expect(code).toBe(EXIT.usage);
    expect(err).toContain('--jwks must name another file than --out');
    expect(err).toContain(`got ${JSON.stringify(out)} for both`);
    await expect(stat(out)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('issuers import of a missing file fails (exit 2) with one line naming the file', async () => {
    const { code, err } = await cli(['issuers', 'import', join(directory, 'none.json')]);
    expect(code).toBe(EXIT.usage);
    expect(err.split('\n')[0]).toMatch(/cannot read the file of entries ".*none\.json": no such file or directory \(ENOENT\)$/);
  });

  it('doctor --jwks <a directory> fails (exit 2) saying so, not as a JWKS download that failed', async () => {
    const folder = join(directory, 'jwks-folder');
    await mkdir(folder);
    const { code, err, out } = await cli(['doctor', 'a.b.c', '--issuer', ISS, '--product', 'acme', '--audience', AUD, '--jwks', folder]);
    expect(code).toBe(EXIT.usage);
    expect(err.split('\n')[0]).toBe(`paygate-auth doctor: cannot read --jwks "${folder}": is a directory, not a file (EISDIR)`);
    expect(out).not.toContain('jwks.file.invalid');
  });

  it('doctor --jwks of a missing file fails (exit 2) with one line naming the file', async () => {
    const missing = join(directory, 'none-jwks.json');
    const { code, err } = await cli(['doctor', 'a.b.c', '--issuer', ISS, '--product', 'acme', '--audience', AUD, '--jwks', missing]);
    expect(code).toBe(EXIT.usage);
    expect(err.split('\n')[0]).toContain(`cannot read --jwks "${missing}": no such file or directory (ENOENT)`);
  });
});
