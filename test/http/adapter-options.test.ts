import { describe, expect, it } from 'vitest';
import { IssuerRegistry } from '../../src/core/registry.js';
import { type Verifier, createVerifier } from '../../src/core/verifier.js';
import { resolveAdapterOptions } from '../../src/http/adapter-options.js';

const entry = { issuer: 'https://issuer.test', jwksUri: 'https://issuer.test/jwks.json', products: ['acme'] };
const verifier = createVerifier({ registry: new IssuerRegistry([entry]), audience: 'https://payments.test' });

describe('resolveAdapterOptions', () => {
  it('keeps a given verifier and fills in the defaults', () => {
    expect(resolveAdapterOptions('auth', { verifier })).toEqual({
      verifier,
      requiredScopes: undefined,
      realm: 'paygate',
      allowPreflight: false,
      forwardErrors: false,
      exposeHints: false,
    });
  });

  it("keeps a given verifier beside verifier options left undefined (their defaults, not the verifier's options)", () => {
    const settings = resolveAdapterOptions('auth', { verifier, audience: undefined, registry: undefined, jwksTimeout: undefined });
    expect(settings.verifier).toBe(verifier);
  });

  it('builds a verifier from the flat options when verifier is undefined', () => {
    const settings = resolveAdapterOptions('auth', { verifier: undefined, registry: [entry], audience: 'https://payments.test' });
    expect(settings.verifier).not.toBe(verifier);
  });

  it('keeps exposeHints when given', () => {
    expect(resolveAdapterOptions('auth', { verifier, exposeHints: true }).exposeHints).toBe(true);
  });

  it('builds a verifier from the verifier options given flat', () => {
    const settings = resolveAdapterOptions('auth', {
      registry: [entry],
      audience: 'https://payments.test',
      maxTokenBytes: 4096,
    });
    expect(settings.verifier).not.toBe(verifier);
    expect((settings.verifier as Verifier).maxTokenBytes).toBe(4096);
  });

  it('reports a bad flat verifier option through createVerifier, naming it', () => {
    expect(() => resolveAdapterOptions('auth', { registry: [entry], audience: [] })).toThrow(/audience/);
  });

  it('keeps the adapter options beside the verifier options', () => {
    const settings = resolveAdapterOptions('withAuth', {
      registry: [entry],
      audience: 'https://payments.test',
      requiredScopes: 'pay:processPayments',
      realm: 'payments',
      allowPreflight: true,
      forwardErrors: true,
    });
    expect(settings).toMatchObject({
      requiredScopes: { mode: 'allOf', scopes: ['pay:processPayments'] },
      realm: 'payments',
      allowPreflight: true,
      forwardErrors: true,
    });
  });

  it('puts requiredScopes in a stable, frozen shape', () => {
    const settings = resolveAdapterOptions('auth', {
      verifier,
      requiredScopes: { anyOf: ['pay:chargeToken', 'hub:subscribe'] },
    });
    expect(settings.requiredScopes).toMatchObject({ mode: 'anyOf', scopes: ['pay:chargeToken', 'hub:subscribe'] });
    expect(Object.isFrozen(settings.requiredScopes)).toBe(true);
  });

  it.each([
    ['options that are not an object', null, /^auth: options must be an object/],
    ['an array for options', [], /^auth: options must be an object/],
    ['neither a verifier nor its options', {}, /^auth: verifier is required/],
    [
      'a verifier together with its options',
      { verifier, audience: 'https://payments.test' },
      /^auth: give verifier or the verifier's options, not both \(found "audience"\)/,
    ],
    ['a verifier without verify()', { verifier: { maxTokenBytes: 8192 } }, /^auth: verifier must be/],
    [
      'a verifier whose verifyNow is not a function',
      { verifier: { verify: async (): Promise<void> => undefined, verifyNow: 1 } },
      /^auth: verifier must be/,
    ],
    [
      'a verifier whose holds is not a function',
      { verifier: { verify: async (): Promise<void> => undefined, holds: true } },
      /^auth: verifier must be/,
    ],
    ['an unknown option', { verifier, allowPreflights: true }, /^auth: unknown option "allowPreflights"/],
    ['a realm with a quote', { verifier, realm: 'a"b' }, /^auth: realm must be .*, got "a\\"b"$/],
    ['an empty realm', { verifier, realm: '' }, /^auth: realm must be .*, got ""$/],
    ['a realm that is not a string', { verifier, realm: 7 }, /^auth: realm must be .*, got 7$/],
    ['a non-boolean allowPreflight', { verifier, allowPreflight: 'true' }, /^auth: allowPreflight must be a boolean/],
    ['a non-boolean forwardErrors', { verifier, forwardErrors: 0 }, /^auth: forwardErrors must be a boolean/],
    ['a non-boolean exposeHints', { verifier, exposeHints: 'yes' }, /^auth: exposeHints must be a boolean/],
    ['a malformed requiredScopes', { verifier, requiredScopes: { anyOf: 'pay:chargeToken' } }, /^auth: requiredScopes\.anyOf must be/],
  ])('rejects %s with a TypeError naming the option', (_name, options, message) => {
    expect(() => resolveAdapterOptions('auth', options)).toThrow(TypeError);
    expect(() => resolveAdapterOptions('auth', options)).toThrow(message);
  });

  it('names what was found and what to pass when no verifier is given', () => {
    expect(() => resolveAdapterOptions('auth', {})).toThrow(
      /^auth: verifier is required, got no verifier and none of the verifier's options: pass \{ verifier \} with a verifier from createVerifier\(\)/,
    );
    expect(() => resolveAdapterOptions('auth', { verifier: undefined, realm: 'x' })).toThrow(
      /^auth: verifier is required, got verifier undefined: pass \{ verifier \}/,
    );
  });

  it('says to pass { verifier } when the options are missing', () => {
    expect(() => resolveAdapterOptions('auth', undefined)).toThrow(
      /^auth: options must be an object, got undefined: pass \{ verifier \} with a verifier from createVerifier\(\)$/,
    );
  });

  it("refuses the verifier's options without a registry, naming registry and the options found", () => {
    expect(() => resolveAdapterOptions('auth', { audience: 'https://payments.test' })).toThrow(
      /^auth: registry is required with the verifier's options, got "audience" without it: add registry: new IssuerRegistry/,
    );
  });

  it("names the adapter when the verifier's options it was given are refused", () => {
    expect(() =>
      resolveAdapterOptions('auth', { registry: new IssuerRegistry([entry]), audience: 'https://payments.test', jwksMaxAge: '600' }),
    ).toThrow(/^auth: createVerifier: jwksMaxAge must be .*, got "600"$/);
  });

  it('returns frozen settings', () => {
    expect(Object.isFrozen(resolveAdapterOptions('auth', { verifier }))).toBe(true);
  });
});
