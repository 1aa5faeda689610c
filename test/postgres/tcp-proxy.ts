/**
 * A TCP proxy the tests control, between the gateway instances and PostgreSQL, to play the failure
 * a stopped server does not show: a connection that goes silent without closing (a failover, a
 * partition, a NAT or load-balancer timeout).
 *
 * - `silence()`: every connection, open or new, stops forwarding in both directions; its sockets
 *   stay open and what is sent is dropped, as a black hole does. A client that closes a silenced
 *   connection closes only its own side: the server's side stays open, as across a partition.
 * - `heal()`: new connections are forwarded again; the silenced ones stay silent, as connections
 *   to a host that went away do.
 * - `reset()`: the silenced connections are cut (TCP reset), as a host that came back would answer,
 *   the server's sides of those the clients closed included.
 *
 * By default the proxy answers a client's FIN with its own, even on a silenced connection (Node's
 * `allowHalfOpen: false`), so a client's close completes. Started with `{ halfOpen: true }`, a
 * silenced connection leaves the client's FIN unanswered, as a black-holed network does: a client
 * that waits for the server's FIN to finish its close waits until it gives up on its own.
 */
import { type Server, type Socket, connect, createServer } from 'node:net';

/** One client connection and its upstream. */
interface Pair {
  readonly client: Socket;
  readonly upstream: Socket | undefined;
  silent: boolean;
}

export interface TcpProxy {
  /** The proxy's port on 127.0.0.1. */
  readonly port: number;
  /** `url` (a postgres:// URL of the target) through the proxy. */
  via(url: string): string;
  silence(): void;
  heal(): void;
  reset(): void;
  /** How many silenced connections are open. */
  readonly silenced: number;
  close(): Promise<void>;
}

function cut(socket: Socket | undefined): void {
  if (socket === undefined || socket.destroyed) return;
  socket.resetAndDestroy();
}

export interface ProxyOptions {
  /** `true`: a silenced connection never answers the client's FIN (see the module's notes). */
  readonly halfOpen?: boolean;
}

/** Starts a proxy on a free port of 127.0.0.1 forwarding to `targetPort`. */
export async function startProxy(targetPort: number, options: ProxyOptions = {}): Promise<TcpProxy> {
  const halfOpen = options.halfOpen === true;
  const pairs = new Set<Pair>();
  /** Server sides of silenced connections whose clients closed: the server was never told. */
  const stranded = new Set<Socket>();
  let silent = false;
  const pairOf = (client: Socket): Pair | undefined => [...pairs].find((pair) => pair.client === client);
  const server: Server = createServer({ allowHalfOpen: halfOpen }, (client) => {
    client.on('error', () => undefined);
    // Half-open sockets: answer the client's FIN as Node's default does, unless the pair is silent.
    if (halfOpen) {
      client.on('end', () => {
        if (!pairOf(client)?.silent) client.end();
      });
    }
    if (silent) {
      const pair: Pair = { client, upstream: undefined, silent: true };
      pairs.add(pair);
      client.on('data', () => undefined);
      client.on('close', () => pairs.delete(pair));
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    upstream.on('error', () => undefined);
    const pair: Pair = { client, upstream, silent: false };
    pairs.add(pair);
    client.on('data', (chunk) => {
      if (!pair.silent) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!pair.silent) client.write(chunk);
    });
    client.on('close', () => {
      pairs.delete(pair);
      if (pair.silent) stranded.add(upstream);
      else upstream.destroy();
    });
    // A silenced client never learns that its upstream closed.
    upstream.on('close', () => {
      if (!pair.silent) client.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    via(url) {
      const through = new URL(url);
      through.hostname = '127.0.0.1';
      through.port = String(port);
      return through.toString();
    },
    silence() {
      silent = true;
      for (const pair of pairs) pair.silent = true;
    },
    heal() {
      silent = false;
    },
    reset() {
      for (const socket of stranded) cut(socket);
      stranded.clear();
      for (const pair of [...pairs]) {
        if (!pair.silent) continue;
        pairs.delete(pair);
        cut(pair.client);
        cut(pair.upstream);
      }
    },
    get silenced() {
      return [...pairs].filter((pair) => pair.silent).length;
    },
    async close() {
      for (const socket of stranded) cut(socket);
      stranded.clear();
      for (const pair of pairs) {
        cut(pair.client);
        cut(pair.upstream);
      }
      pairs.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
