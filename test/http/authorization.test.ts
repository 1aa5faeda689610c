import { describe, expect, test } from 'vitest';
import { AuthError, extractBearerToken } from '../../src/index.js';

function failure(authorization: unknown, maxTokenBytes = 8192): AuthError {
  try {
    extractBearerToken(authorization as string, maxTokenBytes);
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
    expect(extractBearerToken(header, 8192)).toBe(token);
  });

  test('a one-element array of headers is fine', () => {
    expect(extractBearerToken(['Bearer abc'], 8192)).toBe('abc');
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

  test('a token over the limit is token_too_large, before its characters are inspected', () => {
    const error = failure(`Bearer ${'"'.repeat(8193)}`);
    expect(error.code).toBe('token_too_large');
    expect(error.status).toBe(401);
  });

  test('the limit is the one given', () => {
    expect(failure('Bearer abcdef', 5).code).toBe('token_too_large');
    expect(extractBearerToken('Bearer abcde', 5)).toBe('abcde');
  });

  test('its error messages never contain the token', () => {
    const secret = 'eyJhbGciOiJSUzI1NiJ9.c2VjcmV0.c2ln';
    for (const header of [`Bearer ${secret} x`, `Bearer ${secret}"`, [`Bearer ${secret}`, 'Bearer y']]) {
      expect(failure(header).message).not.toContain(secret);
    }
  });
});
