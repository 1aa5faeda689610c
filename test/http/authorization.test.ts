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

  test.each([
    ['a no-break space after the token', 'Bearer abc\u00a0', 'invalid_request', 'U+00A0 at character 4'],
    ['a vertical tab after the token', 'Bearer abc\u000b', 'invalid_request', 'U+000B at character 4'],
    ['a no-break space before the token', 'Bearer \u00a0abc', 'invalid_request', 'U+00A0 at character 1'],
    ['a tab before the token', 'Bearer \tabc', 'invalid_request', 'U+0009 at character 1'],
    ['a form feed before the scheme', '\u000cBearer abc', 'missing_token', 'another scheme than Bearer'],
  ])(
    'refuses %s: only spaces, tabs and line ends are white space around it (attack: a token a proxy reads otherwise)',
    (_name, header, code, fault) => {
      const error = failure(header);
      expect(error.code).toBe(code);
      expect(error.message).toContain(fault);
    },
  );

  test('refuses a held token followed by a no-break space, as it refuses any token so followed', () => {
    expect(() => extractBearerToken('Bearer abc\u00a0', (token) => token === 'abc')).toThrow(AuthError);
  });

  test.each([
    ['no header', undefined],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['Bearer with no token', 'Bearer'],
    ['two tokens', 'Bearer abc def'],
    ['two headers', ['Bearer abc', 'Bearer def']],
    ['a character outside b64token', 'Bearer abc.d*f.ghi'],
  ])('%s: the message says what to send instead', (_name, header) => {
    expect(failure(header).message).toContain('send "Authorization: Bearer <token>"');
  });

  test('credentials that are not a b64token are named by the first character at fault (code point and place), never quoted', () => {
    const error = failure('Bearer abc.d\u00e9f.ghi');
    expect(error.message).toContain('U+00E9 at character 6');
    expect(error.message).not.toContain('abc.d');
    expect(failure('Bearer abc\u0001def').message).toContain('U+0001 at character 4');
    expect(failure('Bearer abc\u0001def').message).not.toMatch(/[\u0000-\u001f]/);
  });

  test('padding before the end is named with its place', () => {
    expect(failure('Bearer abc=.def').message).toContain('"=" padding at character 4, before the end');
  });

  test('credentials of "=" padding alone are invalid_request saying there is no token before the padding', () => {
    const error = failure('Bearer ====');
    expect(error.code).toBe('invalid_request');
    expect(error.message).toContain('"=" padding alone, with no token before it');
  });

  test('several Authorization headers are named by their number', () => {
    expect(failure(['Bearer a', 'Bearer b', 'Bearer c']).message).toContain('3 Authorization headers');
  });

  test('leaves the size to the verifier: a long b64token is read whole', () => {
    const token = 'a'.repeat(100_000);
    expect(extractBearerToken(`Bearer ${token}`)).toBe(token);
  });

  // Hostile 1 MB values, made for a pattern that backtracks. Their time against a benign value of
  // the same size is judged by `npm run bench:hostile-header` (bench/hostile-header.mjs), not
  // here: a pattern that backtracked would hang this test (no timeout stops a synchronous match).
  test.each([
    ['b64token characters then a quote', `Bearer ${'a'.repeat(1_000_000)}"`, 'invalid_request', 'U+0022 at character 1000001'],
    ['spaces then nothing', `Bearer${' '.repeat(1_000_000)}x"`, 'invalid_request', 'U+0022 at character 2'],
    ['padding then a character', `Bearer a${'='.repeat(1_000_000)}a`, 'invalid_request', '"=" padding at character 1000001'],
    ['leading white space', `${' '.repeat(1_000_000)}Basic`, 'missing_token', 'another scheme than Bearer'],
  ])('refuses a hostile 1 MB value (%s) as %s, naming the fault (attack: a header made to backtrack)', (_name, header, code, fault) => {
    const error = failure(header);
    expect(error.code).toBe(code);
    expect(error.message).toContain(fault);
  });

  test('refuses a holds that is not a function, naming the value found', () => {
    expect(() => extractBearerToken('Bearer abc', 42 as unknown as (token: string) => boolean)).toThrow(
      /^extractBearerToken: holds must be a function, got 42$/,
    );
  });

  describe("with the verifier's holds()", () => {
    const held = 'eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJ4In0.c2lnbmF0dXJl';
    /** A holds() that knows `held` alone, and records what it was asked. */
    function holding() {
      const asked: string[] = [];
      const holds = (token: string) => {
        asked.push(token);
        return token === held;
      };
      return { asked, holds };
    }

    test.each([`Bearer ${held}`, `bearer   ${held}`, ` \t BEARER ${held} \r\n`, [`Bearer ${held}`]])(
      'reads a token the verifier holds from %j by its scheme alone, as the grammar reads it',
      (header) => {
        const { asked, holds } = holding();
        expect(extractBearerToken(header, holds)).toBe(held);
        expect(extractBearerToken(header)).toBe(held);
        expect(asked).toEqual([held]);
      },
    );

    test.each([
      ['two tokens', `Bearer ${held} ${held}`, 'invalid_request'],
      ['a Headers join of two', `Bearer ${held}, Bearer ${held}`, 'invalid_request'],
      ['a character outside b64token', 'Bearer abc.d*f.ghi', 'invalid_request'],
      ['a quoted token', `Bearer "${held}"`, 'invalid_request'],
    ])('reads credentials it does not hold (%s) through the grammar: %s', (_name, header, code) => {
      const { holds } = holding();
      let error: unknown;
      try {
        extractBearerToken(header, holds);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(AuthError);
      expect((error as AuthError).code).toBe(code);
    });

    test.each([
      ['another scheme', `Basic ${held}`],
      ['a tab after the scheme', `Bearer\t${held}`],
      ['no scheme', held],
      ['two headers', [`Bearer ${held}`, `Bearer ${held}`]],
    ])('never asks it about a value with %s', (_name, header) => {
      const { asked, holds } = holding();
      expect(() => extractBearerToken(header, holds)).toThrow(AuthError);
      expect(asked).toEqual([]);
    });

    // Timed against a benign value of the same size by `npm run bench:hostile-header`, not here.
    test.each([
      ['leading white space', `${' '.repeat(1_000_000)}Bearer x"`],
      ['spaces then nothing', `Bearer${' '.repeat(1_000_000)}x"`],
    ])('refuses a hostile 1 MB value (%s) with it too as invalid_request, naming the fault', (_name, header) => {
      const { asked, holds } = holding();
      const error = (() => {
        try {
          extractBearerToken(header, holds);
        } catch (caught) {
          return caught;
        }
        throw new Error('expected an AuthError');
      })();
      expect(error).toBeInstanceOf(AuthError);
      expect(error).toMatchObject({ code: 'invalid_request' });
      expect((error as AuthError).message).toContain('U+0022 at character 2');
      expect(asked).toEqual(['x"']);
    });
  });

  test('its error messages never contain the token', () => {
    const secret = 'eyJhbGciOiJSUzI1NiJ9.c2VjcmV0.c2ln';
    for (const header of [`Bearer ${secret} x`, `Bearer ${secret}"`, [`Bearer ${secret}`, 'Bearer y']]) {
      expect(failure(header).message).not.toContain(secret);
    }
  });
});
