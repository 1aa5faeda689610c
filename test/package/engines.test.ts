/**
 * `engines.node` admits only the Node releases that load the CommonJS build: it reaches jose, which
 * is ESM only, through `require(esm)`, which Node runs without a flag from 20.19 on the 20 line,
 * from 22.12 on the 22 line, and from 23.0 on. Node 21 and 22.0 to 22.11 throw `ERR_REQUIRE_ESM`
 * at `require('paygate-auth')`.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

/** The `semver` npm and Fastify judge ranges with (a dependency of Fastify's). */
const semver = createRequire(createRequire(import.meta.url).resolve('fastify'))('semver') as {
  satisfies(version: string, range: string): boolean;
};
const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } }>;
};

/** Releases on either side of each line's first `require(esm)` without a flag. */
const WITH_REQUIRE_ESM = ['20.19.0', '20.20.2', '22.12.0', '22.20.0', '23.0.0', '24.0.0', '25.1.0'];
const WITHOUT_REQUIRE_ESM = ['20.18.3', '21.7.3', '22.0.0', '22.11.0'];

describe("package.json's engines", () => {
  it.each(WITH_REQUIRE_ESM)('admits Node %s, which loads ES modules through require()', (version) => {
    expect(semver.satisfies(version, manifest.engines.node)).toBe(true);
  });

  it.each(WITHOUT_REQUIRE_ESM)('refuses Node %s, on which require() of jose throws ERR_REQUIRE_ESM', (version) => {
    expect(semver.satisfies(version, manifest.engines.node)).toBe(false);
  });

  it('is the one the lock file records for the package', () => {
    expect(lock.packages['']?.engines?.node).toBe(manifest.engines.node);
  });
});
