/**
 * A resolver stub in place of `dns.lookup`, which the JWKS download's default `fetch` on Node
 * calls for each connection: the names a test sets are answered from it (recorded, one entry per
 * lookup), every other name goes to DNS. Undo it with `vi.restoreAllMocks()`.
 */
import dns from 'node:dns';
import { vi } from 'vitest';

/** The stub of one test. */
export interface ResolverStub {
  /** Answers `name` with `addresses`, or with what `answer` gives for each lookup (0 first). */
  set(name: string, answer: readonly string[] | ((call: number) => readonly string[])): void;
  /** The names answered, one per lookup, in order. */
  readonly lookups: readonly string[];
}

/** Installs a fresh stub. */
export function stubResolver(): ResolverStub {
  const answers = new Map<string, (call: number) => readonly string[]>();
  const lookups: string[] = [];
  const realLookup = dns.lookup;
  vi.spyOn(dns, 'lookup').mockImplementation(((hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    const answer = answers.get(hostname);
    if (answer === undefined) return realLookup(hostname, options, callback as never);
    const addresses = answer(lookups.filter((name) => name === hostname).length).map((address) => ({
      address,
      family: address.includes(':') ? 6 : 4,
    }));
    lookups.push(hostname);
    const [first] = addresses;
    queueMicrotask(() => (options.all ? callback(null, addresses) : callback(null, first?.address, first?.family)));
  }) as typeof dns.lookup);
  return {
    set(name, answer) {
      answers.set(name, typeof answer === 'function' ? answer : () => answer);
    },
    lookups,
  };
}
