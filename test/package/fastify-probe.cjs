// Run by node from a project holding node_modules/paygate-auth, its runtime dependencies and
// fastify, nothing else. argv[2]: 'require' or 'import'. Registers the plugin, sends one request
// without a token and prints one JSON line: the answer's status and code.
'use strict';
const [mode] = process.argv.slice(2);
const load = (specifier) => (mode === 'require' ? Promise.resolve(require(specifier)) : import(specifier));

async function main() {
  const plugin = await load('paygate-auth/fastify');
  const fastifyModule = await load('fastify');
  const fastify = fastifyModule.default ?? fastifyModule;
  const app = fastify();
  const verifier = { verify: async () => ({}), maxTokenBytes: 8192 };
  await app.register(plugin.default, { verifier });
  app.get('/info', async () => 'reached');
  const response = await app.inject({ url: '/info' });
  await app.close();
  process.stdout.write(JSON.stringify({ status: response.statusCode, code: response.json().code }));
}

main().catch((error) => {
  process.stderr.write(String(error?.stack));
  process.exitCode = 1;
});
