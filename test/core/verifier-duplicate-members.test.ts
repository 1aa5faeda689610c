/**
 * A token whose JOSE header or claims repeat a member name is malformed_token before any key is
 * looked at: `JSON.parse` keeps the last value, another reader the first, so the token means two
 * things at once.
 */
import { createPrivateKey, sign } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import type { TestIssuer } from '../../src/testing/index.js';
import { rejection, seconds, useFixture } from '../support/fixture.js';

const fx = useFixture();

const base64url = (data: string | Uint8Array): string => Buffer.from(data).toString('base64url');

/** A token over exactly this header and payload text, signed with the issuer's key (RS256). */
function signRaw(issuer: TestIssuer, headerJson: string, payloadJson: string): string {
  const key = createPrivateKey({ key: Buffer.from(issuer.signingKey.privateKeyPkcs8), format: 'der', type: 'pkcs8' });
  const input = `${base64url(headerJson)}.${base64url(payloadJson)}`;
  return `${input}.${base64url(sign('sha256', Buffer.from(input), key))}`;
}

function claimsJson(): string {
  return JSON.stringify(fx.issuer.claims({ iat: seconds(fx.clock), exp: seconds(fx.clock) + 300 }));
}

function headerJson(): string {
  return JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: fx.issuer.signingKey.kid });
}

describe('repeated member names in a token', () => {
  test('the raw signing helper makes tokens the verifier accepts (the control)', async () => {
    const context = await fx.verifier().verify(signRaw(fx.issuer, headerJson(), claimsJson()));
    expect(context.issuer).toBe(fx.issuer.issuer);
  });

  test.each([
    [
      '"alg" twice, none then RS256 (attack: a reader keeping the first sees alg none)',
      `{"alg":"none","alg":"RS256","kid":"${'KID'}"}`,
      'alg',
    ],
    ['"kid" twice', `{"alg":"RS256","kid":"other","kid":"KID"}`, 'kid'],
    ['"kid" twice, once escaped', `{"alg":"RS256","kid":"other","\\u006bid":"KID"}`, 'kid'],
  ])('a header with %s is malformed_token', async (_name, template, member) => {
    const header = template.replaceAll('KID', fx.issuer.signingKey.kid);
    const events: string[] = [];
    const verifier = fx.verifier({ onEvent: (event) => events.push(event.type) });
    const error = await rejection(verifier.verify(signRaw(fx.issuer, header, claimsJson())));
    expect(error.code).toBe('malformed_token');
    expect(error.status).toBe(401);
    expect(error.message).toContain(`"${member}"`);
    expect(events).not.toContain('jwks_fetch');
  });

  test('a payload with "iss" twice is malformed_token (attack: a reader keeping the first trusts another issuer)', async () => {
    const claims = claimsJson().replace('{', '{"iss":"https://evil.test",');
    const error = await rejection(fx.verifier().verify(signRaw(fx.issuer, headerJson(), claims)));
    expect(error.code).toBe('malformed_token');
    expect(error.facts).toMatchObject({ actual: { segment: 'payload', problem: 'repeated_member', member: ['iss'] } });
    expect(error.message).toContain('"iss"');
  });

  test('a payload with a repeated member in a nested claim is malformed_token', async () => {
    const claims = claimsJson().replace('{', '{"ext":{"a":1,"a":2},');
    expect((await rejection(fx.verifier().verify(signRaw(fx.issuer, headerJson(), claims)))).code).toBe('malformed_token');
  });

  test('a repeated name inside a claim value is not a repeated member', async () => {
    const claims = claimsJson().replace('{', '{"note":"{\\"iss\\":1,\\"iss\\":2}",');
    const context = await fx.verifier().verify(signRaw(fx.issuer, headerJson(), claims));
    expect(context.issuer).toBe(fx.issuer.issuer);
  });
});
