/**
 * The command line's dispatcher: picks the command named by the first words, answers `--help`,
 * and turns failures into exit codes (0 done, 1 the command failed, 2 a usage mistake).
 */
import { type CliCommand, type CliIo, UsageError } from './command.js';

/** Exit codes shared by every command. */
export const EXIT = Object.freeze({ ok: 0, failed: 1, usage: 2 } as const);

function isHelp(word: string | undefined): boolean {
  return word === '--help' || word === '-h' || word === 'help';
}

function listing(commands: readonly CliCommand[]): string {
  const width = Math.max(0, ...commands.map((command) => command.name.length));
  const lines = commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`);
  return [
    'Usage: paygate-auth <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Run "paygate-auth <command> --help" for a command\'s options.',
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

/** Runs the command line `args` (without `node` and the script); resolves the exit code. */
export async function runCli(args: readonly string[], io: CliIo, commands: readonly CliCommand[]): Promise<number> {
  if (args.length === 0 || isHelp(args[0])) {
    (args.length === 0 ? io.stderr : io.stdout)(listing(commands));
    return args.length === 0 ? EXIT.usage : EXIT.ok;
  }
  const found = find(commands, args);
  if (found === undefined) {
    io.stderr(`paygate-auth: unknown command "${args.slice(0, 2).join(' ')}".\n\n${listing(commands)}`);
    return EXIT.usage;
  }
  const { command, rest } = found;
  if (rest.some(isHelp)) {
    io.stdout(command.help.endsWith('\n') ? command.help : `${command.help}\n`);
    return EXIT.ok;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`paygate-auth ${command.name}: ${error.message}\nRun "paygate-auth ${command.name} --help" for its options.\n`);
      return EXIT.usage;
    }
    io.stderr(`paygate-auth ${command.name}: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT.failed;
  }
}
