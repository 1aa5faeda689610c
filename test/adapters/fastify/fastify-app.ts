/**
 * The Fastify reference app and harness, built from the `fastify` module it is given: the latest
 * Fastify (fastify.test.ts) or the oldest the peer range declares (lowest-versions.test.ts).
 */
import type Fastify from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { paygateAuth, requireScopes } from '../../../src/adapters/fastify/index.js';
import type { AdapterOptions } from '../../../src/http/adapter-options.js';
import { type AdapterHarness, AppError, ROUTE_SCOPES, type RunningApp, appErrorResponse, describeAuth } from '../reference-app.js';

export const me = async (request: FastifyRequest) => describeAuth(request.auth);

/** The reference app on `framework`, the plugin registered with `options`. */
export async function referenceApp(framework: typeof Fastify, options: AdapterOptions): Promise<FastifyInstance> {
  const app = framework();
  app.setErrorHandler((error, _request, reply: FastifyReply) => {
    const { status, body } = appErrorResponse(error);
    return reply.code(status).send(body);
  });
  await app.register(paygateAuth, options);
  app.get('/unguarded', { config: { auth: false }, preHandler: requireScopes(...ROUTE_SCOPES.unguarded) }, me);
  app.options('/unguarded', { config: { auth: false }, preHandler: requireScopes(...ROUTE_SCOPES.unguarded) }, me);
  app.get('/me', me);
  app.options('/me', me);
  app.get('/manage', { preHandler: requireScopes(...ROUTE_SCOPES.manage) }, me);
  app.options('/manage', { preHandler: requireScopes(...ROUTE_SCOPES.manage) }, me);
  app.get('/both', { preHandler: requireScopes(...ROUTE_SCOPES.both) }, me);
  app.get('/either', { config: { scopes: ROUTE_SCOPES.either[0] } }, me);
  app.options('/either', { config: { scopes: ROUTE_SCOPES.either[0] } }, me);
  app.get('/boom', async () => {
    throw new AppError('boom');
  });
  return app;
}

export async function listen(app: FastifyInstance): Promise<RunningApp> {
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
}

/** The shared table's harness for the Fastify plugin on `framework`, named `name`. */
export function fastifyHarness(framework: typeof Fastify, name = 'Fastify'): AdapterHarness {
  return {
    name,
    start: async (options) => listen(await referenceApp(framework, options)),
    create: async (options) => {
      const app = framework();
      try {
        await app.register(paygateAuth, options as AdapterOptions);
      } finally {
        await app.close();
      }
    },
    requireScopes: (...scopes) => requireScopes(...(scopes as [string])),
  };
}
