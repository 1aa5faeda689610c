/**
 * The command line's own helpers from the issuer kit: no export of package.json reaches them, and
 * only src/cli may import this file (.dependency-cruiser.cjs). Its names are listed in
 * etc/internal-surface.md (kept current by test/package/public-surface.test.ts).
 */
export { makeDirectoryDurably, sweepTemporaries, writeFileDurably } from './durable-file.js';
