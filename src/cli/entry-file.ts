/**
 * A file of registry entries, as `doctor --entry` and `issuers import` read it: one entry, or an
 * array of them, in JSON. The entries are returned unchecked: the registry's own rules judge them
 * (see `checkRegistry` in `gateway-check.ts`).
 */
import type { IssuerEntry } from '../index.js';
import { UsageError } from './command.js';

/**
 * The registry entries of a JSON file (one entry, or an array of them), unchecked.
 * @param label how the file is named in an error (`--entry <file>`)
 * @throws {UsageError} when it cannot be read or is not JSON.
 */
export async function readEntries(file: string, label = `--entry ${file}`): Promise<IssuerEntry[]> {
  const { readFile } = await import('node:fs/promises');
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new UsageError(`${label}: ${error instanceof SyntaxError ? 'not JSON' : (error as Error).message}`);
  }
  return (Array.isArray(value) ? value : [value]) as IssuerEntry[];
}
