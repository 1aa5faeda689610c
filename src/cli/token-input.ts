/**
 * Where a command gets a token (an argument, a file, or standard input), and how it names one
 * without showing it: a short SHA-256 fingerprint.
 */
import { hex, sha256 } from '../internal/index.js';
import { UsageError } from './command.js';
import { describeFileError } from './file-errors.js';

/** Reads all of standard input. */
export type StdinReader = () => Promise<string>;

/** Reads `process.stdin` to its end. */
export async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** The token of `text`: surrounding white space and a leading `Bearer ` removed. */
export function cleanToken(text: string): string {
  const trimmed = text.trim();
  return /^bearer\s+/i.test(trimmed) ? trimmed.replace(/^bearer\s+/i, '') : trimmed;
}

/**
 * The token from the positional `argument` (`-` for standard input) or `file`; standard input
 * when neither is given and it is not a terminal. `fileOption` names the file's option in errors.
 * @throws {UsageError} when there is none, or both are given.
 */
export async function readToken(
  argument: string | undefined,
  file: string | undefined,
  stdin: StdinReader,
  stdinIsTerminal: boolean,
  fileOption = '--token-file',
): Promise<string> {
  if (argument !== undefined && file !== undefined) throw new UsageError(`give the token as an argument or with ${fileOption}, not both`);
  let text: string;
  if (file !== undefined) {
    const { readFile } = await import('node:fs/promises');
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new UsageError(
        `cannot read ${describeFileError(error, fileOption, file) ?? `${fileOption} ${file}: ${(error as Error).message}`}`,
      );
    }
  } else if (argument === '-' || (argument === undefined && !stdinIsTerminal)) text = await stdin();
  else if (argument !== undefined) text = argument;
  else throw new UsageError('give a token: as an argument, with --token-file <path>, or on standard input');
  const token = cleanToken(text);
  if (token === '') throw new UsageError('the token is empty');
  return token;
}

/** `sha256:<12 hex digits>`: names a token in output without revealing it. */
export async function fingerprint(token: string): Promise<string> {
  return `sha256:${hex((await sha256(token)).slice(0, 6))}`;
}
