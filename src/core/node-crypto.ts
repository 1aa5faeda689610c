/**
 * `node:crypto` where the runtime has it (Node, and runtimes that offer Node's modules), reached
 * through `process.getBuiltinModule`, never imported, so that the core loads on runtimes without
 * it (workerd, browsers); `undefined` elsewhere.
 */
export type NodeCrypto = typeof import('node:crypto');

let loaded: NodeCrypto | null | undefined;

/** `node:crypto`, looked up once; `undefined` when this runtime lacks it. */
export function loadNodeCrypto(): NodeCrypto | undefined {
  if (loaded === undefined) {
    const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    loaded = (proc?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined) ?? null;
  }
  return loaded ?? undefined;
}
