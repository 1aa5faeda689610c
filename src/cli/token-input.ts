/**
 * Where a command gets a token (an argument, a file, or standard input), and how it names one
 * without showing it: a short SHA-256 fingerprint.
 */
import { hex, quote, sha256 } from '../internal/index.js';
import { UsageError } from './command.js';
import { describeFileError } from './file-errors.js';

/** Reads all of standard input. */
export type StdinReader = () => Promise<string>;

/**
 * The most bytes of a token's file or standard input read: far over any token a gateway takes
 * (8192 bytes by default), and small enough that a wrong file or an endless pipe is not read whole.
 */
export const MAX_TOKEN_INPUT_BYTES = 1_048_576;

/**
 * The text of `chunks`, read to their end. `what` names where they come from, in the error.
 * @throws {UsageError} past {@link MAX_TOKEN_INPUT_BYTES}, reading no further.
 */
async function readAtMost(chunks: AsyncIterable<unknown>, what: string): Promise<string> {
  const buffers: Buffer[] = [];
  let length = 0;
  for await (const chunk of chunks) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    length += buffer.length;
    if (length > MAX_TOKEN_INPUT_BYTES) {
      throw new UsageError(
        `${what} holds more than ${MAX_TOKEN_INPUT_BYTES} bytes; a token is at most a few thousand: give the token alone`,
      );
    }
    buffers.push(buffer);
  }
  return Buffer.concat(buffers).toString('utf8');
}

/** Reads `input` (`process.stdin`) to its end, at most {@link MAX_TOKEN_INPUT_BYTES}. */
export function readProcessStdin(input: AsyncIterable<unknown> = process.stdin): Promise<string> {
  return readAtMost(input, 'standard input');
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
  // Where the token came from, to name it when it is empty.
  let source = 'the token argument';
  if (file !== undefined) {
    source = `${fileOption} ${quote(file)}`;
    const { createReadStream } = await import('node:fs');
    try {
      text = await readAtMost(createReadStream(file), `${fileOption} ${quote(file)}`);
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(
        `cannot read ${describeFileError(error, fileOption, file) ?? `${fileOption} ${file}: ${(error as Error).message}`}`,
      );
    }
  } else if (argument === '-' || (argument === undefined && !stdinIsTerminal)) {
    // Read without "-" when standard input is no terminal (a pipe, /dev/null under cron or CI).
    source = argument === '-' ? 'standard input' : 'standard input (read as no token argument was given)';
    text = await stdin();
  } else if (argument !== undefined) text = argument;
  else throw new UsageError(`give a token: as an argument, with ${fileOption} <path>, or on standard input`);
  const token = cleanToken(text);
  if (token === '')
    throw new UsageError(`${source} holds no token (empty): give a token as an argument, with ${fileOption} <path>, or on standard input`);
  return token;
}

/** `sha256:<12 hex digits>`: names a token in output without revealing it. */
export async function fingerprint(token: string): Promise<string> {
  return `sha256:${hex((await sha256(token)).slice(0, 6))}`;
}
