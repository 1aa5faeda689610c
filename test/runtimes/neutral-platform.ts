/**
 * The neutral-platform check: each entry meant for Web runtimes is bundled by esbuild for
 * `platform: 'neutral'` (no Node conditions, no Node built-ins), as a consumer that imports all of
 * it but the named Node-only exports would bundle it, and every Node built-in left in the bundle is
 * reported. A static import of one fails the entry; so does a dynamic one, unless that entry
 * allows it because only a Node-only path reaches it when called.
 */
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { type Plugin, build } from 'esbuild';

/** An entry of `package.json#exports` that must load on a Web runtime. */
export interface WebEntry {
  /** The subpath: `.`, `./fetch`… */
  readonly subpath: string;
  /** Exports left out of the consumer's import (Node-only ones). */
  readonly without?: readonly string[];
  /** Built-ins the bundle may import dynamically, each with why no Web path reaches it. */
  readonly lazy?: Readonly<Record<string, string>>;
}

/** A built-in the bundle of an entry imports. */
export interface BuiltinImport {
  readonly subpath: string;
  /** As written, with `node:` or without. */
  readonly builtin: string;
  /** esbuild's kind: `import-statement`, `dynamic-import`, `require-call`… */
  readonly kind: string;
}

/**
 * Dynamic imports any entry may keep: lru-cache's default build probes
 * `node:diagnostics_channel` when loaded, and catches the failure where there is none.
 */
const ALLOWED_EVERYWHERE: Readonly<Record<string, string>> = {
  'node:diagnostics_channel': "lru-cache's optional metrics channel, its failure caught",
};

/** The Web entries of this package, and what each may keep. */
export const WEB_ENTRIES: readonly WebEntry[] = [
  { subpath: '.' },
  { subpath: './fetch' },
  { subpath: './hono' },
  { subpath: './issuer', without: ['FileKeyStore', 'generateKeyFile', 'readPrivateKeyFile'] },
  {
    subpath: './testing',
    without: ['serveJwks'],
    lazy: { 'node:http': "issuer.listen()'s loopback server, loaded when called" },
  },
];

const BUILTINS: ReadonlySet<string> = new Set(builtinModules.map((name) => (name.startsWith('node:') ? name.slice(5) : name)));

function isBuiltin(specifier: string): boolean {
  if (specifier.startsWith('node:')) return true;
  return BUILTINS.has(specifier) || BUILTINS.has(specifier.split('/')[0] ?? '');
}

/** Marks built-ins (and the optional peers, loaded when present) external, so that the bundle names them. */
function externals(optionalPeers: readonly string[]): Plugin {
  return {
    name: 'node-builtins',
    setup(bundler) {
      bundler.onResolve({ filter: /.*/ }, ({ path }) =>
        isBuiltin(path) || optionalPeers.includes(path) ? { path, external: true } : undefined,
      );
    },
  };
}

interface PackageJson {
  readonly exports: Readonly<Record<string, { readonly import?: { readonly default?: string } }>>;
  readonly peerDependenciesMeta?: Readonly<Record<string, { readonly optional?: boolean }>>;
}

/** Bundles `contents` (a module re-exporting the entry) for the neutral platform. */
async function bundle(contents: string, packageDir: string, nodeModules: string, optionalPeers: readonly string[]) {
  const result = await build({
    stdin: { contents, resolveDir: packageDir, loader: 'js', sourcefile: 'consumer.js' },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    metafile: true,
    outfile: 'consumer.bundle.js',
    nodePaths: [nodeModules],
    plugins: [externals(optionalPeers)],
    logLevel: 'silent',
  });
  const outputs = Object.values(result.metafile.outputs);
  if (outputs.length !== 1 || outputs[0] === undefined) throw new Error(`expected one output, got ${outputs.length}`);
  return outputs[0];
}

/**
 * Every Node built-in the Web entries of the package at `packageDir` pull in, but those an entry
 * allows (dynamic imports in `lazy`, or lru-cache's probe). Empty when all load on a Web runtime.
 * @param nodeModules where the package's dependencies resolve from
 */
export async function nodeBuiltinsOnWebPaths(
  packageDir: string,
  nodeModules: string,
  entries: readonly WebEntry[] = WEB_ENTRIES,
): Promise<readonly BuiltinImport[]> {
  const manifest = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as PackageJson;
  const optionalPeers = Object.entries(manifest.peerDependenciesMeta ?? {})
    .filter(([, meta]) => meta.optional === true)
    .map(([name]) => name);
  const found: BuiltinImport[] = [];
  for (const entry of entries) {
    const target = manifest.exports[entry.subpath]?.import?.default;
    if (target === undefined) throw new Error(`package.json#exports has no import of ${entry.subpath}`);
    const file = JSON.stringify(join(packageDir, target));
    const without = entry.without ?? [];
    let output = await bundle(`export * from ${file};`, packageDir, nodeModules, optionalPeers);
    if (without.length > 0) {
      const missing = without.filter((name) => !output.exports.includes(name));
      if (missing.length > 0) throw new Error(`${entry.subpath} exports no ${missing.join(', ')}`);
      const kept = output.exports.filter((name) => !without.includes(name));
      output = await bundle(`export { ${kept.join(', ')} } from ${file};`, packageDir, nodeModules, optionalPeers);
    }
    const allowed = { ...ALLOWED_EVERYWHERE, ...entry.lazy };
    for (const { path, kind } of output.imports) {
      if (!isBuiltin(path)) continue;
      if (kind === 'dynamic-import' && Object.hasOwn(allowed, path)) continue;
      found.push({ subpath: entry.subpath, builtin: path, kind });
    }
  }
  return found;
}
