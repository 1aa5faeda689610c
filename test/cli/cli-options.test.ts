/**
 * `parseOptions`: the arguments a usage mistake names are command-line text, which a script may
 * pass on from anywhere: each is quoted as one escaped line, cut, never written raw.
 */
import { describe, expect, it } from 'vitest';
import { parseOptions, requiredValue, requiredValues } from '../../src/cli/cli-options.js';
import { UsageError } from '../../src/cli/command.js';

/** A line break, an escape sequence that clears a terminal, and a forged second line, made long. */
const HOSTILE = `x\n\u001b[2Jpaygate-auth: all done${'y'.repeat(500)}`;

function mistake(args: readonly string[]): UsageError {
  try {
    parseOptions(args, { out: { type: 'string' } }, 0);
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error('parseOptions accepted the arguments');
}

describe('parseOptions naming hostile arguments', () => {
  it('quotes an unknown option as one escaped line, cut (attack: an option name that forges lines)', () => {
    const { message } = mistake([`--${HOSTILE}`]);
    expect(message).toContain('unknown option "--x\\u000a\\u001b[2Jpaygate-auth: all done');
    expect(message).not.toMatch(/[\n\u001b]/);
    expect(message.length).toBeLessThan(200);
  });

  it('quotes an unexpected argument as one escaped line, cut (attack: an argument that forges lines)', () => {
    const { message } = mistake([HOSTILE]);
    expect(message).toContain('unexpected argument "x\\u000a\\u001b[2Jpaygate-auth: all done');
    expect(message).not.toMatch(/[\n\u001b]/);
    expect(message.length).toBeLessThan(200);
  });
});

describe('parseOptions naming the value of a misused option', () => {
  it('names the value given to an option that takes none', () => {
    expect(() => parseOptions(['--dry-run=yes'], { 'dry-run': { type: 'boolean' } }, 0)).toThrow(/--dry-run takes no value, got "yes"/);
  });

  it('names the option taken for the value of one that needs a value', () => {
    expect(() => parseOptions(['--out', '--force'], { out: { type: 'string' }, force: { type: 'boolean' } }, 0)).toThrow(
      /--out needs a value, got "--force"/,
    );
  });

  it('says it got none when an option that needs a value ends the line', () => {
    expect(mistake(['--out']).message).toMatch(/--out needs a value, got none/);
  });
});

describe('parseOptions saying what to give', () => {
  const DATABASE = { 'database-url': { type: 'string' }, 'connect-timeout': { type: 'string' } } as const;

  /** The message of the `UsageError` that `run` throws. */
  function usageMessage(run: () => unknown): string {
    try {
      run();
    } catch (error) {
      if (error instanceof UsageError) return error.message;
      throw error;
    }
    throw new Error('no UsageError was thrown');
  }

  it('names the nearest option when an unknown one is misspelt', () => {
    const message = usageMessage(() => parseOptions(['--databse-url', 'postgres://db/x'], DATABASE, 0));
    expect(message).toMatch(/^unknown option "--databse-url"/);
    expect(message).toContain('did you mean --database-url?');
  });

  it.each(['--hlp', '--hepl', '--Help'])('names --help, which every command takes, for %s', (option) => {
    expect(usageMessage(() => parseOptions([option], DATABASE, 0))).toBe(`unknown option "${option}": did you mean --help?`);
  });

  it.each(['--constructor', '--toString', '--__proto__'])('refuses %s, a member of every object, as an unknown option', (option) => {
    expect(usageMessage(() => parseOptions([option, 'x'], DATABASE, 0))).toMatch(/^unknown option "--/);
  });

  it('names no option when an unknown one is near none', () => {
    expect(usageMessage(() => parseOptions(['--bogus'], DATABASE, 0))).toBe('unknown option "--bogus"');
  });

  it('names both values of an option given twice, and says to give it once', () => {
    const message = usageMessage(() => parseOptions(['--database-url', 'postgres://a/x', '--database-url=postgres://b/x'], DATABASE, 0));
    expect(message).toMatch(/^--database-url is given twice/);
    expect(message).toContain('"postgres://a/x"');
    expect(message).toContain('"postgres://b/x"');
    expect(message).toContain('give it once');
  });

  it('says it got none, and how to give it, when a required option is missing', () => {
    const message = usageMessage(() => requiredValue(parseOptions([], DATABASE, 0), 'database-url'));
    expect(message).toMatch(/^--database-url is required, got none/);
    expect(message).toContain('--database-url <value>');
  });

  it('says when a required option is required, before that it got none and an example', () => {
    const message = usageMessage(() =>
      requiredValues(parseOptions([], { product: { type: 'string', multiple: true } }, 0), 'product', 'acme', 'without --entry'),
    );
    expect(message).toMatch(/^--product is required without --entry, /);
    expect(message).toContain('got none');
    expect(message).toContain('--product acme');
  });
});
