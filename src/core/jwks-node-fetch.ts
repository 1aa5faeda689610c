/**
 * The JWKS download's default `fetch` on Node: one GET over `node:http` or `node:https`, whose
 * connection screens every address the host resolves to before connecting to it (the `lookup`
 * option those modules take). The address judged is the address connected, in the same step, so
 * a name cannot resolve to a public address for a check and to 127.0.0.1 for the connection (DNS
 * rebinding): there is no separate check to race.
 *
 * Why not `globalThis.fetch`: Node's fetch (undici) resolves and connects inside itself; screening
 * the name first would be a check-then-connect race, and screening its connection needs undici's
 * own `Agent` (`connect.lookup`), which is not a dependency of this package and which Node does
 * not expose. Node's `http`/`https` take a `lookup` as they stand.
 *
 * The costs, all acceptable for a document downloaded once per issuer per max-age: one fresh
 * connection per download (`agent: false`: never a pooled connection that nobody screened, no
 * keep-alive), HTTP/1.1 only (gzip, deflate and br bodies decoded as `fetch` decodes them), and
 * no proxy: a gateway that must reach the internet through an egress proxy injects its own `fetch`
 * (`createVerifier({ fetch })`), which then gets the checks of the host's name and literal address
 * only.
 *
 * Reached through `process.getBuiltinModule`, never imported, as `signature.ts` reaches
 * `node:crypto`: Web runtimes and bundlers never load `node:http`. Used on Node only, not on
 * Deno, Bun or workerd, whose `node:http` stand-ins are built on their own `fetch` and need not
 * honour `lookup`; there the verifier uses `globalThis.fetch`, and the connection-time check is
 * not made. Each module, and `dns.lookup`, is looked up at each download, so request
 * interceptors (msw patches `http.request`) and resolver stubs in tests are honoured.
 */
import type * as Dns from 'node:dns';
import type * as Http from 'node:http';
import type * as Stream from 'node:stream';
import type * as Zlib from 'node:zlib';
import type { FetchLike } from './jwks-fetch.js';

/** Why connecting to `address` (which `url`'s host resolved to) is refused, or `undefined`. */
export type AddressScreen = (url: URL, address: string) => Error | undefined;

interface NodeModules {
  readonly http: typeof Http;
  readonly https: typeof Http;
  readonly dns: typeof Dns;
  readonly stream: typeof Stream;
  readonly zlib: typeof Zlib;
}

interface NodeProcess {
  readonly release?: { readonly name?: string };
  readonly getBuiltinModule?: (id: string) => unknown;
}

/** Node's own modules, when this is Node itself (not Deno, Bun or workerd, which imitate it). */
function nodeModules(): NodeModules | undefined {
  const global = globalThis as { process?: NodeProcess; Bun?: unknown; Deno?: unknown; navigator?: { userAgent?: string } };
  const proc = global.process;
  const agent = global.navigator?.userAgent;
  if (proc?.release?.name !== 'node' || global.Bun !== undefined || global.Deno !== undefined) return undefined;
  if (agent !== undefined && !agent.startsWith('Node.js')) return undefined;
  const load = proc.getBuiltinModule;
  if (load === undefined) return undefined;
  return {
    http: load('node:http') as typeof Http,
    https: load('node:https') as typeof Http,
    dns: load('node:dns') as typeof Dns,
    stream: load('node:stream') as typeof Stream,
    zlib: load('node:zlib') as typeof Zlib,
  };
}

/** Statuses whose response has no body. */
const NULL_BODY: ReadonlySet<number> = new Set([101, 204, 205, 304]);

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | Dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `http.request` that resolves as `dns.lookup` does, then hands back the addresses
 * only when `screen` refuses none of them (one refused address refuses the host: a name that
 * answers with a public and a private address is not one to connect to).
 */
function screenedLookup(dns: typeof Dns, url: URL, screen: AddressScreen, refused: (error: Error) => void): Http.RequestOptions['lookup'] {
  return ((hostname: string, options: Dns.LookupOptions, callback: LookupCallback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error !== null) return callback(error, []);
      for (const { address } of addresses) {
        const refusal = screen(url, address);
        if (refusal !== undefined) {
          refused(refusal);
          return callback(refusal as NodeJS.ErrnoException, []);
        }
      }
      const [first] = addresses;
      if (options.all === true) return callback(null, addresses);
      if (first === undefined) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      return callback(null, first.address, first.family);
    });
  }) as Http.RequestOptions['lookup'];
}

/**
 * The content codings a `Content-Encoding` value lists, lower-cased, `identity` left out; empty
 * when there is none.
 */
export function contentCodings(contentEncoding: string | null): string[] {
  if (contentEncoding === null) return [];
  return contentEncoding
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
}

/** The decoder of each content coding decoded, as `fetch` decodes them (`x-gzip` is `gzip`). */
export const DECODERS: Readonly<Record<string, (zlib: typeof Zlib) => Stream.Transform>> = {
  gzip: (zlib) => zlib.createGunzip(),
  'x-gzip': (zlib) => zlib.createGunzip(),
  deflate: (zlib) => zlib.createInflate(),
  br: (zlib) => zlib.createBrotliDecompress(),
};

/**
 * The response body, decoded when it has one content coding of {@link DECODERS}, as a stream the
 * reader pulls: the decoder runs only as far as the reader reads (a compression bomb is never
 * inflated past the size limit). Any other coding is left as served, for the download to refuse.
 */
function responseBody(modules: NodeModules, response: Http.IncomingMessage): ReadableStream<Uint8Array> {
  const codings = contentCodings(response.headers['content-encoding'] ?? null);
  const decoder = codings.length === 1 ? DECODERS[codings[0] as string] : undefined;
  if (decoder === undefined) return modules.stream.Readable.toWeb(response) as ReadableStream<Uint8Array>;
  const decoded = decoder(modules.zlib);
  modules.stream.pipeline(response, decoded, () => undefined);
  return modules.stream.Readable.toWeb(decoded) as ReadableStream<Uint8Array>;
}

/** The response headers, in order, repeated names kept. */
function responseHeaders(response: Http.IncomingMessage): Headers {
  const headers = new Headers();
  const raw = response.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) headers.append(raw[index] as string, raw[index + 1] as string);
  return headers;
}

function requestHeaders(init: RequestInit): Record<string, string> {
  return Object.fromEntries(new Headers(init.headers).entries());
}

/**
 * A `fetch` for JWKS downloads (GET, no redirect followed, the body streamed) whose connections
 * refuse every address `screen` refuses; `undefined` where this is not Node.
 */
export function nodeJwksFetch(screen: AddressScreen): FetchLike | undefined {
  const modules = nodeModules();
  if (modules === undefined) return undefined;
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input);
      let refusal: Error | undefined;
      const client = url.protocol === 'http:' ? modules.http : modules.https;
      const request = client.request(url, {
        method: 'GET',
        headers: requestHeaders(init),
        agent: false,
        lookup: screenedLookup(modules.dns, url, screen, (error) => {
          refusal = error;
        }),
        ...(init.signal ? { signal: init.signal } : {}),
      });
      // The refusal itself, however Node wraps or replaces it on its way out of the connection.
      request.on('error', (error) => reject(refusal ?? error));
      request.on('response', (response) => {
        try {
          const status = response.statusCode ?? 0;
          const body = NULL_BODY.has(status) ? null : responseBody(modules, response);
          if (body === null) response.on('error', () => undefined).resume();
          resolve(new Response(body, { status, headers: responseHeaders(response) }));
        } catch (error) {
          // A status `Response` cannot hold (under 200, over 599), or a header it refuses.
          response.destroy();
          reject(error);
        }
      });
      request.end();
    });
}
