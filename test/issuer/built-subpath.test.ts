/**
 * The built `paygate-auth/issuer` (needs the build: `npm test` runs it first): loads through
 * `import` and `require`, and reaches no framework and no Node built-in at load time, so WebCrypto
 * runtimes (Workers, Deno) can import it; `FileKeyStore` loads `node:fs` only when used.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const EXPORTS = [
  'createIssuer',
  'InMemoryKeyStore',
  'FileKeyStore',
  'IssuerError',
  'KeyStoreError',
  'jwksFetchHandler',
  'jwksNodeHandler',
  'jwksFastifyHandler',
  'DEFAULT_ROTATION',
];
const built = existsSync(resolve(root, 'dist/issuer/index.js'));

/** Specifiers `file` imports statically, through its relative imports. */
async function staticImports(file: string, seen = new Set<string>()): Promise<Set<string>> {
  const found = new Set<string>();
  if (seen.has(file)) return found;
  seen.add(file);
  const source = await readFile(file, 'utf8');
  for (const match of source.matchAll(
    /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g,
  )) {
    const specifier = (match[1] ?? match[2]) as string;
    if (specifier.startsWith('.')) for (const name of await staticImports(resolve(dirname(file), specifier), seen)) found.add(name);
    else found.add(specifier);
  }
  return found;
}

describe.skipIf(!built)('the built paygate-auth/issuer (SKIPPED without a build: run npm test)', () => {
  it('offers its exports through import', async () => {
    const module = (await import(pathToFileURL(resolve(root, 'dist/issuer/index.js')).href)) as Record<string, unknown>;
    expect(Object.keys(module)).toEqual(expect.arrayContaining(EXPORTS));
  });

  it('offers its exports through require', () => {
    const module = createRequire(import.meta.url)(resolve(root, 'dist/issuer/index.cjs')) as Record<string, unknown>;
    expect(Object.keys(module)).toEqual(expect.arrayContaining(EXPORTS));
  });

  it('statically imports only its runtime dependencies: no framework, no Node built-in', async () => {
    const packageOf = (specifier: string): string =>
      specifier
        .split('/')
        .slice(0, specifier.startsWith('@') ? 2 : 1)
        .join('/');
    const packages = new Set([...(await staticImports(resolve(root, 'dist/issuer/index.js')))].map(packageOf));
    expect([...packages].sort()).toEqual(['jose', 'lru-cache']);
  });
});
