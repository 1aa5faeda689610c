/**
 * The shape of one `paygate-auth` command-line command, and the streams it writes to.
 */

/** Where a command writes, and what it reads of its environment (injected, so tests need no process). */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** One command: its name, a one-line summary, its `--help` text, and what it does. */
export interface CliCommand {
  /** The word after `paygate-auth` (`migrate`, `doctor`…); a group may use two (`keys generate`). */
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** The whole `--help` text: usage, options, environment, exit codes. */
  readonly help: string;
  /** Runs with the arguments after the name; resolves the process exit code. */
  run(args: readonly string[], io: CliIo): Promise<number>;
}

/** A usage mistake (unknown option, missing value): exit code 2, with the message and a `--help` hint. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'usage' as const;
}
