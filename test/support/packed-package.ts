/**
 * The one `npm pack` of the test run, made by test/support/pack-once.ts (vitest `globalSetup`).
 */
import { inject } from 'vitest';

/** What the shared pack holds. */
export interface PackedPackage {
  /** The `.tgz`. */
  readonly tarball: string;
  /** The tarball extracted: its `package/` directory. */
  readonly unpacked: string;
  /** Every file path in the tarball, relative to the package root. */
  readonly files: readonly string[];
}

declare module 'vitest' {
  export interface ProvidedContext {
    packedPackage: PackedPackage | null;
  }
}

/** The shared pack, or `null` when the run has no such global set-up (as in `npm run test:unit`). */
export function packedPackage(): PackedPackage | null {
  return inject('packedPackage') ?? null;
}
