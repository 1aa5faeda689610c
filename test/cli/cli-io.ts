/** A captured `CliIo`: what a command wrote, joined. */
import type { CliIo } from '../../src/cli/command.js';

export interface CapturedIo extends CliIo {
  readonly out: () => string;
  readonly err: () => string;
}

export function captureIo(): CapturedIo {
  const out: string[] = [];
  const err: string[] = [];
  return {
    env: {},
    stdout: (text) => void out.push(text),
    stderr: (text) => void err.push(text),
    out: () => out.join(''),
    err: () => err.join(''),
  };
}
