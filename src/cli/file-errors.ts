/**
 * A file that cannot be read or written, in one line naming the file (and the option that named
 * it) and what is wrong, in place of Node's `ENOENT: no such file or directory, open '…'`.
 */
import { quote } from '../internal/index.js';

/** What each error code of the file system means, for the operator. */
const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory, not a file',
  ENOTDIR: 'a part of the path is not a directory',
  EEXIST: 'exists already',
  ENAMETOOLONG: 'the name is too long',
  ELOOP: 'too many symbolic links',
  EMFILE: 'too many open files',
  ENOSPC: 'no space left on the device',
  EROFS: 'the file system is read-only',
};

/** A Node file-system error: its code and the path it was about. */
interface FileSystemError {
  readonly code: string;
  readonly path?: string;
}

/** `true` for an error Node's file system raised (`ENOENT`, `EACCES`…). */
export function isFileSystemError(error: unknown): error is FileSystemError {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) && typeof (error as { syscall?: unknown }).syscall === 'string';
}

/**
 * `error`, when the file system raised it, as one line: `--key "nofile.pem": no such file or
 * directory (ENOENT)`; `undefined` for any other error. `label` names what the file is (an option,
 * usually); the file named is `file`, else the error's own path. When the error is about another
 * path (a directory on the way to `file`), that path is named too.
 */
export function describeFileError(error: unknown, label?: string, file?: string): string | undefined {
  if (!isFileSystemError(error)) return undefined;
  const path = file ?? error.path;
  const named = [label, path === undefined ? undefined : quote(path)].filter((part) => part !== undefined).join(' ');
  const other = error.path !== undefined && error.path !== path ? ` ${quote(error.path)}` : '';
  // A directory on the way that exists (EEXIST from mkdir) is a file where a directory is needed.
  const reason = other !== '' && error.code === 'EEXIST' ? 'exists and is not a directory' : REASONS[error.code];
  return `${named === '' ? 'a file' : named}:${other} ${reason ?? 'cannot be used'} (${error.code})`;
}
