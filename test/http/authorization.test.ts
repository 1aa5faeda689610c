import { describe, expect, test } from 'vitest';
import { AuthError, extractBearerToken } from '../../src/index.js';

function failure(authorization: unknown): AuthError {
  try {
    extractBearerToken(authorization as string);
  } catch (error) {
    if (error instanceof AuthError) return error;
    throw error;
  }
  throw new Error('expected an AuthError');
}

describe('extractBearerToken', () => {
  test.each([
    ['Bearer abc.def.ghi', 'abc.def.ghi'],
    ['bearer abc', 'abc'],
    ['BEARER abc', 'abc'],
    ['Bearer   abc', 'abc'],
    ['  Bearer abc  ', 'abc'],
    ['Bearer a-b_c.d~e+f/g==', 'a-b_c.d~e+f/g=='],
  ])('reads the token of %j', (header, token) => {
    expect(extractBearerToken(header)).toBe(token);
  });

  test('a one-element array of headers is fine', () => {
    expect(extractBearerToken(['Bearer abc'])).toBe('abc');
  });

  test.each([
    ['no header', undefined],
    ['null', null],
    ['an empty array', []],
    ['an empty value', ''],
    ['white space only', '   '],
    ['the Basic scheme', 'Basic dXNlcjpwYXNz'],
    ['a scheme that only starts with Bearer', 'Bearerx abc'],
    ['a token with no scheme', 'abc.def.ghi'],
  ])('%s is missing_token (401, challenge without error)', (_name, header) => {
    const error = failure(header);
    expect(error.code).toBe('missing_token');
    expect(error.status).toBe(401);
    expect(error.error).toBeNull();
  });

  test.each([
    ['Bearer with no token', 'Bearer'],
    ['Bearer with an empty token', 'Bearer    '],
    ['two tokens', 'Bearer abc def'],
    ['two headers', ['Bearer abc', 'Bearer def']],
    ['a Headers join of two (attack: smuggling a second credential)', 'Bearer abc, Bearer def'],
    ['a token with a comma', 'Bearer abc,def'],
    ['a token with a double quote', 'Bearer "abc"'],
    ['a token with padding inside', 'Bearer ab=c'],
    ['a value that is not a string', 42],
    ['an array holding a non-string', [42]],
  ])('%s is invalid_request (400)', (_name, header) => {
    const error = failure(header);
    expect(error.code).toBe('invalid_request');
    expect(error.status).toBe(400);
    expect(error.error).toBe('invalid_request');
  });

  test.each([
    ['a non-ASCII character', 'Bearer abc.d\u00e9f.ghi', 'invalid_request'],
    ['a character outside b64token', 'Bearer abc.d*f.ghi', 'invalid_request'],
    ['padding before the end', 'Bearer abc=.def', 'invalid_request'],
    ['a tab between scheme and token (no Bearer scheme)', 'Bearer\tabc', 'missing_token'],
  ])('%s is %s', (_name, header, code) => {
    expect(failure(header).code).toBe(code);
  });

  test('leaves the size to the verifier: a long b64token is read whole', () => {
    const token = 'a'.repeat(100_000);
    expect(extractBearerToken(`Bearer ${token}`)).toBe(token);
  });

  test.each([
    ['b64token characters then a quote', `Bearer ${'a'.repeat(1_000_000)}"`],
    ['spaces then nothing', `Bearer${' '.repeat(1_000_000)}x"`],
    ['padding then a character', `Bearer a${'='.repeat(1_000_000)}a`],
    ['leading white space', `${' '.repeat(1_000_000)}Basic`],
  ])('refuses a hostile 1 MB value (%s) in linear time (attack: a header made to backtrack)', (_name, header) => {
    // A pattern that backtracked would take on the order of 10^12 steps here, not milliseconds.
    const started = performance.now();
    expect(failure(header).status).toBeLessThan(500);
    expect(performance.now() - started).toBeLessThan(2000); // generous margin: linear is a few ms
  });

  test('its error messages never contain the token', () => {
    const secret = 'eyJhbGciOiJSUzI1NiJ9.c2VjcmV0.c2ln';
    for (const header of [`Bearer ${secret} x`, `Bearer ${secret}"`, [`Bearer ${secret}`, 'Bearer y']]) {
      expect(failure(header).message).not.toContain(secret);
    }
  });
});
