import { beforeAll, describe, expect, test } from 'vitest';
import { type TestKey, generateTestKey } from '../../src/testing/index.js';
import { outcome, useFixture } from '../support/fixture.js';

const fx = useFixture();

/** `token` with its signature segment replaced by `bytes`, canonically encoded. */
function withSignature(token: string, bytes: Uint8Array): string {
  return `${token.slice(0, token.lastIndexOf('.') + 1)}${Buffer.from(bytes).toString('base64url')}`;
}

const signatureOf = (token: string): Buffer => Buffer.from(token.slice(token.lastIndexOf('.') + 1), 'base64url');

let unpublished: TestKey;
let pssKey: TestKey;

beforeAll(async () => {
  unpublished = await generateTestKey({ kid: fx.issuer.signingKey.kid });
  pssKey = await fx.issuer.addKey({ kid: 'pss-key', jwk: { alg: undefined } });
});

/** Each case: a name, the token, and the answer every engine must give. */
const CASES: readonly (readonly [string, () => Promise<string>, string])[] = [
  ['a valid RS256 token', () => fx.issuer.token(), 'ok'],
  ['a valid PS256 token (key published without alg)', () => fx.issuer.token({}, { alg: 'PS256', kid: 'pss-key' }, { key: pssKey }), 'ok'],
  [
    'an RS256 signature presented as PS256',
    async () => {
      const rs = await fx.issuer.token({}, { alg: 'RS256', kid: 'pss-key' }, { key: pssKey });
      const ps = await fx.issuer.token({}, { alg: 'PS256', kid: 'pss-key' }, { key: pssKey });
      return withSignature(ps, signatureOf(rs));
    },
    'invalid_signature',
  ],
  [
    'a changed claim',
    async () => {
      const [header, , signature] = (await fx.issuer.token()).split('.');
      return `${header}.${Buffer.from(JSON.stringify(fx.issuer.claims({ scope: 'pay:manageIntegration' }))).toString('base64url')}.${signature}`;
    },
    'invalid_signature',
  ],
  ['a signature by another key under the same kid', () => fx.issuer.token({}, {}, { key: unpublished }), 'invalid_signature'],
  ['an empty signature', async () => withSignature(await fx.issuer.token(), new Uint8Array(0)), 'invalid_signature'],
  [
    'a signature one byte short',
    async () => withSignature(await fx.issuer.token(), signatureOf(await fx.issuer.token()).subarray(1)),
    'invalid_signature',
  ],
  [
    'a signature with a zero byte prepended',
    async () => {
      const token = await fx.issuer.token();
      return withSignature(token, Buffer.concat([Buffer.alloc(1), signatureOf(token)]));
    },
    'invalid_signature',
  ],
  [
    'the modulus as signature',
    async () => withSignature(await fx.issuer.token(), Buffer.from(fx.issuer.signingKey.publicJwk.n as string, 'base64url')),
    'invalid_signature',
  ],
  ['all ones as signature', async () => withSignature(await fx.issuer.token(), new Uint8Array(256).fill(0xff)), 'invalid_signature'],
  ['all zeros as signature', async () => withSignature(await fx.issuer.token(), new Uint8Array(256)), 'invalid_signature'],
  [
    'a flipped bit in the signature',
    async () => {
      const token = await fx.issuer.token();
      const signature = signatureOf(token);
      signature[100] = (signature[100] as number) ^ 0x10;
      return withSignature(token, signature);
    },
    'invalid_signature',
  ],
];

describe('every engine gives the same answer for the same token', () => {
  test.each(CASES)('%s', async (_name, make, expected) => {
    const token = await make();
    const answers: Record<string, string> = {};
    for (const crypto of ['node', 'webcrypto'] as const) {
      const verifier = fx.verifier({ crypto, algorithms: ['RS256', 'PS256'], cache: false });
      answers[crypto] = await outcome(verifier.verify(token));
      // Several in flight at once (the node engine then uses libuv's pool).
      const burst = await Promise.all([token, token, token].map((one) => outcome(verifier.verify(one))));
      expect(burst).toEqual([expected, expected, expected]);
    }
    expect(answers).toEqual({ node: expected, webcrypto: expected });
  });
});
