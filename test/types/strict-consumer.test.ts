/**
 * The public types as a consumer on TypeScript's strictest settings reads them
 * (`exactOptionalPropertyTypes` among them, which the repository's own tsconfig leaves off): a
 * consumer module is written next to the sources, importing each subpath's entry as the package
 * maps it, and type-checked in process. Nothing is built.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The sources each subpath the checks import stands for. */
const ENTRIES: Readonly<Record<string, string>> = {
  'paygate-auth': 'src/index.ts',
  'paygate-auth/fastify': 'src/adapters/fastify/index.ts',
  'paygate-auth/testing': 'src/testing/index.ts',
  'paygate-auth/express': 'src/adapters/express/index.ts',
  'paygate-auth/fetch': 'src/adapters/fetch/index.ts',
  'paygate-auth/payment-links': 'src/payment-links/index.ts',
  'paygate-auth/postgres': 'src/postgres/index.ts',
  'paygate-auth/otel': 'src/otel/index.ts',
  'paygate-auth/issuer': 'src/issuer/index.ts',
};

/** The strictest settings a consumer may compile with. */
const STRICTEST: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  types: ['node'],
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noPropertyAccessFromIndexSignature: true,
  verbatimModuleSyntax: true,
  isolatedModules: true,
  skipLibCheck: true,
  noEmit: true,
  paths: Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, [join(root, file)]])),
};

/**
 * The names of `T`'s optional members that refuse `undefined` under `exactOptionalPropertyTypes`,
 * though each one left out or `undefined` takes its default at run time.
 */
const PRELUDE = `
type RefusesUndefined<T> = {
  [K in keyof T]-?: {} extends Pick<T, K> ? ({ readonly [P in K]: undefined } extends Pick<T, K> ? never : K) : never;
}[keyof T];
type Inner<T> = T extends object ? T : never;
`;

/**
 * Calls a consumer writes whose overload depends on an option: with `allowPreflight` left
 * `undefined`, the fetch adapter's handler is still given an `AuthContext`, never `null`.
 */
const CALLS = `
import { withAuth } from 'paygate-auth/fetch';
import type { AuthContext, Verifier } from 'paygate-auth';
declare const verifier: Verifier;
export const preflightUndefined = withAuth((_request: Request, auth: AuthContext) => new Response(auth.tenant.id), {
  verifier,
  allowPreflight: undefined,
});
`;

/** Each options type a consumer passes, as `[label, import, type expression]`. */
const OPTION_TYPES: readonly (readonly [string, string, string])[] = [
  ['VerifierOptions', 'paygate-auth', 'VerifierOptions'],
  ["VerifierOptions['jwksMaxAgeBounds']", 'paygate-auth', "Inner<VerifierOptions['jwksMaxAgeBounds']>"],
  ['IssuerEntry', 'paygate-auth', 'IssuerEntry'],
  ['AuthErrorOptions', 'paygate-auth', 'AuthErrorOptions'],
  ['IssuerRegistryOptions', 'paygate-auth', 'IssuerRegistryOptions'],
  ['MergeKeyHistoryOptions', 'paygate-auth', 'MergeKeyHistoryOptions'],
  ['TestIssuerOptions', 'paygate-auth/testing', 'TestIssuerOptions'],
  ['TestVerifierOptions', 'paygate-auth/testing', 'TestVerifierOptions'],
  ['AddKeyOptions', 'paygate-auth/testing', 'AddKeyOptions'],
  ['RotateOptions', 'paygate-auth/testing', 'RotateOptions'],
  ['ServeJwksOptions', 'paygate-auth/testing', 'ServeJwksOptions'],
  ['TestKeyOptions', 'paygate-auth/testing', 'TestKeyOptions'],
  ['SignRawTokenOptions', 'paygate-auth/testing', 'SignRawTokenOptions'],
  ["TestIssuer['token'] options", 'paygate-auth/testing', "Inner<Parameters<TestIssuer['token']>[2]>"],
  ['fastify route config', 'paygate-auth/fastify', "import('fastify').FastifyContextConfig"],
  ['AuthenticateInput', 'paygate-auth', 'AuthenticateInput'],
  ['ErrorResponseOptions', 'paygate-auth', 'ErrorResponseOptions'],
  ['AuthOptions with a verifier', 'paygate-auth/express', 'Extract<AuthOptions, { readonly verifier: object }>'],
  ["AuthOptions with the verifier's options", 'paygate-auth/express', 'Exclude<AuthOptions, { readonly verifier: object }>'],
  ['PaymentLinkErrorOptions', 'paygate-auth/payment-links', 'PaymentLinkErrorOptions'],
  ['StorageUnavailableErrorOptions', 'paygate-auth/payment-links', 'StorageUnavailableErrorOptions'],
  ['InMemoryIdempotencyStoreOptions', 'paygate-auth/payment-links', 'InMemoryIdempotencyStoreOptions'],
  ['OpenApiDocumentOptions', 'paygate-auth/payment-links', 'OpenApiDocumentOptions'],
  ['PaymentLinkHandlerDeps', 'paygate-auth/payment-links', 'PaymentLinkHandlerDeps'],
  ['GetPaymentLinkHandlerOptions', 'paygate-auth/payment-links', 'GetPaymentLinkHandlerOptions'],
  ['InfoHandlerOptions', 'paygate-auth/payment-links', 'InfoHandlerOptions'],
  ['ChangeOptions', 'paygate-auth/postgres', 'ChangeOptions'],
  ['FollowOptions', 'paygate-auth/postgres', 'FollowOptions'],
  ['ImportIssuersOptions', 'paygate-auth/postgres', 'ImportIssuersOptions'],
  ['MigrateOptions', 'paygate-auth/postgres', 'MigrateOptions'],
  ['PoolSettingsOptions', 'paygate-auth/postgres', 'PoolSettingsOptions'],
  ['PostgresControlsOptions', 'paygate-auth/postgres', 'PostgresControlsOptions'],
  ['PostgresDirectoryOptions', 'paygate-auth/postgres', 'PostgresDirectoryOptions'],
  ['PostgresFollowersOptions', 'paygate-auth/postgres', 'PostgresFollowersOptions'],
  ['PostgresHeartbeatOptions', 'paygate-auth/postgres', 'PostgresHeartbeatOptions'],
  ['PostgresIdempotencyStoreOptions', 'paygate-auth/postgres', 'PostgresIdempotencyStoreOptions'],
  ['PostgresKeyHistoryOptions', 'paygate-auth/postgres', 'PostgresKeyHistoryOptions'],
  ['PostgresListenerOptions', 'paygate-auth/postgres', 'PostgresListenerOptions'],
  ['PostgresPaymentLinkStoreOptions', 'paygate-auth/postgres', 'PostgresPaymentLinkStoreOptions'],
  ['PostgresRegistryOptions', 'paygate-auth/postgres', 'PostgresRegistryOptions'],
  ['ReadIssuerChangesOptions', 'paygate-auth/postgres', 'ReadIssuerChangesOptions'],
  ['ReadIssuersOptions', 'paygate-auth/postgres', 'ReadIssuersOptions'],
  ['UpdateIssuerOptions', 'paygate-auth/postgres', 'UpdateIssuerOptions'],
  ['TelemetryOptions', 'paygate-auth/otel', 'TelemetryOptions'],
  ['IssuerOptions', 'paygate-auth/issuer', 'IssuerOptions'],
  ['FileKeyStoreOptions', 'paygate-auth/issuer', 'FileKeyStoreOptions'],
  ['GenerateKeyFileOptions', 'paygate-auth/issuer', 'GenerateKeyFileOptions'],
  ['InMemoryKeyStoreOptions', 'paygate-auth/issuer', 'InMemoryKeyStoreOptions'],
  ['ReadPrivateKeyFileOptions', 'paygate-auth/issuer', 'ReadPrivateKeyFileOptions'],
  ['RotationOptions', 'paygate-auth/issuer', 'RotationOptions'],
  ['RotationPolicy', 'paygate-auth/issuer', 'RotationPolicy'],
  ['SignTokenOptions', 'paygate-auth/issuer', 'SignTokenOptions'],
  ['SignInput', 'paygate-auth/issuer', 'SignInput'],
  ['TenantSeed', 'paygate-auth/payment-links', 'TenantSeed'],
  ["TenantSeed['stores'] entries", 'paygate-auth/payment-links', "NonNullable<TenantSeed['stores']>[number]"],
  ["TenantSeed['departments'] entries", 'paygate-auth/payment-links', "NonNullable<TenantSeed['departments']>[number]"],
  ["TenantSeed['shoppers'] entries", 'paygate-auth/payment-links', "NonNullable<TenantSeed['shoppers']>[number]"],
  ["TenantSeed['paymentMethods']", 'paygate-auth/payment-links', "Inner<TenantSeed['paymentMethods']>"],
];

let dir: string;
/** The refusals found per label: the members named in the diagnostic, or the whole message. */
const refusals = new Map<string, string[]>();

beforeAll(async () => {
  // Inside the repository (its .tmp/), where the consumer finds node_modules (fastify, @types/node).
  await mkdir(join(root, '.tmp'), { recursive: true });
  dir = await mkdtemp(join(root, '.tmp/strict-consumer-'));
  const imports = new Map<string, Set<string>>();
  for (const [, from, expression] of OPTION_TYPES) {
    for (const name of expression.match(/\b[A-Z]\w+/g) ?? []) {
      if (['Inner', 'Parameters', 'Extract', 'Exclude', 'NonNullable', 'FastifyContextConfig'].includes(name)) continue;
      imports.set(from, (imports.get(from) ?? new Set()).add(name));
    }
  }
  const lines = [
    ...[...imports].map(([from, names]) => `import type { ${[...names].join(', ')} } from '${from}';`),
    "import 'paygate-auth/fastify';",
    PRELUDE,
    CALLS,
    ...OPTION_TYPES.map(([, , expression], index) => `export type Refused${index} = RefusesUndefined<${expression}>;`),
  ];
  const file = join(dir, 'consumer.ts');
  await writeFile(file, lines.join('\n'));
  const program = ts.createProgram([file], STRICTEST);
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file) as ts.SourceFile;
  // Only the consumer's own diagnostics: the sources are compiled with the repository's settings.
  const errors = ts.getPreEmitDiagnostics(program, source).filter((d) => d.category === ts.DiagnosticCategory.Error);
  expect(errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
  for (const statement of source.statements) {
    if (!ts.isTypeAliasDeclaration(statement)) continue;
    const index = Number(/^Refused(\d+)$/.exec(statement.name.text)?.[1]);
    const label = OPTION_TYPES[index]?.[0];
    if (label === undefined) continue;
    const type = checker.getTypeAtLocation(statement.name);
    const members = type.isUnion() ? type.types : type.flags & ts.TypeFlags.Never ? [] : [type];
    refusals.set(
      label,
      members.map((member) => checker.typeToString(member)),
    );
  }
}, 120_000);

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('a consumer compiling with exactOptionalPropertyTypes', () => {
  it.each(OPTION_TYPES.map(([label]) => label))('may give undefined for every optional member of %s (its default)', (label) => {
    expect(refusals.get(label)).toEqual([]);
  });
});
