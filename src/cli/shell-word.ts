/**
 * How a message writes a command for the operator to copy: each value one shell word.
 */
import { quote } from '../internal/index.js';

/**
 * `value` as one shell word for a command to copy: as it is when it holds no character a shell
 * reads, else in single quotes; any other text (a control character, a space) quoted as the
 * package quotes a value, for reading (cut, so no longer a command to copy). Printable ASCII is
 * never cut: the command names the value whole.
 */
export function shellWord(value: string): string {
  if (/^[A-Za-z0-9_./:@%+=,-]+$/.test(value)) return value;
  return /^[\x21-\x7e]+$/.test(value) ? `'${value.replaceAll("'", `'\\''`)}'` : quote(value);
}
