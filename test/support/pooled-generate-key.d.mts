/** Types of `pooled-generate-key.mjs` (plain JavaScript, so that child processes load it as it stands). */
import type { webcrypto } from 'node:crypto';

export declare function installPooledGenerateKey(nextKey: () => webcrypto.JsonWebKey | undefined): void;

export declare function uninstallPooledGenerateKey(): void;
