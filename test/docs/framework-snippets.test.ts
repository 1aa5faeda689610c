/**
 * The framework snippets of the README and docs/adapters.md run as pasted: each TypeScript block
 * that imports an adapter is written to a file with the glue a user adds (the shared `verifier` of
 * the quick start; no `listen()`), imported from the sources, and asked for its routes with a
 * token that has the route's scope, one that lacks it, and none.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Verifier } from '../../src/index.js';
import { type TestIssuer, createTestIssuer, createTestVerifier } from '../../src/testing/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const PAGES = ['README.md', 'docs/adapters.md'];
const ADAPTERS = ['express', 'fastify', 'koa', 'hono', 'fetch'] as const;
type Adapter = (typeof ADAPTERS)[number];
/** Where the snippets find the verifier the quick start made. */
const VERIFIER_KEY = Symbol.for('paygate-auth.test.snippet-verifier');

interface Snippet {
  readonly name: string;
  readonly adapter: Adapter;
  readonly code: string;
}

/** Every TypeScript block of `page` that imports one of the adapters. */
async function snippets(page: string): Promise<Snippet[]> {
  const markdown = await readFile(join(root, page), 'utf8');
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].flatMap((block, index) => {
    const code = block[1] as string;
    const adapter = /from 'paygate-auth\/(\w+)'/.exec(code)?.[1] as Adapter | undefined;
    return adapter !== undefined && ADAPTERS.includes(adapter) ? [{ name: `${page} #${index + 1} (${adapter})`, adapter, code }] : [];
  });
}

/** The snippet as a module of the sources: the verifier imported, `listen()` left out, `app` exported. */
function asModule({ code }: Snippet, glue: string): string {
  const body = code
    .replace(/from 'paygate-auth(\/\w+)?'/g, (_, subpath?: string) =>
      subpath === undefined ? `from '${join(root, 'src/index.ts')}'` : `from '${join(root, 'src/adapters', subpath, 'index.ts')}'`,
    )
    .replace(/^(await )?app\.listen\(.*\);[^\n]*$/gm, '');
  const exported = /^export (const|default)/m.test(body) ? '' : '\nexport { app };\n';
  return `import { verifier } from '${glue}';\n${body}${exported}`;
}

/** A body as JSON when it is an object, else as text. */
const parsed = (text: string): unknown => (text.startsWith('{') ? JSON.parse(text) : text);

type Send = (method: string, path: string, authorization?: string) => Promise<{ status: number; body: unknown }>;

/** A way to send the snippet's app a request, per framework. */
async function sender(adapter: Adapter, module: Record<string, unknown>): Promise<Send> {
  const app = module.app as never;
  switch (adapter) {
    case 'express':
    case 'koa': {
      const handler = adapter === 'koa' ? (app as { callback(): never }).callback() : app;
      return async (method, path, authorization) => {
        const call = request(handler)[method.toLowerCase() as 'get' | 'post'](path);
        const response = await (authorization === undefined ? call : call.set('Authorization', authorization));
        return { status: response.status, body: response.body };
      };
    }
    case 'fastify':
      return async (method, path, authorization) => {
        const response = await (app as { inject(options: object): Promise<{ statusCode: number; body: string }> }).inject({
          method,
          url: path,
          headers: authorization === undefined ? {} : { authorization },
        });
        return { status: response.statusCode, body: parsed(response.body) };
      };
    default: {
      const fetchLike: (request: Request) => Promise<Response> =
        adapter === 'hono'
          ? (req) =>
              (
                (module.default as { fetch(request: Request): Promise<Response> } | undefined) ??
                (app as never as { fetch(request: Request): Promise<Response> })
              ).fetch(req)
          : (req) => (module.POST as (request: Request) => Promise<Response>)(req);
      return async (method, path, authorization) => {
        const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
        const response = await fetchLike(new Request(`http://localhost${path}`, { method, headers }));
        return { status: response.status, body: parsed(await response.text()) };
      };
    }
  }
}

let issuer: TestIssuer;
let dir: string;
const found = (await Promise.all(PAGES.map(snippets))).flat();

beforeAll(async () => {
  issuer = await createTestIssuer({ issuer: 'https://auth.acme.example', audience: 'https://payments.example' });
  await issuer.listen();
  (globalThis as Record<symbol, Verifier>)[VERIFIER_KEY] = createTestVerifier(issuer);
  await mkdir(join(root, '.tmp'), { recursive: true });
  dir = await mkdtemp(join(root, '.tmp', 'snippets-'));
  await writeFile(
    join(dir, 'verifier.ts'),
    `export const verifier = (globalThis as Record<symbol, unknown>)[Symbol.for('paygate-auth.test.snippet-verifier')] as import('${join(root, 'src/index.ts')}').Verifier;\n`,
  );
});

afterAll(async () => {
  delete (globalThis as Record<symbol, Verifier>)[VERIFIER_KEY];
  await issuer?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('the framework snippets of the README and docs/adapters.md', () => {
  it('are found: each adapter in each page', () => {
    expect(new Set(found.map(({ name }) => name.replace(/ #\d+/, '')))).toEqual(
      new Set(PAGES.flatMap((page) => ADAPTERS.map((adapter) => `${page} (${adapter})`))),
    );
  });

  it.each(found)('$name answers its routes as the page says', async (snippet) => {
    const file = join(dir, `${snippet.name.replace(/\W+/g, '-')}.ts`);
    await writeFile(file, asModule(snippet, join(dir, 'verifier.ts')));
    const module = (await import(file)) as Record<string, unknown>;
    const send = await sender(snippet.adapter, module);
    const granted = `Bearer ${await issuer.token()}`;
    const lacking = `Bearer ${await issuer.token({ scope: 'hub:subscribe' })}`;

    if (snippet.code.includes("'/info'")) {
      expect(await send('GET', '/info', granted)).toEqual({ status: 200, body: { tenant: 'ern:acme/tenants/t-1' } });
    }
    if (snippet.code.includes("'/health'")) expect((await send('GET', '/health')).status).toBe(200);
    const created = await send('POST', '/payment-links', granted);
    expect([200, 201]).toContain(created.status);
    expect((await send('POST', '/payment-links', lacking)).body).toMatchObject({ status: 403, code: 'insufficient_scope' });
    expect((await send('POST', '/payment-links')).body).toMatchObject({ status: 401, code: 'missing_token' });
    if ('app' in module && snippet.adapter === 'fastify') await (module.app as { close(): Promise<void> }).close();
  });
});
