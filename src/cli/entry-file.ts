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
  let text = '';
  try {
    text = await readFile(file, 'utf8');
    value = JSON.parse(text);
  } catch (error) {
    const unreadable = describeFileError(error, label, file);
    if (unreadable !== undefined) throw new UsageError(`cannot read ${unreadable}`);
    if (!(error instanceof SyntaxError)) throw new UsageError(`${label} ${quote(file)}: ${(error as Error).message}`);
    const found = text.trim() === '' ? `empty (${Buffer.byteLength(text)} bytes)` : 'not JSON';
    throw new UsageError(
      `${label} ${quote(file)}: ${found}; give one registry entry, { "issuer", "jwksUri", "products" }, or an array of them, in JSON`,
    );
  }
  return (Array.isArray(value) ? value : [value]) as IssuerEntry[];
}
