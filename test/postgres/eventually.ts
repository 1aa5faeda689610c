/** Waiting for an effect another process or connection brings about. */

/**
 * Resolves once `check` resolves truthy, trying every 10 ms; rejects with `what` when `within`
 * milliseconds pass first.
 */
export async function eventually(what: string, check: () => Promise<boolean> | boolean, within = 1000): Promise<void> {
  const deadline = Date.now() + within;
  for (;;) {
    if (await check()) return;
    if (Date.now() >= deadline) throw new Error(`not within ${within} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
