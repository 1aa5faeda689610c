/**
 * Option parsing for the commands, through Node's `util.parseArgs`: a mistake becomes a
 * {@link UsageError} (exit 2).
 *
 * @module paygate-auth/cli
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from './command.js';

/** The options of one command, as `util.parseArgs` takes them. */
export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/** What was parsed: option values by name, and the positional arguments. */
export interface ParsedOptions {
  readonly values: Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;
  readonly positionals: readonly string[];
}

/** Parses `args` against `options`. @throws {UsageError} for an unknown option or a missing value. */
export function parseOptions(args: readonly string[], options: OptionSpec, maxPositionals: number): ParsedOptions {
  let parsed: ParsedOptions;
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (parsed.positionals.length > maxPositionals) {
    throw new UsageError(`unexpected argument "${parsed.positionals[maxPositionals]}"`);
  }
  return parsed;
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

/** A required string option. @throws {UsageError} naming it. */
export function requiredValue(parsed: ParsedOptions, name: string): string {
  const value = stringValue(parsed, name);
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

/** A whole number of seconds from option `name`, if given. @throws {UsageError} naming it. */
export function secondsValue(parsed: ParsedOptions, name: string): number | undefined {
  const value = stringValue(parsed, name);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) <= 0) throw new UsageError(`--${name} must be a whole number of seconds above 0, got "${value}"`);
  return Number(value);
}
