import { describe, expect, it } from 'vitest';
import { requirementFromArguments } from '../../src/http/scope-arguments.js';

describe('requirementFromArguments', () => {
  it('takes several scopes as all of them', () => {
    expect(requirementFromArguments(['pay:processPayments', 'hub:subscribe'])).toMatchObject({
      mode: 'allOf',
      scopes: ['pay:processPayments', 'hub:subscribe'],
    });
  });

  it('refuses no argument, saying none was found and how to call it', () => {
    expect(() => requirementFromArguments([])).toThrow(
      /^requireScopes: give at least one scope, got none: requireScopes\('pay:processPayments'\)/,
    );
  });

  it('takes one scope as that scope', () => {
    expect(requirementFromArguments(['pay:chargeToken'])).toMatchObject({ mode: 'allOf', scopes: ['pay:chargeToken'] });
  });

  it('takes an array as all of its scopes', () => {
    expect(requirementFromArguments([['pay:chargeToken', 'hub:subscribe']])).toMatchObject({
      mode: 'allOf',
      scopes: ['pay:chargeToken', 'hub:subscribe'],
    });
  });

  it('keeps { anyOf } and { allOf } as they are', () => {
    expect(requirementFromArguments([{ anyOf: ['pay:chargeToken', 'hub:subscribe'] }])).toMatchObject({
      mode: 'anyOf',
      scopes: ['pay:chargeToken', 'hub:subscribe'],
    });
    expect(requirementFromArguments([{ allOf: ['pay:chargeToken'] }])).toMatchObject({
      mode: 'allOf',
      scopes: ['pay:chargeToken'],
    });
  });

  it.each([
    ['a number', [42], /^requireScopes must be a scope, an array of scopes .*, got 42$/],
    ['a misspelt { anyof }', [{ anyof: ['pay:chargeToken'] }], /^requireScopes must be a scope, .*, got object$/],
    [
      '{ anyOf } holding a string',
      [{ anyOf: 'pay:chargeToken' }],
      /^requireScopes\.anyOf must be a non-empty array of scopes, got "pay:chargeToken"$/,
    ],
  ])('refuses %s, naming the value found', (_name, args, message) => {
    expect(() => requirementFromArguments(args)).toThrow(message);
  });

  it('names a refused scope escaped for one log line, never with its bidi or control characters raw', () => {
    expect(() => requirementFromArguments(['pay:\u202eprocess\u2028'])).toThrow(/^requireScopes\[0\] must be a scope token/);
    expect(() => requirementFromArguments(['pay:\u202eprocess\u2028'])).not.toThrow(/[\u202e\u2028]/);
  });

  it('refuses the arguments of a middleware call (requireScopes mounted uncalled), saying to call it', () => {
    expect(() => requirementFromArguments([{ method: 'GET', headers: {} }, {}, () => {}])).toThrow(
      /^requireScopes: several arguments must all be scopes, got object at \[0\]: .*mounted as middleware itself.*requireScopes\('pay:processPayments'\)/,
    );
  });

  it('returns a frozen requirement, so it is normalized once', () => {
    expect(Object.isFrozen(requirementFromArguments(['pay:chargeToken']))).toBe(true);
  });

  it.each([
    ['no arguments', []],
    ['a scope with a space', ['pay:a pay:b']],
    ['an empty scope', ['']],
    ['a number', [42]],
    ['an empty anyOf', [{ anyOf: [] }]],
    ['an object with another key', [{ oneOf: ['pay:chargeToken'] }]],
    ['several arguments that are not all scopes', ['pay:chargeToken', { anyOf: ['hub:subscribe'] }]],
  ])('rejects %s with a TypeError naming requireScopes', (_name, args) => {
    expect(() => requirementFromArguments(args)).toThrow(TypeError);
    expect(() => requirementFromArguments(args)).toThrow(/^requireScopes/);
  });
});
