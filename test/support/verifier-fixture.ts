/**
 * The verifier of the tests that build their own (the JWKS cache, the key rules, the reliability
 * and operator-control tests): `createVerifier` on the file's defaults (its registry, audience,
 * clock and more), each overridable per verifier, reporting to an event log.
 *
 * ```ts
 * const { verifier, log } = verifierFixture(() => ({ registry: [issuer.entry], audience: AUDIENCE, now: clock.now }));
 * const v = verifier({ cache: false });
 * await v.verify(token);
 * expect(log.fetches()).toHaveLength(1);
 * ```
 */
import type { JwksFetchEvent, Verifier, VerifierEvent, VerifierOptions } from '../../src/index.js';
import { createVerifier } from '../../src/index.js';
import { type EventLog, eventLog } from './jwks-events.js';

/** What a file's verifiers have unless a test says otherwise. */
export type VerifierDefaults = Partial<VerifierOptions> & Pick<VerifierOptions, 'registry' | 'audience'>;

/** A file's verifiers and their events. */
export interface VerifierFixture {
  /** A new verifier: the defaults, then `options`; its events start a fresh {@link log}. */
  verifier(options?: Partial<VerifierOptions>): Verifier;
  /** The events of the verifier made last (an `onEvent` in `options` takes its place). */
  readonly log: EventLog;
}

/**
 * `defaults` is read at each verifier made, so that it may name what `beforeAll` sets up (an
 * issuer, a server).
 */
export function verifierFixture(defaults: () => VerifierDefaults): VerifierFixture {
  let current = eventLog();
  const log: EventLog = {
    listener: (event: VerifierEvent) => current.listener(event),
    get events() {
      return current.events;
    },
    fetches: (): readonly JwksFetchEvent[] => current.fetches(),
    nextFetch: () => current.nextFetch(),
  };
  return {
    verifier(options = {}) {
      current = eventLog();
      return createVerifier({ ...defaults(), onEvent: current.listener, ...options });
    },
    log,
  };
}
