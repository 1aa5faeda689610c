/**
 * A recording `node:fs/promises` for crash-safety tests: every fsync, rename and link, in order,
 * with file names only (a UUID shown as `<uuid>`). Use it from the test file's own `vi.mock`:
 * `vi.mock('node:fs/promises', async (original) => (await import('../support/fs-steps.js')).recordingFs(await original()))`.
 */

/** The steps taken since the test last emptied it. */
export const steps: string[] = [];

function base(file: unknown): string | undefined {
  return String(file)
    .split('/')
    .pop()
    ?.replace(/[0-9a-f-]{36}/, '<uuid>');
}

/** `fs` with `open` (its handles' `sync`), `rename` and `link` recorded in {@link steps}. */
export function recordingFs<T extends typeof import('node:fs/promises')>(fs: T): T {
  return {
    ...fs,
    open: async (file: string, flags: string, mode?: number) => {
      const handle = await fs.open(file, flags, mode);
      const sync = handle.sync.bind(handle);
      handle.sync = async () => {
        steps.push(`fsync ${base(file)}`);
        return sync();
      };
      return handle;
    },
    rename: async (from: string, to: string) => {
      steps.push(`rename ${base(from)} ${base(to)}`);
      return fs.rename(from, to);
    },
    link: async (from: string, to: string) => {
      steps.push(`link ${base(from)} ${base(to)}`);
      return fs.link(from, to);
    },
  };
}
