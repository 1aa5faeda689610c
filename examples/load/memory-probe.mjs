/**
 * Preloaded into the example gateway by the load run (`node --expose-gc --import <this file>
 * examples/gateway/server.mjs`), so that the gateway itself stays unchanged: answers the load
 * run's `{ type: 'memory' }` messages over the IPC channel with `process.memoryUsage()`, taken
 * after a full garbage collection when asked to, and exits when the load run goes away.
 */
process.on('message', (message) => {
  if (message?.type !== 'memory') return;
  if (message.gc === true && typeof globalThis.gc === 'function') globalThis.gc();
  process.send?.({ type: 'memory', id: message.id, usage: process.memoryUsage() });
});

// The load run ended (or died) without stopping the gateway: stop it rather than linger.
process.on('disconnect', () => process.exit(0));
