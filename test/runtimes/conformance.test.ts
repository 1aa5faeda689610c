/**
 * The runtime conformance suite on Node: each case of `conformance.mjs` as a test, against the
 * built package. Deno, Bun and workerd run the same cases (`npm run test:runtimes`).
 */
import { describe, expect, it } from 'vitest';
import { cases } from './conformance.mjs';

describe('the runtime conformance suite on Node', () => {
  it('has cases', () => {
    expect(cases.length).toBeGreaterThan(0);
  });

  for (const { name, run } of cases) it(name, run);
});
