/**
 * The recipes of docs/adapters.md, as the files in examples/recipes/ that the page carries
 * verbatim: Hono per-route scopes with one verification per request, public routes in Express and
 * Koa, and hints logged through `onEvent`. Needs the build (the recipes import `paygate-auth/…`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifierEvent } from '../../src/index.js';
import { type TestIssuer, createTestIssuer, createTestVerifier } from '../../src/testing/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const built = existsSync(join(root, 'dist/fetch/index.js'));
const RECIPES = ['hono-scopes.mjs', 'express-public-routes.mjs', 'koa-public-routes.mjs', 'log-hints.mjs'];
const recipe = (name: string) => import(join(root, 'examples/recipes', name));

let issuer: TestIssuer;
beforeAll(async () => {
  issuer = await createTestIssuer({ audience: 'https://payments.test' });
  await issuer.listen();
});
afterAll(() => issuer?.close());

describe.skipIf(!built)('the recipes of docs/adapters.md', () => {
  it.each(RECIPES)('docs/adapters.md carries examples/recipes/%s verbatim', (name) => {
    const code = readFileSync(join(root, 'examples/recipes', name), 'utf8').trim();
    expect(readFileSync(join(root, 'docs/adapters.md'), 'utf8')).toContain(code);
  });

  describe('Hono per-route scopes', () => {
    let events: VerifierEvent[];
    let app: { request: (path: string, init?: RequestInit) => Promise<Response> };
    beforeAll(async () => {
      events = [];
      const verifier = createTestVerifier(issuer, {
        onEvent: (event: VerifierEvent) => events.push(event),
        cacheAdmission: 'first-use',
      });
      app = (await recipe('hono-scopes.mjs')).createApp(verifier);
    });
    const post = async (path: string, scope: string) =>
      app.request(path, { method: 'POST', headers: { authorization: `Bearer ${await issuer.token({ scope })}` } });
    const verifications = () => events.filter((event) => event.type === 'cache').length;

    it('lets a token with the route scope through, verified once', async () => {
      const before = verifications();
      const response = await post('/payment-links', 'pay:processPayments');
      expect([response.status, await response.json()]).toEqual([201, { tenant: 't-1' }]);
      expect(verifications() - before).toBe(1);
    });

    it('answers 403 insufficient_scope for a token without the route scope, verified once', async () => {
      const before = verifications();
      const response = await post('/payment-links', 'hub:subscribe');
      expect([response.status, ((await response.json()) as { code: string }).code]).toEqual([403, 'insufficient_scope']);
      expect(verifications() - before).toBe(1);
    });

    it('answers 401 without a token, and serves the public route without one', async () => {
      expect((await app.request('/info')).status).toBe(401);
      const health = await app.request('/health');
      expect([health.status, await health.text()]).toEqual([200, 'ok']);
    });
  });

  describe.each([
    ['Express', 'express-public-routes.mjs', (app: unknown) => app],
    ['Koa', 'koa-public-routes.mjs', (app: unknown) => (app as { callback(): unknown }).callback()],
  ] as const)('%s public routes', (_name, file, handler) => {
    let server: Parameters<typeof request>[0];
    beforeAll(async () => {
      server = handler((await recipe(file)).createApp(createTestVerifier(issuer))) as Parameters<typeof request>[0];
    });

    it('serves /health without a token', async () => {
      await request(server).get('/health').expect(200, 'ok');
    });

    it('answers 401 on a guarded route without a token, 200 with one', async () => {
      await request(server).get('/info').expect(401);
      await request(server)
        .get('/info')
        .set('authorization', `Bearer ${await issuer.token()}`)
        .expect(200, { tenant: 'ern:acme/tenants/t-1' });
    });

    it('answers 403 on a route whose scope the token lacks', async () => {
      const token = await issuer.token({ scope: 'hub:subscribe' });
      await request(server).post('/payment-links').set('authorization', `Bearer ${token}`).expect(403);
    });
  });

  describe('hints logged through onEvent', () => {
    it('logs one JSON line per rejection with the code and the hint, and the caller sees no hint', async () => {
      const lines: string[] = [];
      const { createLoggedVerifier } = await recipe('log-hints.mjs');
      const verifier = createLoggedVerifier({ registry: [issuer.entry], audience: 'https://payments.other' }, (line: string) =>
        lines.push(line),
      );
      const error = await verifier.verify(await issuer.token()).catch((caught: unknown) => caught);
      expect((error as { code: string }).code).toBe('audience_mismatch');
      expect(lines).toHaveLength(1);
      const logged = JSON.parse(lines[0] as string) as Record<string, unknown>;
      expect([logged.code, logged.claim]).toEqual(['audience_mismatch', 'aud']);
      expect(logged.hint).toContain('https://payments.other');
      expect(lines[0]).not.toContain('\n');
    });
  });
});
