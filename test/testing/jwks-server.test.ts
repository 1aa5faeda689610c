/** serveJwks(): its arguments are checked before a server starts, so a slip fails the test that made it. */
import { describe, expect, test } from 'vitest';
import { serveJwks } from '../../src/testing/index.js';

describe('serveJwks', () => {
  test('refuses a JWKS document given as it is rather than as a function, naming document', async () => {
    // Served as given, every request failed (the connection dropped) and the verifier said jwks_unavailable.
    await expect(serveJwks({ keys: [] } as never)).rejects.toThrow(/serveJwks: document must be a function/);
  });

  test('refuses an unknown option, naming the nearest', async () => {
    await expect(serveJwks(() => ({ keys: [] }), { paht: '/keys' } as never)).rejects.toThrow(/unknown option "paht".*"path"/);
  });

  test('refuses a port, saying the port is ephemeral and where the URL is', async () => {
    await expect(serveJwks(() => ({ keys: [] }), { port: 8080 } as never)).rejects.toThrow(
      /^serveJwks: port is not an option, got 8080: .*ephemeral port.*server\.url/,
    );
  });

  test('refuses a path that does not start with "/", naming path', async () => {
    // `http://127.0.0.1:<port>` and `keys.json` made a URL with no valid port.
    await expect(serveJwks(() => ({ keys: [] }), { path: 'keys.json' })).rejects.toThrow(/serveJwks: path must start with "\/"/);
  });

  test('names a refused path escaped for one log line, never with its bidi characters raw', async () => {
    const refused = serveJwks(() => ({ keys: [] }), { path: 'keys\u202e.json' });
    await expect(refused).rejects.toThrow(/^serveJwks: path must start with "\/", got "keys/);
    await expect(refused).rejects.not.toThrow(/\u202e/);
  });

  test.each(['respond', 'onRequest'])('refuses a %s that is not a function, naming it', async (name) => {
    await expect(serveJwks(() => ({ keys: [] }), { [name]: true } as never)).rejects.toThrow(`serveJwks: ${name} must be a function`);
  });

  test('serves the document at the path given', async () => {
    const server = await serveJwks(() => ({ keys: [] }), { path: '/keys' });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/keys$/);
      expect(await (await fetch(server.url)).json()).toEqual({ keys: [] });
    } finally {
      await server.close();
    }
  });
});
