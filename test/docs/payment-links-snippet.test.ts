/**
 * The Express glue of docs/payment-links.md compiles against the installed @types/express (5:
 * `req.params` values are `string | string[]`) under the repository's strict tsconfig, and runs
 * as pasted: links are created and read back through the routes it mounts. The snippet gets the
 * quick start's `verifier` and a `queue` from a prelude; its imports are pointed at the sources.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestIssuer, createTestIssuer, createTestVerifier } from '../../src/testing/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const VERIFIER_KEY = Symbol.for('paygate-auth.test.payment-links-snippet-verifier');

/** The one TypeScript block of docs/payment-links.md that imports the Express adapter. */
async function expressSnippet(): Promise<string> {
  const markdown = await readFile(join(root, 'docs/payment-links.md'), 'utf8');
  const blocks = [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((block) => block[1] as string);
  const found = blocks.filter((code) => code.includes("from 'paygate-auth/express'"));
  expect(found).toHaveLength(1);
  return found[0] as string;
}

/** The snippet as a module of the sources, with the prelude that declares what it takes as given. */
function asModule(code: string): string {
  const body = code.replace(/from 'paygate-auth(\/[\w-]+)?'/g, (_, subpath?: string) => {
    if (subpath === undefined) return `from '${join(root, 'src/index.ts')}'`;
    const dir = subpath === '/payment-links' ? 'src/payment-links' : join('src/adapters', subpath);
    return `from '${join(root, dir, 'index.ts')}'`;
  });
  const prelude = [
    `const verifier = (globalThis as Record<symbol, unknown>)[Symbol.for('paygate-auth.test.payment-links-snippet-verifier')] as import('${join(root, 'src/index.ts')}').Verifier;`,
    'const queue = { published: [] as unknown[], publish(message: unknown): void { queue.published.push(message); } };',
  ].join('\n');
  return `${prelude}\n${body}\nexport { app, queue };\n`;
}

/** tsc's errors for `file`, under the repository's compiler options. */
function typeErrors(file: string): string[] {
  const { config } = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root);
  // The snippet's imports are pointed at the sources' `.ts` files, which tsc admits without emit.
  const program = ts.createProgram([file], { ...options, allowImportingTsExtensions: true });
  return ts
    .getPreEmitDiagnostics(program)
    .filter((diagnostic) => diagnostic.file?.fileName === file)
    .map((diagnostic) => `${diagnostic.code} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`);
}

let issuer: TestIssuer;
let dir: string;
let file: string;

beforeAll(async () => {
  issuer = await createTestIssuer({ issuer: 'https://auth.acme.example', tenant: 'ern:acme/tenants/t-1' });
  await issuer.listen();
  (globalThis as Record<symbol, unknown>)[VERIFIER_KEY] = createTestVerifier(issuer);
  await mkdir(join(root, '.tmp'), { recursive: true });
  dir = await mkdtemp(join(root, '.tmp', 'payment-links-snippet-'));
  file = join(dir, 'express-glue.ts');
  await writeFile(file, asModule(await expressSnippet()));
});

afterAll(async () => {
  delete (globalThis as Record<symbol, unknown>)[VERIFIER_KEY];
  await issuer?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('the Express glue of docs/payment-links.md', () => {
  it('compiles under strict TypeScript against the installed @types/express', () => {
    expect(typeErrors(file)).toEqual([]);
  }, 60_000);

  it('creates a link and reads it back at its Location, as pasted', async () => {
    const { app, queue } = (await import(file)) as { app: never; queue: { published: unknown[] } };
    const authorization = `Bearer ${await issuer.token({ scope: 'pay:processPayments' })}`;
    const created = await request(app)
      .post('/payment-links/')
      .set('Authorization', authorization)
      .set('Content-Type', 'application/json')
      .send(
        JSON.stringify({
          amount: '12.5',
          currency: 'EUR',
          department: '//departments/cardiology',
          shopper: '//customers/c-1',
          email: 'a@b.example',
        }),
      );
    expect(created.status, created.text).toBe(201);
    expect(queue.published).toHaveLength(1);
    const read = await request(app)
      .get(created.headers.location as string)
      .set('Authorization', authorization);
    expect([read.status, JSON.parse(read.text).id]).toEqual([200, JSON.parse(created.text).id]);
  });
});
