/**
 * Records what a verifier reports through `onEvent`, and lets a test wait for the next JWKS
 * download to finish (a background reload, say).
 */
import type { JwksFetchEvent, VerifierEvent } from '../../src/index.js';

/** The events a verifier reported, in order. */
export interface EventLog {
  /** Pass as the verifier's `onEvent`. */
  readonly listener: (event: VerifierEvent) => void;
  readonly events: readonly VerifierEvent[];
  /** The `jwks_fetch` events so far. */
  fetches(): readonly JwksFetchEvent[];
  /**
   * Resolves with the next `jwks_fetch` event (one reported after this call), once the download's
   * bookkeeping is done (a macrotask later), so that the next verification sees no download in flight.
   */
  nextFetch(): Promise<JwksFetchEvent>;
}

/** A fresh {@link EventLog}. */
export function eventLog(): EventLog {
  const events: VerifierEvent[] = [];
  let waiting: ((event: JwksFetchEvent) => void)[] = [];
  return {
    listener(event) {
      events.push(event);
      if (event.type !== 'jwks_fetch') return;
      const woken = waiting;
      waiting = [];
      setImmediate(() => {
        for (const wake of woken) wake(event);
      });
    },
    events,
    fetches: () => events.filter((event): event is JwksFetchEvent => event.type === 'jwks_fetch'),
    nextFetch: () => new Promise<JwksFetchEvent>((resolve) => waiting.push(resolve)),
  };
}
