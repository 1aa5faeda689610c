/**
 * The one home of option checks (src/core/options.ts), and every public function that takes an
 * options object refusing a misspelt option, naming the nearest known one: in JavaScript (no type
 * to catch it) a misspelt option is otherwise a silent misconfiguration.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import * as express from '../../src/adapters/express/index.js';
import * as fetchAdapter from '../../src/adapters/fetch/index.js';
import * as fastify from '../../src/adapters/fastify/index.js';
import * as hono from '../../src/adapters/hono/index.js';
import * as koa from '../../src/adapters/koa/index.js';
import {
  describe as describeValue,
  functionOption,
  methodsOption,
  nearestName,
  numberOption,
  rejectUnknownOptions,
} from '../../src/core/options.js';
import { IssuerRegistry, authenticate, createVerifier, toErrorResponse } from '../../src/index.js';
import * as issuer from '../../src/issuer/index.js';
import { createTelemetry } from '../../src/otel/index.js';
import * as links from '../../src/payment-links/index.js';
import * as postgresFleet from '../../src/postgres/fleet.js';
import * as postgres from '../../src/postgres/index.js';
import * as postgresInternal from '../../src/postgres/internal.js';
import { createTestIssuer, createTestVerifier, generateTestKey, signRawToken } from '../../src/testing/index.js';

const ISSUER = 'https://auth.acme.example';
const ENTRY = { issuer: ISSUER, jwksUri: `${ISSUER}/jwks.json`, products: ['acme'] };
const VERIFIER_OPTIONS = { registry: [ENTRY], audience: 'https://payments.example' };

/** A database no check may reach: the options are refused first. */
const db = {
  query: async () => {
    throw new Error('the database was reached before the options were checked');
  },
};

describe('nearestName', () => {
  it.each([
    ['requiredScope', 'requiredScopes'],
    ['clockTolerence', 'clockTolerance'],
    ['ClockTolerance', 'clockTolerance'],
    ['jwksMaxAeg', 'jwksMaxAge'],
    ['statmentTimeout', 'statementTimeout'],
  ])('names %s as the nearest of the known names: %s', (given, nearest) => {
    expect(nearestName(given, ['requiredScopes', 'clockTolerance', 'jwksMaxAge', 'statementTimeout', 'realm'])).toBe(nearest);
  });

  it('names none when no known name is near', () => {
    expect(nearestName('colour', ['requiredScopes', 'realm'])).toBeUndefined();
  });

  it('stays cheap on a long hostile name (compared by its first 64 characters)', () => {
    expect(nearestName('a'.repeat(100_000), ['realm'])).toBeUndefined();
  });
});

describe('the value found, as messages describe it', () => {
  it('escapes the bidirectional and line-breaking characters of a string, which a log line must not hold raw', () => {
    const shown = describeValue('https://a.test\u202e\u2028x');
    expect(shown).toContain('\\u202e');
    expect(shown).toContain('\\u2028');
    expect(shown).not.toMatch(/[\u202e\u2028]/);
  });

  it('cuts a long string, so a message stays one short line', () => {
    expect(describeValue('x'.repeat(10_000)).length).toBeLessThan(100);
  });
});

describe('the option checks', () => {
  it('refuses an unknown option, naming it and the nearest known one', () => {
    expect(() => rejectUnknownOptions('f', { realms: 'x' }, new Set(['realm']))).toThrow(
      'f: unknown option "realms" (did you mean "realm"?)',
    );
  });

  it.each([
    [null, 'null'],
    ['realm', '"realm"'],
    [['realm'], 'an array'],
  ])('refuses options that are not an object (%j), naming the value found', (options, found) => {
    expect(() => rejectUnknownOptions('f', options as object, new Set(['realm']))).toThrow(
      new TypeError(`f: options must be an object, got ${found}`),
    );
  });

  it('lists the options when none is near', () => {
    expect(() => rejectUnknownOptions('f', { colour: 1 }, new Set(['realm', 'audience']))).toThrow(
      'f: unknown option "colour" (the options are realm, audience)',
    );
  });

  it.each([
    [Number.NaN, 'a whole number of milliseconds from 10 to 100, got NaN'],
    [5, 'got 5'],
    [10.5, 'got 10.5'],
    ['20', 'got "20"'],
  ])('refuses %s as a number option, naming the rule and the value', (value, message) => {
    expect(() => numberOption('f', 'timeout', value, 50, { min: 10, max: 100, integer: true, unit: 'milliseconds' })).toThrow(message);
  });

  it('takes 0 where the rule allows it to turn a feature off', () => {
    expect(numberOption('f', 'interval', 0, 50, { min: 10, max: 100, orZero: true })).toBe(0);
  });

  it('refuses a minimum the rule excludes', () => {
    expect(() => numberOption('f', 'lifetime', 0, 50, { min: 0, max: 100, exclusiveMin: true })).toThrow('above 0 and at most 100');
  });

  it('refuses a function option that is no function', () => {
    expect(() => functionOption('f', 'onEvent', 'log')).toThrow('f: onEvent must be a function, got "log"');
  });

  it('refuses an object without a method required, naming the method', () => {
    expect(() => methodsOption('f', 'store', { get() {} }, ['get', 'put'], 'a store')).toThrow(
      'f: store must be a store (store.put must be a function, got undefined)',
    );
  });
});

/** Each public function that takes an options object, called with one option misspelt. */
const CALLS: readonly [string, string, string, () => unknown][] = [
  [
    'authenticate',
    'requiredScope',
    'requiredScopes',
    () => authenticate(createVerifier(VERIFIER_OPTIONS), { authorization: undefined, requiredScope: 'pay:processPayments' } as never),
  ],
  ['createVerifier', 'clockTolerence', 'clockTolerance', () => createVerifier({ ...VERIFIER_OPTIONS, clockTolerence: 5 } as never)],
  ['IssuerRegistry', 'allowEmtpy', 'allowEmpty', () => new IssuerRegistry([], { allowEmtpy: true } as never)],
  ['toErrorResponse', 'exposeHint', 'exposeHints', () => toErrorResponse(new Error('x'), { exposeHint: true } as never)],
  ['express auth', 'requiredScope', 'requiredScopes', () => express.auth({ ...VERIFIER_OPTIONS, requiredScope: 'x' } as never)],
  [
    'fastify paygateAuth',
    'realms',
    'realm',
    () =>
      Fastify()
        .register(fastify.paygateAuth, { ...VERIFIER_OPTIONS, realms: 'x' } as never)
        .ready(),
  ],
  ['koa auth', 'allowPreflights', 'allowPreflight', () => koa.auth({ ...VERIFIER_OPTIONS, allowPreflights: true } as never)],
  [
    'fetch withAuth',
    'forwardError',
    'forwardErrors',
    () => fetchAdapter.withAuth(() => new Response(), { ...VERIFIER_OPTIONS, forwardError: true } as never),
  ],
  ['hono auth', 'requiredScope', 'requiredScopes', () => hono.auth({ ...VERIFIER_OPTIONS, requiredScope: 'x' } as never)],
  ['createTestVerifier', 'audiences', 'audience', async () => createTestVerifier(await createTestIssuer(), { audiences: 'x' } as never)],
  ['createTestIssuer', 'tenantNmae', 'tenantName', () => createTestIssuer({ tenantNmae: 'x' } as never)],
  ['generateTestKey', 'modulusLenght', 'modulusLength', () => generateTestKey({ modulusLenght: 2048 } as never)],
  ['signRawToken', 'algo', 'alg', async () => signRawToken(await generateTestKey(), {}, {}, { algo: 'RS256' } as never)],
  [
    'createPaymentLinkHandler',
    'payPageURL',
    'payPageUrl',
    () => links.createPaymentLinkHandler({ payPageURL: 'https://pay.example' } as never),
  ],
  ['createInfoHandler', 'realms', 'realm', () => links.createInfoHandler({ realms: 'x' } as never)],
  ['createGetPaymentLinkHandler', 'stores', 'store', () => links.createGetPaymentLinkHandler({ stores: {} } as never)],
  ['createOpenApiDocument', 'server', 'servers', () => links.createOpenApiDocument({ server: [] } as never)],
  ['InMemoryIdempotencyStore', 'maxRecord', 'maxRecords', () => new links.InMemoryIdempotencyStore({ maxRecord: 5 } as never)],
  ['createTelemetry', 'meterProviders', 'meterProvider', () => createTelemetry({ meterProviders: {} } as never)],
  ['createIssuer', 'maxLifetme', 'maxLifetime', () => issuer.createIssuer({ maxLifetme: 60 } as never)],
  ['signToken', 'maxLifetme', 'maxLifetime', () => issuer.signToken({} as never, { maxLifetme: 60 } as never)],
  ['FileKeyStore', 'directroy', 'directory', () => new issuer.FileKeyStore({ directroy: '/tmp/x' } as never)],
  ['InMemoryKeyStore', 'modulusLenght', 'modulusLength', () => new issuer.InMemoryKeyStore({ modulusLenght: 2048 } as never)],
  ['generateKeyFile', 'fromat', 'format', () => issuer.generateKeyFile('/nonexistent/key.pem', { fromat: 'jwk' } as never)],
  ['readPrivateKeyFile', 'kids', 'kid', () => issuer.readPrivateKeyFile('/nonexistent/key.pem', { kids: 'k' } as never)],
  ['migrate', 'onyl', 'only', () => postgres.migrate(db, { onyl: 'links' } as never)],
  ['postgresRegistry', 'pollIntreval', 'pollInterval', () => postgres.postgresRegistry(db, { pollIntreval: 100 } as never)],
  ['postgresControls', 'onErorr', 'onError', () => postgres.postgresControls(db, { onErorr: () => undefined } as never)],
  ['postgresKeyHistory', 'flushIntervall', 'flushInterval', () => postgres.postgresKeyHistory(db, { flushIntervall: 100 } as never)],
  ['postgresHeartbeat', 'intervall', 'interval', () => postgres.postgresHeartbeat(db, { intervall: 100 } as never)],
  ['readInstances', 'statementTimout', 'statementTimeout', () => postgresFleet.readInstances(db, { statementTimout: 100 } as never)],
  ['readFleet', 'statementTimout', 'statementTimeout', () => postgresInternal.readFleet(db, { statementTimout: 100 } as never)],
  ['waitForFleet', 'timout', 'timeout', () => postgresInternal.waitForFleet(db, { timout: 100 } as never)],
  ['readKeyHistory', 'isuer', 'issuer', () => postgresInternal.readKeyHistory(db, { isuer: ISSUER } as never)],
  ['addIssuer', 'bye', 'by', () => postgres.addIssuer(db, ENTRY, { bye: 'ops' } as never)],
  ['updateIssuer', 'expect', 'expected', () => postgres.updateIssuer(db, ENTRY, { by: 'ops', expect: ENTRY } as never)],
  ['removeIssuer', 'bye', 'by', () => postgres.removeIssuer(db, ISSUER, { bye: 'ops' } as never)],
  [
    'importIssuers',
    'unchangedSinse',
    'unchangedSince',
    () => postgres.importIssuers(db, [ENTRY], { by: 'ops', unchangedSinse: 1 } as never),
  ],
  ['readIssuers', 'jwksAllowedHost', 'jwksAllowedHosts', () => postgres.readIssuers(db, { jwksAllowedHost: [] } as never)],
  ['readIssuerChanges', 'isuer', 'issuer', () => postgres.readIssuerChanges(db, { isuer: ISSUER } as never)],
  [
    'readLastIssuerChange',
    'statementTimout',
    'statementTimeout',
    () => postgres.readLastIssuerChange(db, { statementTimout: 100 } as never),
  ],
  ['poolSettings', 'maxx', 'max', () => postgres.poolSettings('postgres://db/x', { maxx: 5 } as never)],
  ['PostgresDirectory', 'statementTimout', 'statementTimeout', () => new postgres.PostgresDirectory(db, { statementTimout: 100 } as never)],
  ['PostgresDirectory', 'cacheSise', 'cacheSize', () => new postgres.PostgresDirectory(db, { cacheSise: 100 } as never)],
  ['postgresFollowers', 'keyHistroy', 'keyHistory', () => postgres.postgresFollowers(db, { keyHistroy: false } as never)],
  ['postgresListener', 'heartbeatIntreval', 'heartbeatInterval', () => postgres.postgresListener(db, { heartbeatIntreval: 100 } as never)],
  [
    'PostgresPaymentLinkStore',
    'statementTimout',
    'statementTimeout',
    () => new postgres.PostgresPaymentLinkStore(db, { statementTimout: 100 } as never),
  ],
  ['PostgresIdempotencyStore', 'leaseTim', 'leaseTime', () => new postgres.PostgresIdempotencyStore(db, { leaseTim: 100 } as never)],
];

describe('every public function that takes an options object', () => {
  it.each(CALLS)('%s refuses the misspelt option %s, naming %s', async (_name, misspelt, nearest, call) => {
    const outcome = Promise.resolve().then(call);
    await expect(outcome).rejects.toThrow(TypeError);
    await expect(outcome).rejects.toThrow(`unknown option "${misspelt}" (did you mean "${nearest}"?)`);
  });
});

/** Number options given as text (as read from the environment): the message must show a string. */
const NUMBERS_AS_TEXT: [string, string, () => unknown][] = [
  ['poolSettings', 'connectTimeout', () => postgres.poolSettings('postgres://db/x', { connectTimeout: '5000' } as never)],
  ['poolSettings', 'max', () => postgres.poolSettings('postgres://db/x', { max: '20' } as never)],
  ['InMemoryIdempotencyStore', 'maxRecords', () => new links.InMemoryIdempotencyStore({ maxRecords: '1000' } as never)],
  ['PostgresDirectory', 'cacheSize', () => new postgres.PostgresDirectory(db, { cacheSize: '100' } as never)],
  ['updateIssuer', 'unchangedSince', () => postgres.updateIssuer(db, ENTRY, { by: 'ops', unchangedSince: '3' } as never)],
  ['waitForFleet', 'registryChange', () => postgresFleet.waitForFleet(db, { registryChange: '3' } as never)],
];

describe('a number option given as text', () => {
  it.each(NUMBERS_AS_TEXT)('%s refuses %s quoting the text found, not showing it as a number', async (owner, option, call) => {
    const outcome = Promise.resolve().then(call);
    await expect(outcome).rejects.toThrow(TypeError);
    await expect(outcome).rejects.toThrow(new RegExp(`^${owner}: ${option} must be .*, got "\\d+"$`));
  });
});
