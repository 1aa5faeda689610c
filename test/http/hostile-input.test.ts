/**
 * Text from a token is hostile: sent through every failure path, it never reaches a response
 * header, the challenge stays under 256 bytes, and every hint is one line with each control,
 * DEL, C1, line separator and bidi character shown as an escape.
 */
import { describe, expect, test } from 'vitest';
import { authenticate, toErrorResponse } from '../../src/index.js';
import { signRawToken } from '../../src/testing/index.js';
import { AUDIENCE, useFixture } from '../support/fixture.js';

const fx = useFixture();

/** Characters a log line or terminal must never receive raw. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const NASTY = '\u0000\u001b[2J\r\n\u007f\u0085\u009b\u2028\u2029\u202e\u2066\u200f"\\';

/** Hostile values: slash runs, 8 KB of one character, nested repeats, controls and bidi. */
const VALUES: readonly [string, string][] = [
  ['a slash run', `https://issuer.test${'/'.repeat(5000)}x`],
  ['one character repeated', 'a'.repeat(5000)],
  ['controls and bidi', `https://issuer.test/${NASTY}`],
  ['a near miss with controls', `HTTPS://ISSUER.TEST/${NASTY}`],
];

const encoder = new TextEncoder();
const text = (value: unknown) => encoder.encode(JSON.stringify(value));

/** Tokens putting `value` where each failure path reads it. */
async function tokensWith(value: string): Promise<[string, string][]> {
  const key = fx.issuer.signingKey;
  const nested = `{"a":${'{"a":'.repeat(300)}{"${value.slice(0, 500)}":1,"${value.slice(0, 500)}":2}${'}'.repeat(301)}`;
  return [
    ['iss', await fx.issuer.token({ iss: value, sub: value })],
    ['aud', await fx.issuer.token({ aud: [value, value] })],
    ['sub', await fx.issuer.token({ sub: value })],
    ['kid', await fx.issuer.token({}, { kid: value.slice(0, 200) })],
    ['kid too long', await fx.issuer.token({}, { kid: value })],
    ['alg', await fx.issuer.token({}, { alg: value })],
    ['typ', await fx.issuer.token({}, { typ: value })],
    ['tenant_ern', await fx.issuer.token({ tenant_ern: `ern:${value}/tenants/t-1` })],
    ['user_ern', await fx.issuer.token({ user_ern: value })],
    [
      'a repeated member name',
      await signRawToken(key, text({ alg: 'RS256', kid: key.kid }), encoder.encode(`{"${value}":1,"${value}":2}`)),
    ],
    ['a nested repeat', await signRawToken(key, text({ alg: 'RS256', kid: key.kid }), encoder.encode(nested))],
    [
      'a repeated header member',
      await signRawToken(key, encoder.encode(`{"alg":"RS256","kid":"${key.kid}","${value}":1,"${value}":2}`), text(fx.issuer.claims())),
    ],
  ];
}

describe.each(VALUES)('a hostile value (%s) through every failure path', (_name, value) => {
  test('reaches no header, keeps the challenge under 256 bytes, and every hint is one escaped line', async () => {
    const verifier = fx.verifier({ audience: [AUDIENCE, `${AUDIENCE}/`] });
    for (const [where, token] of await tokensWith(value)) {
      const result = await authenticate(verifier, { authorization: `Bearer ${token}` });
      expect(result.ok, where).toBe(false);
      if (result.ok) continue;
      const response = toErrorResponse(result.error, { exposeHints: true });
      const headers = Object.values(response.headers).join(' ');
      expect(headers, where).not.toContain(value.slice(0, 24));
      expect(headers, where).not.toMatch(UNSAFE);
      expect(encoder.encode(response.headers['www-authenticate'] ?? '').byteLength, where).toBeLessThan(256);
      const hint = result.error.hint;
      if (hint !== undefined) {
        expect(hint, where).not.toMatch(UNSAFE);
        expect(hint.length, where).toBeLessThanOrEqual(1000);
      }
      expect(response.body.detail, where).not.toMatch(UNSAFE);
      expect(response.body.detail.length, where).toBeLessThan(400);
    }
  });
});
