import { describe, expect, it } from 'vitest';
import { type CliCommand, type CliIo, UsageError } from '../../src/cli/command.js';
import { COMMANDS as ALL_COMMANDS } from '../../src/cli/commands.js';
import { EXIT, runCli } from '../../src/cli/run-cli.js';

function capture(): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, env: {}, stdout: (text) => out.push(text), stderr: (text) => err.push(text) };
}

/** A line break, an escape sequence that clears a terminal, and a forged second line, made long. */
const HOSTILE = `x\n\u001b[2Jpaygate-auth: all done${'y'.repeat(500)}`;

const ran: (readonly string[])[] = [];
const COMMANDS: readonly CliCommand[] = [
  {
    name: 'keys generate',
    summary: 'make a key',
    help: 'Usage: paygate-auth keys generate',
    run: async (args) => {
      ran.push(args);
      return EXIT.ok;
    },
  },
  {
    name: 'fail',
    summary: 'always fails',
    help: 'Usage: paygate-auth fail',
    run: async () => {
      throw new Error('the database is unreachable');
    },
  },
  {
    name: 'forge',
    summary: 'fails with a message of many lines',
    help: 'Usage: paygate-auth forge',
    run: async () => {
      throw new Error(`the server says: ${HOSTILE}\n${'z'.repeat(5000)}`);
    },
  },
  {
    name: 'strict',
    summary: 'takes no options',
    help: 'Usage: paygate-auth strict',
    run: async (args) => {
      throw new UsageError(`unknown option ${args[0]}`);
    },
  },
];

describe('runCli', () => {
  it('lists the commands on stdout for --help and exits 0', async () => {
    const io = capture();
    expect(await runCli(['--help'], io, COMMANDS)).toBe(EXIT.ok);
    expect(io.out.join('')).toContain('keys generate  make a key');
  });

  it('lists the commands on stderr and exits 2 when no command is given', async () => {
    const io = capture();
    expect(await runCli([], io, COMMANDS)).toBe(EXIT.usage);
    expect(io.err.join('')).toContain('Commands:');
  });

  it('names an unknown command and exits 2', async () => {
    const io = capture();
    expect(await runCli(['nope'], io, COMMANDS)).toBe(EXIT.usage);
    expect(io.err.join('')).toContain('unknown command "nope"');
  });

  it('names the nearest command when an unknown one is misspelt', async () => {
    const io = capture();
    expect(await runCli(['strcit'], io, COMMANDS)).toBe(EXIT.usage);
    expect(io.err.join('')).toContain('unknown command "strcit"');
    expect(io.err.join('')).toMatch(/did you mean "strict"\?\n/);
  });

  it('names the nearest two-word command when its first word is misspelt', async () => {
    const io = capture();
    expect(await runCli(['kyes', 'generate'], io, COMMANDS)).toBe(EXIT.usage);
    expect(io.err.join('')).toContain('unknown command "kyes generate"');
    expect(io.err.join('')).toMatch(/did you mean "keys generate"\?\n/);
  });

  it('names the nearest command of a group when one is misspelt, and none far from every one', async () => {
    const near = capture();
    expect(await runCli(['keys', 'generat'], near, COMMANDS)).toBe(EXIT.usage);
    expect(near.err.join('')).toContain('unknown command "keys generat"');
    expect(near.err.join('')).toContain('did you mean "keys generate"?');
    const far = capture();
    expect(await runCli(['keys', 'rotate'], far, COMMANDS)).toBe(EXIT.usage);
    expect(far.err.join('')).not.toContain('did you mean');
  });

  it.each(['--verison', 'version', '--vesrion'])('names --version when %s is given for it, and exits 2', async (typed) => {
    const io = capture();
    expect(await runCli([typed], io, COMMANDS)).toBe(EXIT.usage);
    expect(io.err.join('')).toContain(`unknown command "${typed}": did you mean "--version"?`);
  });

  it('names "controls compact" for "controls compct" and runs nothing (exit 2), not an unexpected argument of controls', async () => {
    const io = capture();
    expect(await runCli(['controls', 'compct'], io, ALL_COMMANDS)).toBe(EXIT.usage);
    expect(io.err.join('')).toContain('unknown command "controls compct": did you mean "controls compact"?');
    expect(io.err.join('')).toContain('Commands of "controls":');
  });

  it('names an unknown command as typed when help comes first', async () => {
    const io = capture();
    expect(await runCli(['--help', 'nope'], io, COMMANDS)).toBe(EXIT.usage);
    expect(io.err.join('')).toContain('unknown command "nope".');
  });

  it('runs a two-word command with the arguments after its name', async () => {
    ran.length = 0;
    expect(await runCli(['keys', 'generate', '--kid', 'k1'], capture(), COMMANDS)).toBe(EXIT.ok);
    expect(ran).toEqual([['--kid', 'k1']]);
  });

  it("prints a command's own help for --help anywhere after its name", async () => {
    const io = capture();
    expect(await runCli(['keys', 'generate', '--kid', 'k1', '--help'], io, COMMANDS)).toBe(EXIT.ok);
    expect(io.out.join('')).toBe('Usage: paygate-auth keys generate\n');
  });

  it('runs a command given "help" as a value or a later argument, and prints its help for "help" first', async () => {
    ran.length = 0;
    expect(await runCli(['keys', 'generate', '--kid', 'help'], capture(), COMMANDS)).toBe(EXIT.ok);
    expect(ran).toEqual([['--kid', 'help']]);
    const io = capture();
    expect(await runCli(['keys', 'generate', 'help'], io, COMMANDS)).toBe(EXIT.ok);
    expect(io.out.join('')).toBe('Usage: paygate-auth keys generate\n');
  });

  it('reports a usage mistake with a --help hint and exits 2', async () => {
    const io = capture();
    expect(await runCli(['strict', '--bogus'], io, COMMANDS)).toBe(EXIT.usage);
    expect(io.err.join('')).toBe('paygate-auth strict: unknown option --bogus\nRun "paygate-auth strict --help" for its options.\n');
  });

  it("reports a failure whose message holds line breaks as one escaped line, cut (attack: a server's message forging lines)", async () => {
    const io = capture();
    expect(await runCli(['forge'], io, COMMANDS)).toBe(EXIT.failed);
    const err = io.err.join('');
    expect(err).toMatch(/^paygate-auth forge: the server says: x\\u000a\\u001b\[2Jpaygate-auth: all done/);
    expect(err.indexOf('\n')).toBe(err.length - 1);
    expect(err).not.toContain('\u001b');
    expect(err.length).toBeLessThan(1100);
  });

  it("reports a command's failure by its message and exits 1", async () => {
    const io = capture();
    expect(await runCli(['fail'], io, COMMANDS)).toBe(EXIT.failed);
    expect(io.err.join('')).toBe('paygate-auth fail: the database is unreachable\n');
  });
});

describe('runCli: --json output on failure', () => {
  /** A command taking --json that writes `written` (if any), then fails with `error`. */
  function jsonCommand(error: Error, written?: string): CliCommand {
    return {
      name: 'listing',
      summary: 'lists',
      help: 'Usage: paygate-auth listing [--json]',
      run: async (_args, io) => {
        if (written !== undefined) io.stdout(written);
        throw error;
      },
    };
  }

  it('writes one JSON document on stdout for a failure under --json: the error code, the exit code and the message (exit 1)', async () => {
    const io = capture();
    const failure = Object.assign(new Error('issuer "x" is not registered'), { code: 'issuer_not_registered' });
    expect(await runCli(['listing', '--json'], io, [jsonCommand(failure)])).toBe(EXIT.failed);
    expect(JSON.parse(io.out.join(''))).toEqual({
      error: { code: 'issuer_not_registered', exit: 1, message: 'issuer "x" is not registered' },
    });
    expect(io.err.join('')).toBe('paygate-auth listing: issuer "x" is not registered\n');
  });

  it('writes the JSON document for a usage mistake under --json too, code "usage" (exit 2)', async () => {
    const io = capture();
    expect(await runCli(['listing', '--json'], io, [jsonCommand(new UsageError('unknown option "--bogus"'))])).toBe(EXIT.usage);
    expect(JSON.parse(io.out.join(''))).toMatchObject({ error: { code: 'usage', exit: 2 } });
  });

  it('names a code that is no stable code (a SQLSTATE) "failed"', async () => {
    const io = capture();
    await runCli(['listing', '--json'], io, [jsonCommand(Object.assign(new Error('relation missing'), { code: '42P01' }))]);
    expect(JSON.parse(io.out.join(''))).toMatchObject({ error: { code: 'failed', exit: 1 } });
  });

  it('adds no second document after a result already written, nor any without --json', async () => {
    const after = capture();
    await runCli(['listing', '--json'], after, [jsonCommand(new Error('lost'), '{"done":true}\n')]);
    expect(after.out.join('')).toBe('{"done":true}\n');
    const text = capture();
    await runCli(['listing'], text, [jsonCommand(new Error('lost'))]);
    expect(text.out).toEqual([]);
  });

  it('writes the JSON document for a misspelt command of a group under --json (controls compct --json, exit 2)', async () => {
    const io = capture();
    expect(await runCli(['controls', 'compct', '--json'], io, ALL_COMMANDS)).toBe(EXIT.usage);
    expect(JSON.parse(io.out.join(''))).toMatchObject({ error: { code: 'usage', exit: 2 } });
  });

  it('controls --json writes valid JSON on stdout when the database refuses the connection', async () => {
    const io = { ...capture(), env: { DATABASE_URL: 'postgres://gateway:s3cret@127.0.0.1:1/payments' } };
    expect(await runCli(['controls', '--json'], io, ALL_COMMANDS)).toBe(EXIT.failed);
    const { error } = JSON.parse(io.out.join('')) as { error: { code: string; message: string } };
    expect(error.code).toBe('failed');
    expect(error.message).toContain('cannot connect to the database at 127.0.0.1:1/payments');
    expect(io.out.join('')).not.toContain('s3cret');
  });
});

describe('runCli: the version and the groups of commands', () => {
  it.each(['--version', '-v'])('prints the version of package.json for %s and exits 0', async (flag) => {
    const { version } = (await import('../../package.json')) as { version: string };
    const io = capture();
    expect(await runCli([flag], io, COMMANDS)).toBe(EXIT.ok);
    expect(io.out.join('')).toBe(`${version}\n`);
  });

  it("lists a group's commands on stderr and exits 2 when the group is named alone", async () => {
    const io = capture();
    expect(await runCli(['keys'], io, COMMANDS)).toBe(EXIT.usage);
    expect(io.err.join('')).toContain('keys generate  make a key');
    expect(io.err.join('')).not.toContain('unknown command');
  });

  it.each([['--help'], ['-h'], ['help']])("lists a group's commands on stdout for keys %s and exits 0", async (flag) => {
    const io = capture();
    expect(await runCli(['keys', flag], io, COMMANDS)).toBe(EXIT.ok);
    expect(io.out.join('')).toContain('keys generate  make a key');
  });

  it('answers "help keys" as "keys --help"', async () => {
    const io = capture();
    expect(await runCli(['help', 'keys'], io, COMMANDS)).toBe(EXIT.ok);
    expect(io.out.join('')).toContain('keys generate  make a key');
  });

  it("names an unknown command of a group and lists the group's commands", async () => {
    const io = capture();
    expect(await runCli(['keys', 'rotate'], io, COMMANDS)).toBe(EXIT.usage);
    expect(io.err.join('')).toContain('unknown command "keys rotate"');
    expect(io.err.join('')).toContain('keys generate  make a key');
  });

  it.each([
    ['command', [HOSTILE]],
    ['command of a group', ['keys', HOSTILE]],
  ])('quotes an unknown %s as one escaped line, cut (attack: an argument that forges lines)', async (_what, args) => {
    const io = capture();
    expect(await runCli(args, io, COMMANDS)).toBe(EXIT.usage);
    const [first = ''] = io.err.join('').split('\n');
    expect(first).toContain('x\\u000a\\u001b[2Jpaygate-auth: all done');
    expect(first).not.toContain('\u001b');
    expect(first.length).toBeLessThan(200);
  });

  it('reports a file error as one line naming the file, never a stack trace', async () => {
    const { readFile } = await import('node:fs/promises');
    const io = capture();
    const reading: CliCommand = {
      name: 'read',
      summary: 'reads',
      help: 'Usage: read',
      run: async () => {
        await readFile('nofile.pem');
        return EXIT.ok;
      },
    };
    expect(await runCli(['read'], io, [reading])).toBe(EXIT.failed);
    expect(io.err.join('')).toBe('paygate-auth read: "nofile.pem": no such file or directory (ENOENT)\n');
  });
});
