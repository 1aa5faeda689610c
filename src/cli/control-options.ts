/**
 * The options of the operator-control commands: `--name value` or `--name=value`, each at most once.
 *
 * @module paygate-auth/cli
 */
import { UsageError } from './command.js';

/**
 * Reads `args` as `--name value` pairs for the `names` allowed, and bare `flags`.
 * @throws {UsageError} for an unknown option, a missing or repeated value, or a stray word.
 */
export function readOptions(args: readonly string[], names: readonly string[], flags: readonly string[] = []): Map<string, string> {
  const found = new Map<string, string>();
  for (let index = 0; index < args.length; index++) {
    const word = args[index] as string;
    const match = /^--([a-z][a-z-]*)(?:=(.*))?$/s.exec(word);
    if (match === null) throw new UsageError(`unexpected argument ${JSON.stringify(word)}`);
    const name = match[1] as string;
    if (!names.includes(name) && !flags.includes(name)) throw new UsageError(`unknown option --${name}`);
    if (found.has(name)) throw new UsageError(`--${name} is given twice`);
    if (flags.includes(name)) {
      if (match[2] !== undefined) throw new UsageError(`--${name} takes no value`);
      found.set(name, 'true');
      continue;
    }
    const value = match[2] ?? args[++index];
    if (value === undefined || value === '' || (match[2] === undefined && value.startsWith('--'))) throw new UsageError(`--${name} needs a value`);
    found.set(name, value);
  }
  return found;
}

/** The value of required option `name`. @throws {UsageError} when it is missing. */
export function required(options: ReadonlyMap<string, string>, name: string): string {
  const value = options.get(name);
  if (value === undefined) throw new UsageError(`--${name} is required`);
  return value;
}
