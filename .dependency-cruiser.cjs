/**
 * Module boundaries of paygate-auth, checked in CI by `npm run lint:boundaries`.
 *
 * Areas: core, http, adapters/*, testing, payment-links, postgres, otel, issuer, cli, and the internal
 * shared module src/internal (no export map exposes it). Directions allowed:
 *   adapters -> http -> core; testing, payment-links, issuer -> the public root (src/index.ts);
 *   postgres -> the public payment-links entry and the root; otel -> the root and the postgres
 *   entry (its option types only); cli -> any public entry, and the command line's own entries of
 *   postgres (src/postgres/internal.ts) and of the issuer kit (src/issuer/internal.ts), which
 *   nothing else outside their area may import.
 * Any area may use src/internal; src/internal may use core and http. Nothing points back.
 */
const entry = {
  root: '^src/index\\.ts$',
  paymentLinks: '^src/payment-links/index\\.ts$',
  postgres: '^src/postgres/index\\.ts$',
  /** The command line's own helpers over the tables: for src/cli only. */
  postgresForCli: '^src/postgres/internal\\.ts$',
  issuer: '^src/issuer/index\\.ts$',
  /** The command line's own helpers from the issuer kit (a crash-safe file write): for src/cli only. */
  issuerForCli: '^src/issuer/internal\\.ts$',
  testing: '^src/testing/(index|msw)\\.ts$',
};
const internal = '^src/internal/';

/** A rule: files matching `from` may import, among src files, only those matching `allowed`. */
function only(name, from, allowed) {
  return {
    name,
    severity: 'error',
    comment: `${name}: imports outside its own area go through a public entry or src/internal`,
    from: { path: from },
    to: { path: '^src/', pathNot: [...allowed, internal] },
  };
}

module.exports = {
  forbidden: [
    only('core-stays-core', '^src/core/', ['^src/core/']),
    only('http-uses-core', '^src/http/', ['^src/http/', '^src/core/']),
    only('adapter-uses-http-and-core', '^src/adapters/([^/]+)/', ['^src/adapters/$1/', '^src/http/', '^src/core/']),
    only('internal-uses-core-and-http', internal, ['^src/core/', '^src/http/']),
    only('root-entry-exports-core-and-http', entry.root, ['^src/core/', '^src/http/']),
    only('testing-uses-root', '^src/testing/', ['^src/testing/', entry.root]),
    only('payment-links-uses-root', '^src/payment-links/', ['^src/payment-links/', entry.root]),
    only('issuer-uses-root', '^src/issuer/', ['^src/issuer/', entry.root]),
    only('postgres-uses-root-and-payment-links', '^src/postgres/', ['^src/postgres/', entry.root, entry.paymentLinks]),
    only('otel-uses-root-and-postgres', '^src/otel/', ['^src/otel/', entry.root, entry.postgres]),
    only('cli-uses-public-entries', '^src/cli/', [
      '^src/cli/',
      entry.root,
      entry.paymentLinks,
      entry.postgres,
      entry.postgresForCli,
      entry.issuer,
      entry.issuerForCli,
      entry.testing,
    ]),
    {
      name: 'postgres-internal-is-for-the-cli',
      severity: 'error',
      comment: "postgres-internal-is-for-the-cli: src/postgres/internal.ts holds the command line's own helpers; only src/cli imports it",
      from: { pathNot: ['^src/cli/', '^src/postgres/'] },
      to: { path: entry.postgresForCli },
    },
    {
      name: 'issuer-internal-is-for-the-cli',
      severity: 'error',
      comment: "issuer-internal-is-for-the-cli: src/issuer/internal.ts holds the command line's own helpers; only src/cli imports it",
      from: { pathNot: ['^src/cli/', '^src/issuer/'] },
      to: { path: entry.issuerForCli },
    },
    {
      name: 'issuer-does-not-use-its-cli-entry',
      severity: 'error',
      comment: 'issuer-does-not-use-its-cli-entry: the issuer kit imports the module that defines a helper, never the entry',
      from: { path: '^src/issuer/' },
      to: { path: entry.issuerForCli },
    },
    {
      name: 'postgres-does-not-use-its-cli-entry',
      severity: 'error',
      comment: 'postgres-does-not-use-its-cli-entry: the followers and stores import the module that defines a helper, never the entry',
      from: { path: '^src/postgres/' },
      to: { path: entry.postgresForCli },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'a cycle between modules hides which one depends on which (a type-only import is no load-time cycle)',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '\\.test\\.ts$' },
  },
};
