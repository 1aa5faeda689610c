/**
 * docs/runtimes.md is the one table of supported runtimes: its versions are the devDependencies the
 * conformance suite runs, and the README and docs/adapters.md name the same runtimes and link to it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string): string => readFileSync(join(root, file), 'utf8');

/** The rows of the first table of docs/runtimes.md: runtime name and version cell. */
function runtimeRows(): { readonly runtime: string; readonly version: string }[] {
  const table = read('docs/runtimes.md').split('\n## ')[0] ?? '';
  return table
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| Runtime') && !line.startsWith('|---'))
    .map((line) => {
      const [runtime = '', version = ''] = line
        .split('|')
        .slice(1)
        .map((cell) => cell.trim());
      return { runtime, version };
    });
}

/** `a, b, c and d`. */
const listed = (names: readonly string[]): string => `${names.slice(0, -1).join(', ')} and ${names.at(-1) ?? ''}`;

describe('docs/runtimes.md', () => {
  const rows = runtimeRows();
  const { devDependencies } = JSON.parse(read('package.json')) as { devDependencies: Record<string, string> };

  it('lists Node and the three runtimes the suite runs', () => {
    expect(rows.map((row) => row.runtime)).toEqual(['Node', 'Deno', 'Bun', 'Cloudflare workerd']);
  });

  it.each([
    ['Deno', 'deno'],
    ['Bun', 'bun'],
    ['Cloudflare workerd', 'workerd'],
  ])('gives %s the exact version pinned in devDependencies (%s)', (runtime, dependency) => {
    const pinned = devDependencies[dependency] ?? '';
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(rows.find((row) => row.runtime === runtime)?.version.split(' ')[0]).toBe(pinned);
  });

  it.each(['README.md', 'docs/adapters.md', 'docs/issuer.md'])('%s names the same runtimes and links to the table', (file) => {
    const text = read(file).replace(/\s+/g, ' ');
    expect(text).toContain(listed(rows.map((row) => row.runtime)));
    expect(text).toMatch(/\]\((docs\/)?runtimes\.md\)/);
  });
});
