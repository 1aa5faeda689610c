/**
 * Option parsing for the commands, through Node's `util.parseArgs`: a mistake becomes a
 * {@link UsageError} (exit 2).
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { nearestName, quote } from '../internal/index.js';
import { UsageError } from './command.js';

/** The options of one command, as `util.parseArgs` takes them. */
export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/** What was parsed: option values by name, and the positional arguments. */
export interface ParsedOptions {
  readonly values: Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;
  readonly positionals: readonly string[];
}

/**
 * Parses `args` against `options`: `--name value` or `--name=value`, a flag with no value, an
 * option given once unless it is `multiple`.
 * @throws {UsageError} for an unknown option, a missing or repeated value, a value on a flag, or
 * more than `maxPositionals` plain arguments.
 */
export function parseOptions(args: readonly string[], options: OptionSpec, maxPositionals: number): ParsedOptions {
  const { values, positionals, tokens } = parseArgs({
    args: [...args],
    options,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  const seen = new Map<string, string | undefined>();
  for (const token of tokens) {
    if (token.kind === 'option') checkOption(token, options, seen);
  }
  if (positionals.length > maxPositionals) {
    throw new UsageError(`unexpected argument ${quote(positionals[maxPositionals] as string)}`);
  }
  return { values, positionals };
}

/** One option as `util.parseArgs` read it, before any check. */
interface OptionToken {
  readonly name: string;
  readonly rawName: string;
  readonly value?: string | undefined;
  readonly inlineValue?: boolean | undefined;
}

/** `unknown option "--databse-url"`, and the option it is nearest to, if any (`did you mean --database-url?`). */
function unknownOption(token: OptionToken, options: OptionSpec): UsageError {
  // `--help` is every command's, answered before its options are parsed (`--hlp` meant it).
  const nearest = token.rawName.startsWith('--') ? nearestName(token.name, [...Object.keys(options), 'help']) : undefined;
  return new UsageError(`unknown option ${quote(token.rawName)}${nearest === undefined ? '' : `: did you mean --${nearest}?`}`);
}

/** `--out is given twice, got "a" and "b": give it once`. */
function givenTwice(name: string, first: string | undefined, second: string | undefined): UsageError {
  const values = first === undefined || second === undefined ? '' : `, got ${quote(first)} and ${quote(second)}`;
  return new UsageError(`--${name} is given twice${values}: give it once`);
}

function checkOption(token: OptionToken, options: OptionSpec, seen: Map<string, string | undefined>): void {
  const { name } = token;
  const spec = Object.hasOwn(options, name) ? options[name] : undefined;
  if (spec === undefined) throw unknownOption(token, options);
  if (seen.has(name) && spec.multiple !== true) throw givenTwice(name, seen.get(name), token.value);
  seen.set(name, token.value);
  if (spec.type === 'boolean') {
    if (token.value !== undefined) throw new UsageError(`--${name} takes no value, got ${quote(token.value)}: give --${name} alone`);
    return;
  }
  const { value } = token;
  if (value === undefined || value === '' || (token.inlineValue !== true && value.startsWith('--'))) {
    throw new UsageError(`--${name} needs a value, got ${value === undefined ? 'none' : quote(value)}: give it as --${name} <value>`);
  }
}

/** A string option's value, if given. */
export function stringValue(parsed: ParsedOptions, name: string): string | undefined {
  const value = parsed.values[name];
  return typeof value === 'string' ? value : undefined;
}

/** A repeatable string option's values (`[]` when not given). */
export function stringValues(parsed: ParsedOptions, name: string): string[] {
  const value = parsed.values[name];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter((item): item is string => typeof item === 'string');
}

/**
 * The refusal of a required option not given: its name, `hint` (when or why it is required:
 * `without --entry`, `(the gateway service the token is for)`), that none was found, then `howTo`.
 */
function missingOption(name: string, hint: string | undefined, howTo: string): UsageError {
  return new UsageError(`--${name} is required${hint === undefined ? '' : ` ${hint}`}, got none: ${howTo}`);
}

/** A required string option. @throws {UsageError} naming it, and `hint` (see {@link requiredValues}). */
export function requiredValue(parsed: ParsedOptions, name: string, hint?: string): string {
  const value = stringValue(parsed, name);
  if (value === undefined || value === '') throw missingOption(name, hint, `give it as --${name} <value>`);
  return value;
}

/**
 * A required repeatable option's values, one or more. @throws {UsageError} naming it, `hint` after
 * the name when given (when or why it is required: `without --entry`), that none was found, and
 * `example` (`pay:processPayments`) as the way to give one.
 */
export function requiredValues(parsed: ParsedOptions, name: string, example: string, hint?: string): string[] {
  const values = stringValues(parsed, name);
  if (values.length === 0) throw missingOption(name, hint, `give it once per value, e.g. --${name} ${example}`);
  return values;
}

/**
 * A library's option refusal (`<owner>: <name>[i] <rule>`, a `TypeError`) as the usage mistake it
 * is on the command line: the flag `flags` gives for `<name>`, then the rule with the value found.
 * `undefined` for any other error, or an option that no flag gives.
 */
export function flagMistake(error: unknown, owner: string, flags: Readonly<Record<string, string>>): UsageError | undefined {
  if (!(error instanceof TypeError) || !error.message.startsWith(`${owner}: `)) return undefined;
  const match = /^(\w+)(?:\[\d+\])? (.*)$/s.exec(error.message.slice(owner.length + 2));
  const flag = match === null ? undefined : flags[match[1] as string];
  return flag === undefined ? undefined : new UsageError(`${flag} ${(match as RegExpExecArray)[2]}`);
}

/**
 * A whole number of seconds from option `name`, if given: above 0, and at most `max` when given.
 * @throws {UsageError} naming it, the range and the value found.
 */
export function secondsValue(parsed: ParsedOptions, name: string, max?: number): number | undefined {
  const value = stringValue(parsed, name);
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (!/^\d+$/.test(value) || seconds <= 0 || (max !== undefined && seconds > max)) {
    const range = max === undefined ? 'above 0' : `from 1 to ${max}`;
    throw new UsageError(`--${name} must be a whole number of seconds ${range}, got ${quote(value)}`);
  }
  return seconds;
}
