/**
 * The conformance suite as a Worker for `workerd test`: its `test` handler runs every case and
 * throws when one fails. `run.mjs` bundles it with the built package (esbuild, the `workerd`,
 * `worker` and `browser` conditions) and writes the workerd config beside the bundle.
 */
import { cases, runCases } from './conformance.mjs';

export default {
  async test() {
    const { failed } = await runCases(cases, 'workerd');
    if (failed > 0 || cases.length === 0) throw new Error(`workerd: ${failed} of ${cases.length} cases failed`);
  },
};
