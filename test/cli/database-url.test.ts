/**
 * The database every PostgreSQL command reads: `--database-url` on each of them, a URL checked
 * before `pg` sees it, and a host that accepts the connection and then stays silent reported as
 * the connect timeout it is.
 */
import { type Server, type Socket, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands.js';
import { databaseTarget } from '../../src/cli/database-url.js';
import { EXIT, runCli } from '../../src/cli/run-cli.js';
import { captureIo } from './cli-io.js';

async function cli(args: readonly string[], env: Record<string, string> = {}) {
  const captured = captureIo();
  const code = await runCli(args, { ...captured, env }, COMMANDS);
  return { code, out: captured.out(), err: captured.err() };
}

/** Every command that reads the database, with the arguments it needs to get that far. */
const DATABASE_COMMANDS: readonly (readonly string[])[] = [
  ['controls'],
  ['controls', 'compact'],
  ['fleet'],
  ['issuers', 'remove', 'https://auth.acme.example'],
  ['issuers', 'list'],
  ['issuers', 'show', 'https://auth.acme.example'],
  ['issuers', 'history'],
  ['keys', 'status', 'https://auth.acme.example'],
  ['migrate'],
  ['revoke-key', '--issuer', 'https://auth.acme.example', '--kid', 'k1'],
  ['suspend-issuer', '--issuer', 'https://auth.acme.example'],
  ['resume-issuer', '--issuer', 'https://auth.acme.example'],
  ['refresh-keys', '--issuer', 'https://auth.acme.example'],
];

describe('--database-url on every command that reads the database', () => {
  it('gives the range --connect-timeout takes (whole seconds, 1 to 600) in every --help that names it', () => {
    const named = COMMANDS.filter((command) => command.help.includes('--connect-timeout'));
    expect(named.length).toBeGreaterThan(0);
    for (const command of named)
      expect(command.help.replace(/\s+/g, ' '), command.name).toContain('in whole seconds, 1 to 600 (default 10)');
  });

  it('is named by every PostgreSQL command, issuers add, update and import included', () => {
    const named = COMMANDS.filter((command) => command.help.includes('DATABASE_URL')).map((command) => command.name);
    for (const command of named) expect(COMMANDS.find((c) => c.name === command)?.help, command).toContain('--database-url <url>');
    expect(named).toEqual(
      expect.arrayContaining(
        DATABASE_COMMANDS.map((args) =>
          args
            .slice(0, 2)
            .join(' ')
            .replace(/ --.*$/, ''),
        ),
      ),
    );
  });

  it.each(DATABASE_COMMANDS.map((args) => [args.join(' '), args]))(
    '%s refuses a mysql: URL (exit 2), naming the scheme found and the one expected, never the password',
    async (_name, args) => {
      const { code, err } = await cli([...args, '--database-url', 'mysql://gateway:s3cret@db.internal/payments']);
      expect(code).toBe(EXIT.usage);
      expect(err).toContain('--database-url must be a postgres: or postgresql: URL, got a "mysql:" URL');
      expect(err).not.toContain('s3cret');
      expect(err.trim().split('\n')).toHaveLength(2); // the line, and the --help hint: no stack trace
    },
  );

  it('refuses a DATABASE_URL that is no URL, saying so (not a host it could not find)', async () => {
    const { code, err } = await cli(['controls'], { DATABASE_URL: 'not-a-url' });
    expect(code).toBe(EXIT.usage);
    expect(err).toContain('DATABASE_URL is not a URL, got "not-a-url"');
    expect(err).not.toContain('ENOTFOUND');
  });

  it('prefers --database-url to DATABASE_URL, and names the one at fault', async () => {
    const { err } = await cli(['controls', '--database-url', 'not-a-url'], { DATABASE_URL: 'postgres://gateway@127.0.0.1:1/x' });
    expect(err).toContain('--database-url is not a URL, got "not-a-url"');
  });

  it('says DATABASE_URL is not set when neither is given', async () => {
    const { code, err } = await cli(['controls']);
    expect(code).toBe(EXIT.usage);
    expect(err).toContain('DATABASE_URL is not set');
  });

  it.each([
    ['--database-url', ['--database-url', '  '], {}],
    ['DATABASE_URL', [], { DATABASE_URL: '  ' }],
  ])('names a blank %s as blank, not as unset', async (name, extra, env) => {
    const { code, err } = await cli(['controls', ...extra], env);
    expect(code).toBe(EXIT.usage);
    expect(err).toContain(`${name} is blank ("  ")`);
  });

  it("takes libpq's socket form (a user, no host, ?host=<directory>) as pg does, naming the directory it could not reach (exit 1)", async () => {
    const { code, err } = await cli(['controls'], { DATABASE_URL: 'postgres://gateway:s3cret@/payments?host=/nonexistent-paygate-dir' });
    expect(code).toBe(EXIT.failed);
    expect(err).toContain('cannot connect to the database at /nonexistent-paygate-dir:5432/payments');
    expect(err).not.toContain('is not a URL');
    expect(err).not.toContain('s3cret');
  });

  it("names the host and port of ?host= and ?port=, which pg connects to in place of the URL's", async () => {
    const { err } = await cli(['controls'], { DATABASE_URL: 'postgres://gateway@db.internal:5432/payments?host=127.0.0.1&port=1' });
    expect(err).toContain('cannot connect to the database at 127.0.0.1:1/payments: the connection was refused (ECONNREFUSED)');
  });

  it.each([
    ['a leading space', ' postgres://gateway:s3cret@db.internal:5432/payments'],
    ['a trailing space and line break', 'postgres://gateway:s3cret@db.internal:5432/payments \r\n'],
  ])('gives pg the URL it checked, without %s (pg would read another host or database)', (_case, url) => {
    expect(databaseTarget(undefined, { DATABASE_URL: url }).url).toBe('postgres://gateway:s3cret@db.internal:5432/payments');
  });

  it.each(['0', '601', '1e3', '99999999999999999999999'])(
    'refuses --connect-timeout %s naming the range 1 to 600 and the text given, quoted',
    async (value) => {
      const { code, err } = await cli(['controls', '--database-url', 'postgres://gateway@127.0.0.1:1/x', '--connect-timeout', value]);
      expect(code).toBe(EXIT.usage);
      expect(err).toContain(`--connect-timeout must be a whole number of seconds from 1 to 600, got "${value}"`);
    },
  );
});

describe('a database host that accepts the connection and stays silent', () => {
  let server: Server;
  let port: number;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('data', () => undefined); // read the start-up message, answer nothing
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('fails the command (exit 1) within the connect timeout, saying it timed out and where', async () => {
    const started = performance.now();
    const { code, err } = await cli(['controls', '--connect-timeout', '1'], {
      DATABASE_URL: `postgres://gateway:s3cret@127.0.0.1:${port}/payments`,
    });
    const elapsed = performance.now() - started;
    expect(code).toBe(EXIT.failed);
    expect(err).toContain(`cannot connect to the database at 127.0.0.1:${port}/payments: no answer within 1 s (the connect timeout`);
    expect(err).not.toContain('s3cret');
    expect(err.trim().split('\n')).toHaveLength(1);
    // The bound is 1 s; 10 s of margin for a loaded machine still tells it from pg's default (no bound).
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(11_000);
  });

  it('closes the silent connection it opened', async () => {
    await cli(['controls', '--connect-timeout', '1'], { DATABASE_URL: `postgres://gateway@127.0.0.1:${port}/payments` });
    for (let tries = 0; sockets.size > 0 && tries < 100; tries += 1) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sockets.size).toBe(0);
  });
});
