/**
 * A file of registry entries, as `doctor --entry` and `issuers import` read it: one entry, or an
 * array of them, in JSON. The entries are returned unchecked: the registry's own rules judge them
 * (see `checkRegistry` in `gateway-check.ts`).
 */
import type { IssuerEntry } from '../index.js';
import { quote } from '../internal/index.js';
import { UsageError } from './command.js';
import { describeFileError } from './file-errors.js';

/**
 * The registry entries of a JSON file (one entry, or an array of them), unchecked.
 * @param label the option that named the file, for errors (`--entry`)
 * @throws {UsageError} when it cannot be read or is not JSON.
 */
export async function readEntries(file: string, label = '--entry'): Promise<IssuerEntry[]> {
  const { readFile } = await import('node:fs/promises');
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    const unreadable = describeFileError(error, label, file);
    if (unreadable !== undefined) throw new UsageError(`cannot read ${unreadable}`);
    throw new UsageError(`${label} ${quote(file)}: ${error instanceof SyntaxError ? 'not JSON' : (error as Error).message}`);
  }
  return (Array.isArray(value) ? value : [value]) as IssuerEntry[];
}
