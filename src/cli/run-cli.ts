/**
 * The command line's dispatcher: picks the command named by the first words, answers `--help`
 * (for the whole command line, a group of commands such as `issuers`, or one command) and
 * `--version`, and turns failures into exit codes (0 done, 1 the command failed, 2 a usage
 * mistake). A failure is one line on standard error, never a stack trace.
 */
import { capHint, nearestName, oneLineJson, quote } from '../internal/index.js';
import { type CliCommand, type CliIo, UsageError } from './command.js';
import { describeFileError } from './file-errors.js';
import { VERSION } from './version.js';

/** Exit codes shared by every command. */
export const EXIT = Object.freeze({ ok: 0, failed: 1, usage: 2 } as const);

function isHelp(word: string | undefined): boolean {
  return word === '--help' || word === '-h' || word === 'help';
}

/**
 * `true` when `rest`, the words after a command's name, ask for its help: `--help` or `-h`
 * anywhere, `help` as the first word. A later `help` is an option's value or an argument
 * (`--tenant-name help`), and the command runs with it.
 */
function asksCommandHelp(rest: readonly string[]): boolean {
  return rest[0] === 'help' || rest.some((word) => word === '--help' || word === '-h');
}

function isVersion(word: string | undefined): boolean {
  return word === '--version' || word === '-v';
}

function commandLines(commands: readonly CliCommand[]): string[] {
  const width = Math.max(0, ...commands.map((command) => command.name.length));
  return commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`);
}

function listing(commands: readonly CliCommand[]): string {
  return [
    'Usage: paygate-auth <command> [options]',
    '',
    'Commands:',
    ...commandLines(commands),
    '',
    'Run "paygate-auth <command> --help" for a command\'s options, "paygate-auth --version" for the version.',
    '',
  ].join('\n');
}

/** The commands of group `word` (`issuers`, `keys`…): those whose name is `word` and one more word. */
function groupOf(commands: readonly CliCommand[], word: string | undefined): readonly CliCommand[] {
  return word === undefined ? [] : commands.filter((command) => command.name.startsWith(`${word} `));
}

function groupListing(word: string, group: readonly CliCommand[]): string {
  return [
    `Usage: paygate-auth ${word} <command> [options]`,
    '',
    `Commands of "${word}":`,
    ...commandLines(group),
    '',
    `Run "paygate-auth ${word} <command> --help" for a command's options.`,
    '',
  ].join('\n');
}

/** The command whose (one- or two-word) name starts `args`, longest name first. */
function find(commands: readonly CliCommand[], args: readonly string[]): { command: CliCommand; rest: readonly string[] } | undefined {
  const two = args.slice(0, 2).join(' ');
  const byTwo = commands.find((command) => command.name === two);
  if (byTwo !== undefined) return { command: byTwo, rest: args.slice(2) };
  const byOne = commands.find((command) => command.name === args[0]);
  return byOne === undefined ? undefined : { command: byOne, rest: args.slice(1) };
}

/** `command`'s help, and the commands of the group it names, if any (`controls`, `controls compact`). */
function helpOf(command: CliCommand, commands: readonly CliCommand[]): string {
  const help = command.help.endsWith('\n') ? command.help : `${command.help}\n`;
  const group = groupOf(commands, command.name);
  return group.length === 0 ? help : `${help}\nMore commands of "${command.name}":\n${commandLines(group).join('\n')}\n`;
}

/** Answers a group's name alone (to stderr, exit 2) or with `--help` (to stdout, exit 0), or names an unknown command of it. */
function answerGroup(args: readonly string[], io: CliIo, word: string, group: readonly CliCommand[]): number {
  const [, next] = args;
  if (next === undefined) {
    io.stderr(groupListing(word, group));
    return EXIT.usage;
  }
  if (isHelp(next)) {
    io.stdout(groupListing(word, group));
    return EXIT.ok;
  }
  const nearest = nearestName(
    next,
    group.map((command) => command.name.slice(word.length + 1)),
  );
  io.stderr(`paygate-auth: unknown command ${quote(`${word} ${next}`)}${meant(nearest, `${word} `)}\n\n${groupListing(word, group)}`);
  return EXIT.usage;
}

/**
 * The command of `command`'s group (`controls compact` of `controls`) that `rest`'s first word
 * misspells (`compct`), if any: such a word is no argument of `command`, which takes none.
 */
function misspeltSubcommand(command: CliCommand, rest: readonly string[], commands: readonly CliCommand[]): string | undefined {
  const [word] = rest;
  const group = groupOf(commands, command.name);
  if (word === undefined || word.startsWith('-') || group.length === 0) return undefined;
  return nearestName(
    word,
    group.map((member) => member.name.slice(command.name.length + 1)),
  );
}

/** `: did you mean "keys generate"?` for the command `nearest` names, else the end of the sentence. */
function meant(nearest: string | undefined, group = ''): string {
  return nearest === undefined ? '.' : `: did you mean ${quote(`${group}${nearest}`)}?`;
}

/**
 * A failure as the one line printed for it: a file error names its file; anything else its
 * message, cut and escaped (a database's, a key store's or a network's message may hold anything).
 */
function failureLine(error: unknown): string {
  return describeFileError(error) ?? capHint(error instanceof Error ? error.message : String(error));
}

/** Runs the command line `args` (without `node` and the script); resolves the exit code. */
export async function runCli(args: readonly string[], io: CliIo, commands: readonly CliCommand[]): Promise<number> {
  const [first] = args;
  if (args.length === 0) {
    io.stderr(listing(commands));
    return EXIT.usage;
  }
  if (isVersion(first) && args.length === 1) {
    io.stdout(`${VERSION}\n`);
    return EXIT.ok;
  }
  // `paygate-auth help issuers` is `paygate-auth issuers --help`.
  if (isHelp(first)) {
    if (args.length === 1 || isHelp(args[1])) {
      io.stdout(listing(commands));
      return EXIT.ok;
    }
    return runCli([...args.slice(1), '--help'], io, commands);
  }
  const found = find(commands, args);
  if (found === undefined) {
    const group = groupOf(commands, first);
    if (first !== undefined && group.length > 0) return answerGroup(args, io, first, group);
    // The command as typed: `help extra` asked for `extra --help`, but the user typed `extra`.
    const typed = args.slice(0, 2).filter((arg) => !isHelp(arg));
    // `--verison`, `version` and `-V` meant `--version` (as `--hlp` meant `--help`).
    const words = new Set([...commands.map((command) => command.name.split(' ')[0] as string), '--help', '--version']);
    const word = typed[0] === undefined ? undefined : nearestName(typed[0], words);
    // `isuers list` meant `issuers list`, when that is a command.
    const whole = `${word} ${typed[1]}`;
    const nearest = word !== undefined && commands.some((command) => command.name === whole) ? whole : word;
    io.stderr(`paygate-auth: unknown command ${quote(typed.join(' '))}${meant(nearest)}\n\n${listing(commands)}`);
    return EXIT.usage;
  }
  const { command, rest } = found;
  if (asksCommandHelp(rest)) {
    io.stdout(helpOf(command, commands));
    return EXIT.ok;
  }
  // `controls compct` meant `controls compact`: a command that is a group's name too.
  const sub = misspeltSubcommand(command, rest, commands);
  if (sub !== undefined) {
    const line = `unknown command ${quote(`${command.name} ${rest[0]}`)}${meant(sub, `${command.name} `)}`;
    io.stderr(`paygate-auth: ${line}\n\n${groupListing(command.name, groupOf(commands, command.name))}`);
    // A script reading --json gets its JSON document for this usage mistake too.
    if (asksJson(command, rest)) io.stdout(`${jsonFailure(new UsageError(line), EXIT.usage, line)}\n`);
    return EXIT.usage;
  }
  // Whether the command wrote its result: a failure after it adds no second JSON document.
  let wrote = false;
  const watched: CliIo = {
    ...io,
    stdout: (text) => {
      wrote = true;
      io.stdout(text);
    },
  };
  try {
    return await command.run(rest, watched);
  } catch (error) {
    const usage = error instanceof UsageError;
    const line = usage ? error.message : failureLine(error);
    io.stderr(`paygate-auth ${command.name}: ${line}\n${usage ? `Run "paygate-auth ${command.name} --help" for its options.\n` : ''}`);
    const code = usage ? EXIT.usage : EXIT.failed;
    if (!wrote && asksJson(command, rest)) io.stdout(`${jsonFailure(error, code, line)}\n`);
    return code;
  }
}

/** `true` when `rest` gives `--json` to a command that takes it: its standard output is JSON. */
function asksJson(command: CliCommand, rest: readonly string[]): boolean {
  return rest.includes('--json') && command.help.includes('--json');
}

/**
 * A failure as the JSON a script reading `--json` output gets on standard output (the line on
 * standard error stays): `{"error":{"code","exit","message"}}`. The code is the error's stable
 * `code` (`usage`, `issuer_not_registered`…), else `failed`.
 */
function jsonFailure(error: unknown, exit: number, message: string): string {
  const own = (error as { code?: unknown } | null)?.code;
  const code = typeof own === 'string' && /^[a-z][a-z_]{0,63}$/.test(own) ? own : 'failed';
  return oneLineJson({ error: { code, exit, message } });
}
