/** msw alone: the verifier fetches the JWKS at the issuer's URL, which msw answers. */
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type TestIssuer, createTestIssuer, createTestVerifier } from '../../src/testing/index.js';
import { jwksHandlers } from '../../src/testing/msw.js';

const server = setupServer();
let acme: TestIssuer;
let beta: TestIssuer;

beforeAll(async () => {
  acme = await createTestIssuer({ audience: 'https://payments.test' });
  beta = await createTestIssuer({ issuer: 'https://beta.test', product: 'beta', audience: 'https://payments.test' });
  server.use(...jwksHandlers(acme, beta));
  server.listen({ onUnhandledRequest: 'error' });
});
afterAll(() => server.close());

describe('msw', () => {
  test("serves each issuer's JWKS at its URL, and the verifier trusts both", async () => {
    const verifier = createTestVerifier([acme, beta]);
    await expect(verifier.verify(await acme.token())).resolves.toMatchObject({ issuer: 'https://issuer.test' });
    await expect(verifier.verify(await beta.token())).resolves.toMatchObject({ issuer: 'https://beta.test' });
  });

  test('jwksHandlers count the requests they answer', async () => {
    const before = acme.jwksRequests;
    const response = await fetch(acme.jwksUri);
    expect(await response.json()).toEqual(acme.jwks);
    expect(acme.jwksRequests).toBe(before + 1);
  });

  test('issuer.handlers (typed by shape) serve the same JWKS', async () => {
    server.use(...(acme.handlers as unknown as Parameters<typeof server.use>));
    expect(await (await fetch(acme.jwksUri)).json()).toEqual(acme.jwks);
  });

  test('jwksHandlers refuse an issuer not made by createTestIssuer', () => {
    expect(() => jwksHandlers({ ...acme })).toThrow(/createTestIssuer/);
  });

  test('jwksHandlers name the place and the value of what is not an issuer', () => {
    expect(() => jwksHandlers(acme, undefined as unknown as TestIssuer)).toThrow(
      /^jwksHandlers: issuers\[1\] must be a test issuer from createTestIssuer\(\), got undefined$/,
    );
  });

  test('jwksHandlers refuse two issuers serving their JWKS at one URL, naming both places', async () => {
    const twin = await createTestIssuer();
    expect(() => jwksHandlers(acme, twin)).toThrow(
      /^jwksHandlers: issuers\[1\] serves its JWKS at the URL of issuers\[0\], got "https:\/\/issuer\.test\/\.well-known\/jwks\.json"/,
    );
  });
});
