/** Waiting for an effect another process or connection brings about. */
import { PATIENCE_MS } from '../support/loaded-machine.js';

/**
 * Resolves once `check` resolves truthy, trying every 10 ms; rejects with `what` when `within`
 * milliseconds pass first. Give `within` as a bound plus `LOADED_MARGIN_MS` where the delay is
 * asserted; leave the default ({@link PATIENCE_MS}) where the test only waits for the effect
 * (test/support/loaded-machine.ts).
 */
export async function eventually(what: string, check: () => Promise<boolean> | boolean, within = PATIENCE_MS): Promise<void> {
  const deadline = Date.now() + within;
  for (;;) {
    if (await check()) return;
    if (Date.now() >= deadline) throw new Error(`not within ${within} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
