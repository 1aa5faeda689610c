/**
 * The README and docs/: every relative link resolves to a file of the repository (and, where it
 * names a heading, to that heading), every file linked is one the package carries, the README fits
 * on a few screens, no page names a document that is not in the repository or cites its sections,
 * and the AuthError code tables give each code the status and RFC 6750 error it answers with.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AUTH_ERROR_CODES } from '../../src/core/errors.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const README_MAX_LINES = 400;

/** README.md and every page under docs/, as paths relative to the repository. */
const PAGES = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

interface Link {
  readonly page: string;
  readonly target: string;
}

/** The text of a page without its code: fenced blocks and inline code spans. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`+[^`\n]*`+/g, '');
}

/** The inline links and images of a page: `[text](target)`, `![alt](target "title")`. */
function links(page: string): Link[] {
  const text = prose(readFileSync(join(root, page), 'utf8'));
  return [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => ({
    page,
    target: match[1] ?? '',
  }));
}

const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** The file a relative link points to, relative to the repository; the page itself for `#fragment`. */
function linkedFile({ page, target }: Link): string {
  const path = decodeURIComponent(target.split('#')[0] ?? '');
  return path === '' ? page : relative(root, resolve(root, dirname(page), path));
}

/** The anchors a page's headings get on GitHub: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(page: string): Set<string> {
  const found = new Set<string>();
  const counts = new Map<string, number>();
  const markdown = readFileSync(join(root, page), 'utf8').replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading = ''] of markdown.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = heading.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const seen = counts.get(slug) ?? 0;
    counts.set(slug, seen + 1);
    found.add(seen === 0 ? slug : `${slug}-${seen}`);
  }
  return found;
}

const relativeLinks = PAGES.flatMap(links).filter((link) => !isExternal(link.target));

describe('the README and docs/', () => {
  it('have relative links to check', () => {
    expect(relativeLinks.filter((link) => link.page === 'README.md').length).toBeGreaterThan(10);
    expect(PAGES).toContain('docs/README.md');
  });

  it('link only to files that exist in the repository', () => {
    const broken = relativeLinks.filter((link) => {
      const file = linkedFile(link);
      return file.startsWith('..') || !existsSync(join(root, file)) || /^(dist|node_modules|\.tmp)\//.test(file);
    });
    expect(broken).toEqual([]);
  });

  it('link to headings that exist in the page linked', () => {
    const broken = relativeLinks.filter((link) => {
      const fragment = link.target.split('#')[1];
      if (fragment === undefined) return false;
      const file = linkedFile(link);
      if (!file.endsWith('.md') || !existsSync(join(root, file))) return false;
      return !anchors(file).has(decodeURIComponent(fragment));
    });
    expect(broken).toEqual([]);
  });

  it('link only to files the package carries, so that the links work in the package too', () => {
    const { files } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { files: string[] };
    const carried = (file: string): boolean =>
      files.some(
        (entry) =>
          file === entry || (existsSync(join(root, entry)) && statSync(join(root, entry)).isDirectory() && file.startsWith(`${entry}/`)),
      );
    expect(relativeLinks.filter((link) => !carried(linkedFile(link)))).toEqual([]);
  });

  it('index every page of docs/ in docs/README.md', () => {
    const indexed = new Set(links('docs/README.md').map(linkedFile));
    expect(PAGES.filter((page) => page.startsWith('docs/') && page !== 'docs/README.md' && !indexed.has(page))).toEqual([]);
  });

  it(`keep the README to at most ${README_MAX_LINES} lines, with a contents list`, () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(README_MAX_LINES);
    expect(readme).toMatch(/^## Contents$/m);
  });

  it('give the two set-up commands', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme).toContain('npm ci && npm run example');
    expect(readme).toMatch(/^npm test\b/m);
  });

  it.each(PAGES)('%s names no Markdown document that is not in the repository', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    const named = [...text.matchAll(/[\w./-]*[\w-]+\.md\b/g)].map((match) => match[0]);
    const missing = named.filter((name) => !existsSync(resolve(root, dirname(page), name)) && !existsSync(join(root, name)));
    expect(missing).toEqual([]);
  });

  it.each(PAGES)('%s cites sections (§) of RFCs only', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    const citations = [...text.matchAll(/§/g)].map((match) => text.slice(Math.max(0, (match.index ?? 0) - 12), (match.index ?? 0) + 6));
    expect(citations.filter((citation) => !/RFC \d+ ?§/.test(citation))).toEqual([]);
  });
});

/** The rows of the `AuthError` codes table of a page: code, status and RFC 6750 `error` as written. */
function codeRows(page: string): string[][] {
  const text = readFileSync(join(root, page), 'utf8');
  return [...text.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| (—|`[a-z_]+`) \|/gm)]
    .filter((match) => (match[1] ?? '') in AUTH_ERROR_CODES)
    .map((match) => [match[1] ?? '', match[2] ?? '', (match[3] ?? '').replaceAll('`', '')]);
}

describe.each(['README.md', 'docs/errors.md'])('the AuthError codes table of %s', (page) => {
  it('lists every code once, with the status and RFC 6750 error the code answers with', () => {
    const expected = Object.entries(AUTH_ERROR_CODES).map(([code, info]) => [code, String(info.status), info.error ?? '—']);
    const rows = codeRows(page);
    expect([...rows].sort()).toEqual([...expected].sort());
  });
});
