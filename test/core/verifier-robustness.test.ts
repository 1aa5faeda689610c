import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { AuthError, authenticate, extractBearerToken, toErrorResponse } from '../../src/index.js';
import { encodeSegment } from '../../src/testing/index.js';
import { outcome, useFixture } from '../support/fixture.js';

const fx = useFixture();

const segment = fc.stringMatching(/^[A-Za-z0-9_-]{0,40}$/);
const jsonValue = fc.jsonValue({ maxDepth: 3 });

describe('hostile input never escapes as anything but an AuthError', () => {
  test('arbitrary strings', async () => {
    const verifier = fx.verifier();
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 40 })), async (token) => {
        expect(await outcome(verifier.verify(token))).not.toBe('ok');
      }),
      { numRuns: 300 },
    );
  });

  test('arbitrary bytes decoded as latin-1', async () => {
    const verifier = fx.verifier();
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 400 }), async (bytes) => {
        expect(await outcome(verifier.verify(Buffer.from(bytes).toString('latin1')))).not.toBe('ok');
      }),
      { numRuns: 300 },
    );
  });

  test('three base64url segments of arbitrary bytes', async () => {
    const verifier = fx.verifier();
    await fc.assert(
      fc.asyncProperty(segment, segment, segment, async (a, b, c) => {
        expect(await outcome(verifier.verify(`${a}.${b}.${c}`))).not.toBe('ok');
      }),
      { numRuns: 300 },
    );
  });

  test('arbitrary JSON as header and payload', async () => {
    const verifier = fx.verifier();
    await fc.assert(
      fc.asyncProperty(jsonValue, jsonValue, async (header, payload) => {
        expect(await outcome(verifier.verify(`${encodeSegment(header)}.${encodeSegment(payload)}.c2ln`))).not.toBe('ok');
      }),
      { numRuns: 300 },
    );
  });

  test('validly signed tokens whose claims are replaced by arbitrary JSON values', async () => {
    const verifier = fx.verifier();
    const claimNames = ['iss', 'sub', 'aud', 'exp', 'expt', 'iat', 'nbf', 'tenant_ern', 'scope', 'tenant_name', 'user_ern'];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...claimNames), jsonValue, async (claim, value) => {
        const code = await outcome(verifier.verify(await fx.issuer.token({ [claim]: value })));
        expect(typeof code).toBe('string');
      }),
      { numRuns: 150 },
    );
  });

  test('huge Authorization headers are refused before parsing', async () => {
    const verifier = fx.verifier();
    for (const size of [8193, 65_536, 1_048_576]) {
      const result = await authenticate(verifier, { authorization: `Bearer ${'a'.repeat(size)}` });
      expect(!result.ok && result.error.code).toBe('token_too_large');
    }
  });

  test('arbitrary Authorization values give a 4xx result, never an exception', async () => {
    const verifier = fx.verifier();
    const header = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.string({ unit: 'binary', maxLength: 30 }),
      fc.array(fc.string({ maxLength: 50 }), { maxLength: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(header, async (authorization) => {
        const result = await authenticate(verifier, { authorization });
        expect(result.ok).toBe(false);
        if (!result.ok) expect(toErrorResponse(result.error).status).toBeLessThan(500);
      }),
      { numRuns: 300 },
    );
  });

  test('the header parser throws only AuthError on arbitrary input', () => {
    fc.assert(
      fc.property(fc.anything(), (authorization) => {
        try {
          extractBearerToken(authorization as string);
        } catch (error) {
          expect(error).toBeInstanceOf(AuthError);
        }
      }),
      { numRuns: 500 },
    );
  });
});
