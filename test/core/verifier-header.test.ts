import { createHmac, createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { describe, expect, test, vi } from 'vitest';
import { encodeSegment, generateTestKey, signRawToken } from '../../src/testing/index.js';
import { rejection, useFixture } from '../support/fixture.js';

const fx = useFixture();

/** A token with the issuer's valid claims, the given header, and `signature` as its third part. */
function unsigned(header: Record<string, unknown>, claims = fx.issuer.claims(), signature = 'c2ln'): string {
  return `${encodeSegment(header)}.${encodeSegment(claims)}.${signature}`;
}

describe('token shape: anything but three unpadded base64url JSON segments is malformed_token', () => {
  const header = encodeSegment({ alg: 'RS256', kid: 'test-key' });
  const payload = encodeSegment({ iss: 'https://issuer.test' });
  test.each([
    ['an empty string', ''],
    ['one segment', 'abc'],
    ['two segments', `${header}.${payload}`],
    ['four segments', `${header}.${payload}.c2ln.c2ln`],
    ['padding', `${header}=.${payload}.c2ln`],
    ['standard base64 "+"', `${header}.${payload}+.c2ln`],
    ['standard base64 "/"', `${header}.${payload}/.c2ln`],
    ['white space', `${header} .${payload}.c2ln`],
    ['a trailing newline', `${header}.${payload}.c2ln\n`],
    ['non-ASCII characters', `${header}.${payload}.c2ln\u00e9`],
    ['an empty header segment', `.${payload}.c2ln`],
    ['an empty payload segment', `${header}..c2ln`],
    ['a segment length base64url cannot produce', `${header}.${payload}.c2lnA`],
    ['a header that is not JSON', `${encodeSegment('x').slice(0, 2)}.${payload}.c2ln`],
    ['a header that is a JSON array', `${encodeSegment(['RS256'])}.${payload}.c2ln`],
    ['a header that is JSON null', `${encodeSegment(null)}.${payload}.c2ln`],
    ['a payload that is a JSON string', `${header}.${encodeSegment('claims')}.c2ln`],
    ['a payload that is not JSON', `${header}.${Buffer.from('{"iss":').toString('base64url')}.c2ln`],
  ])('%s is malformed_token', async (_name, token) => {
    const error = await rejection(fx.verifier().verify(token));
    expect(error.code).toBe('malformed_token');
    expect(error.status).toBe(401);
    expect(error.error).toBe('invalid_token');
  });

  test('a value that is not a string is malformed_token', async () => {
    const error = await rejection(fx.verifier().verify(42 as unknown as string));
    expect(error.code).toBe('malformed_token');
  });
});

describe('a segment behind a UTF-8 byte order mark is malformed_token', () => {
  /** A token signed with the issuer's key over `header` and `payload` as given, each after `prefix` bytes. */
  function signedWith(headerPrefix: number[], payloadPrefix: number[]): string {
    const segment = (prefix: number[], value: unknown) =>
      Buffer.concat([Buffer.from(prefix), Buffer.from(JSON.stringify(value))]).toString('base64url');
    const input = `${segment(headerPrefix, { alg: 'RS256', kid: fx.issuer.signingKey.kid })}.${segment(payloadPrefix, fx.issuer.claims())}`;
    const key = createPrivateKey({ key: Buffer.from(fx.issuer.signingKey.privateKeyPkcs8), format: 'der', type: 'pkcs8' });
    return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
  }
  const BOM = [0xef, 0xbb, 0xbf];

  test('the same token without the mark verifies (the control)', async () => {
    await expect(fx.verifier().verify(signedWith([], []))).resolves.toMatchObject({ issuer: fx.issuer.issuer });
  });

  test.each([
    ['header', BOM, []],
    ['payload', [], BOM],
  ])(
    'a %s behind a byte order mark is malformed_token (attack: a reader that strips the mark sees another token)',
    async (segment, header, payload) => {
      const error = await rejection(fx.verifier().verify(signedWith(header, payload)));
      expect(error.code).toBe('malformed_token');
      expect(error.facts).toMatchObject({ actual: { segment, problem: 'json' } });
    },
  );
});

describe('a segment that is not well-formed UTF-8 is malformed_token', () => {
  /** A token signed with the issuer's key whose `segment` has `bytes` put in its `tenant_name` (payload) or `x` (header) string. */
  function signedWithBytes(segment: 'header' | 'payload', bytes: number[]): string {
    const encode = (value: unknown, inject: boolean) => {
      const text = Buffer.from(JSON.stringify(value));
      const at = text.indexOf('"<>"') + 1;
      return (inject ? Buffer.concat([text.subarray(0, at), Buffer.from(bytes), text.subarray(at + 2)]) : text).toString('base64url');
    };
    const header = { alg: 'RS256', kid: fx.issuer.signingKey.kid, x: '<>' };
    const input = `${encode(header, segment === 'header')}.${encode(fx.issuer.claims({ tenant_name: '<>' }), segment === 'payload')}`;
    const key = createPrivateKey({ key: Buffer.from(fx.issuer.signingKey.privateKeyPkcs8), format: 'der', type: 'pkcs8' });
    return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
  }

  test('a U+FFFD written as its own UTF-8 bytes verifies (the control)', async () => {
    const auth = await fx.verifier().verify(signedWithBytes('payload', [0xef, 0xbf, 0xbd]));
    expect(auth.tenantName).toBe('\ufffd');
  });

  test.each([
    ['header', 'a byte never in UTF-8 (0xFF)', [0xff]],
    ['payload', 'a byte never in UTF-8 (0xFF)', [0xff]],
    ['payload', 'an overlong "/" (0xC0 0xAF)', [0xc0, 0xaf]],
    ['payload', 'an encoded surrogate (0xED 0xA0 0x80)', [0xed, 0xa0, 0x80]],
    ['payload', 'a sequence cut short (0xE2 0x82)', [0xe2, 0x82]],
    ['payload', 'a lone continuation byte (0x80)', [0x80]],
  ])(
    'a %s holding %s is malformed_token (attack: readers that replace, reject or reinterpret the bytes see other claims)',
    async (segment, _name, bytes) => {
      const error = await rejection(fx.verifier().verify(signedWithBytes(segment as 'header' | 'payload', bytes)));
      expect(error.code).toBe('malformed_token');
      expect(error.facts).toMatchObject({ actual: { segment, problem: 'json' } });
    },
  );

  test('without Buffer (Deno, workerd), a payload that is not UTF-8 is malformed_token too', async () => {
    vi.resetModules();
    vi.stubGlobal('Buffer', undefined);
    let compact: typeof import('../../src/core/compact-jws.js');
    try {
      compact = await import('../../src/core/compact-jws.js');
    } finally {
      vi.unstubAllGlobals();
      vi.resetModules();
    }
    const payloadOf = (token: string) => compact.decodeJwsPayload(token, compact.locateCompactJws(token));
    expect(() => payloadOf(signedWithBytes('payload', [0xc0, 0xaf]))).toThrow(expect.objectContaining({ code: 'malformed_token' }));
    expect(payloadOf(signedWithBytes('payload', [0xef, 0xbf, 0xbd]))).toMatchObject({ tenant_name: '\ufffd' });
  });
});

describe('token alphabet: one stray character anywhere in a validly signed token is malformed_token', () => {
  /**
   * Every ASCII character outside base64url, and characters a lenient decoder would read as
   * base64url: Latin-1, ones above U+00FF whose low byte is an alphabet character (U+012B → "+",
   * U+0141 → "A"), a lone surrogate and an emoji.
   */
  const strays = [
    ...Array.from({ length: 128 }, (_, code) => String.fromCharCode(code)).filter((character) => !/[A-Za-z0-9_-]/.test(character)),
    '\u00e9',
    '\u00ff',
    '\u012b',
    '\u0141',
    '\u0161',
    '\ud800',
    '\u{1f600}',
  ];
  const segments = ['header', 'payload', 'signature'] as const;

  /** `token` with the character at `index` of segment `segment` replaced by `stray` (the length kept, for one code unit). */
  function withStray(token: string, segment: (typeof segments)[number], stray: string, where: 'first' | 'middle' | 'last'): string {
    const parts = token.split('.') as [string, string, string];
    const part = parts[segments.indexOf(segment)] as string;
    const index = where === 'first' ? 0 : where === 'last' ? part.length - 1 : part.length >> 1;
    parts[segments.indexOf(segment)] = `${part.slice(0, index)}${stray}${part.slice(index + 1)}`;
    return parts.join('.');
  }

  test('the unaltered token verifies (the cases below differ from it by one character)', async () => {
    const auth = await fx.verifier().verify(await fx.issuer.token());
    expect(auth.issuer).toBe(fx.issuer.issuer);
  });

  test.each(segments)('in the %s, every stray character, first, in the middle or last, is malformed_token', async (segment) => {
    const token = await fx.issuer.token();
    const verifier = fx.verifier();
    await verifier.verify(token); // its header is now remembered, and its result cached
    const outcomes = new Map<string, string>();
    for (const stray of strays) {
      for (const where of ['first', 'middle', 'last'] as const) {
        const altered = withStray(token, segment, stray, where);
        const error = await rejection(verifier.verify(altered));
        if (error.code !== 'malformed_token') outcomes.set(`${JSON.stringify(stray)} ${where}`, error.code);
      }
    }
    expect(Object.fromEntries(outcomes)).toEqual({});
  });

  test('a signature re-encoded in standard base64 ("+" for "-", "/" for "_": the same bytes to a lenient decoder) is malformed_token', async () => {
    let token = await fx.issuer.token();
    for (let n = 0; !/[-_]/.test(token.split('.')[2] as string); n += 1) token = await fx.issuer.token({ jti: `j-${n}` });
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const standard = signature.replaceAll('-', '+').replaceAll('_', '/');
    const verifier = fx.verifier();
    await verifier.verify(token);
    const error = await rejection(verifier.verify(`${header}.${payload}.${standard}`));
    expect(error.code).toBe('malformed_token');
  });

  test('a stray character in the signature is malformed_token before the key is looked up (no JWKS request for an unknown kid)', async () => {
    const token = await fx.issuer.token({}, { kid: 'no-such-key' });
    const before = fx.issuer.jwksRequests;
    const error = await rejection(fx.verifier().verify(withStray(token, 'signature', '*', 'middle')));
    expect(error.code).toBe('malformed_token');
    expect(fx.issuer.jwksRequests).toBe(before);
  });

  test('a stray character in the signature is malformed_token before the header rules (alg "none" is not reported)', async () => {
    const token = unsigned({ alg: 'none', kid: 'test-key' }, fx.issuer.claims(), 'c2*n');
    const error = await rejection(fx.verifier().verify(token));
    expect(error.code).toBe('malformed_token');
  });
});

describe('token size: over the limit is token_too_large, before any parsing', () => {
  test('a token of 8193 bytes is token_too_large', async () => {
    const error = await rejection(fx.verifier().verify('a'.repeat(8193)));
    expect(error.code).toBe('token_too_large');
    expect(error.status).toBe(401);
  });

  test('a token of exactly 8192 bytes is parsed (and here found malformed)', async () => {
    const error = await rejection(fx.verifier().verify('a'.repeat(8192)));
    expect(error.code).toBe('malformed_token');
  });

  test('the size counts UTF-8 bytes, not characters', async () => {
    const error = await rejection(fx.verifier().verify('\u00e9'.repeat(4097)));
    expect(error.code).toBe('token_too_large');
  });

  test('a token of exactly 8192 bytes in two-byte characters is parsed, not too large (the byte count is exact)', async () => {
    const error = await rejection(fx.verifier().verify('\u00e9'.repeat(4096)));
    expect(error.code).toBe('malformed_token');
  });

  test('a validly signed token of exactly maxTokenBytes verifies, and one byte more is token_too_large', async () => {
    const token = await fx.issuer.token();
    await expect(fx.verifier({ maxTokenBytes: token.length }).verify(token)).resolves.toMatchObject({ issuer: fx.issuer.issuer });
    const error = await rejection(fx.verifier({ maxTokenBytes: token.length }).verify(`${token}A`));
    expect(error.code).toBe('token_too_large');
    expect(error.facts).toMatchObject({ expected: token.length, actual: { length: token.length + 1 } });
  });

  test('maxTokenBytes sets the limit', async () => {
    const token = await fx.issuer.token();
    const error = await rejection(fx.verifier({ maxTokenBytes: token.length - 1 }).verify(token));
    expect(error.code).toBe('token_too_large');
  });
});

describe('alg: RS256 only, never none or HMAC', () => {
  test.each(['none', 'None', 'NONE', 'nOnE'])(
    'alg "%s" with an empty signature is unsupported_algorithm (attack: unsigned token)',
    async (alg) => {
      const error = await rejection(fx.verifier().verify(unsigned({ alg, kid: 'test-key' }, fx.issuer.claims(), '')));
      expect(error.code).toBe('unsupported_algorithm');
      expect(error.status).toBe(401);
    },
  );

  test('HS256 signed with the RSA public key as the HMAC secret is unsupported_algorithm (attack: key confusion)', async () => {
    const pem = createPublicKey({ key: fx.issuer.signingKey.publicJwk as never, format: 'jwk' }).export({
      type: 'spki',
      format: 'pem',
    });
    const input = `${encodeSegment({ alg: 'HS256', typ: 'JWT', kid: 'test-key' })}.${encodeSegment(fx.issuer.claims())}`;
    const forged = `${input}.${createHmac('sha256', pem).update(input).digest('base64url')}`;
    const error = await rejection(fx.verifier().verify(forged));
    expect(error.code).toBe('unsupported_algorithm');
  });

  test.each(['HS256', 'HS512', 'ES256', 'EdDSA', 'RS384', 'PS256', 'rs256'])(
    'alg "%s" is unsupported_algorithm by default',
    async (alg) => {
      const error = await rejection(fx.verifier().verify(await fx.issuer.token({}, { alg })));
      expect(error.code).toBe('unsupported_algorithm');
    },
  );

  test.each([
    ['missing', undefined],
    ['not a string', ['RS256']],
    ['null', null],
  ])('an alg that is %s is unsupported_algorithm', async (_name, alg) => {
    const error = await rejection(fx.verifier().verify(await fx.issuer.token({}, { alg })));
    expect(error.code).toBe('unsupported_algorithm');
  });

  test('an unsupported alg is reported before any key is looked up', async () => {
    const before = fx.issuer.jwksRequests;
    const error = await rejection(fx.verifier().verify(await fx.issuer.token({}, { alg: 'ES256' })));
    expect(error.code).toBe('unsupported_algorithm');
    expect(fx.issuer.jwksRequests).toBe(before);
  });

  test('an algorithm enabled by the algorithms option verifies', async () => {
    const psKey = await fx.issuer.addKey({ jwk: { alg: 'PS256' } });
    try {
      const token = await fx.issuer.token({}, { alg: 'PS256' }, { key: psKey });
      await expect(fx.verifier({ algorithms: ['RS256', 'PS256'] }).verify(token)).resolves.toMatchObject({
        issuer: fx.issuer.issuer,
      });
    } finally {
      fx.issuer.unpublish(psKey.kid);
    }
  });

  test("a token whose alg differs from its key's published alg is unknown_key (attack: algorithm substitution)", async () => {
    const token = await fx.issuer.token({}, { alg: 'PS256' });
    const error = await rejection(fx.verifier({ algorithms: ['RS256', 'PS256'] }).verify(token));
    expect(error.code).toBe('unknown_key');
  });

  test('the algorithms option refuses anything but RSA algorithms', () => {
    expect(() => fx.verifier({ algorithms: ['HS256' as 'RS256'] })).toThrow(/algorithms must be/);
    expect(() => fx.verifier({ algorithms: [] })).toThrow(/algorithms must be/);
  });

  test.each(['none', 'None', 'HS384'])('the algorithms option refuses "%s" beside RS256: it can never be enabled', (alg) => {
    expect(() => fx.verifier({ algorithms: ['RS256', alg as 'RS256'] })).toThrow(`algorithms[1] is "${alg}"`);
  });
});

describe('kid: required', () => {
  test.each([
    ['missing', undefined],
    ['empty', ''],
    ['a number', 7],
  ])('a kid that is %s is missing_kid', async (_name, kid) => {
    const error = await rejection(fx.verifier().verify(await fx.issuer.token({}, { kid })));
    expect(error.code).toBe('missing_kid');
    expect(error.status).toBe(401);
  });

  test('a kid longer than 256 characters is missing_kid, and the message states the bound (attack: unbounded kid text in every log)', async () => {
    const error = await rejection(fx.verifier().verify(await fx.issuer.token({}, { kid: 'k'.repeat(257) })));
    expect(error.code).toBe('missing_kid');
    expect(error.message).toContain('1 to 256 characters');
  });

  test('a kid of exactly 256 characters passes the kid rule (and is looked up: unknown_key)', async () => {
    const error = await rejection(fx.verifier().verify(await fx.issuer.token({}, { kid: 'k'.repeat(256) })));
    expect(error.code).toBe('unknown_key');
  });

  test('a token with no kid is missing_kid whatever its claims', async () => {
    const token = await fx.issuer.token({ iss: 'https://unknown.test', aud: 'elsewhere', expt: 1 }, { kid: undefined });
    expect((await rejection(fx.verifier().verify(token))).code).toBe('missing_kid');
  });
});

describe('typ: JWT or at+jwt when present', () => {
  test.each(['JWT', 'jwt', 'at+jwt', 'AT+JWT', 'application/jwt', 'application/at+jwt', 'Application/AT+JWT'])(
    'typ "%s" is accepted',
    async (typ) => {
      await expect(fx.verifier().verify(await fx.issuer.token({}, { typ }))).resolves.toMatchObject({
        issuer: fx.issuer.issuer,
      });
    },
  );

  test('a token without typ is accepted', async () => {
    await expect(fx.verifier().verify(await fx.issuer.token({}, { typ: undefined }))).resolves.toBeDefined();
  });

  test.each([
    ['JOSE', 'JOSE'],
    ['application/json', 'application/json'],
    ['a JWE content type', 'JWE'],
    ['a number', 1],
    ['null', null],
  ])('typ %s is invalid_typ (attack: a token of another kind replayed as an access token)', async (_name, typ) => {
    const error = await rejection(fx.verifier().verify(await fx.issuer.token({}, { typ })));
    expect(error.code).toBe('invalid_typ');
  });
});

describe('crit: rejected', () => {
  test.each([
    ['an empty list', []],
    ['a list of extensions', ['exp']],
    ['null', null],
  ])('crit as %s is unsupported_crit (attack: an extension this verifier would silently ignore)', async (_name, crit) => {
    const error = await rejection(fx.verifier().verify(await fx.issuer.token({}, { crit })));
    expect(error.code).toBe('unsupported_crit');
  });
});

describe('jku, x5u, jwk, x5c: ignored, keys come only from the registered JWKS', () => {
  test.each(['jku', 'x5u'])(
    'a %s header pointing at an attacker URL is never fetched and the token fails (attack: attacker-hosted keys)',
    async (member) => {
      const attacker = await generateTestKey({ kid: 'attacker' });
      const token = await signRawToken(
        attacker,
        { alg: 'RS256', kid: 'attacker', [member]: 'https://attacker.test/jwks.json' },
        fx.issuer.claims(),
      );
      const fetched: string[] = [];
      const recordingFetch = (input: string, init: RequestInit) => {
        fetched.push(input);
        return fetch(input, init);
      };
      const error = await rejection(fx.verifier({ fetch: recordingFetch }).verify(token));
      expect(error.code).toBe('unknown_key');
      expect(fetched.length).toBeGreaterThan(0);
      expect(fetched.every((url) => url === fx.issuer.entry.jwksUri)).toBe(true);
    },
  );

  test('an embedded jwk header with the attacker key is ignored (attack: self-signed key injection)', async () => {
    const attacker = await generateTestKey({ kid: 'test-key' });
    const token = await signRawToken(attacker, { alg: 'RS256', kid: 'test-key', jwk: attacker.publicJwk }, fx.issuer.claims());
    const error = await rejection(fx.verifier().verify(token));
    expect(error.code).toBe('invalid_signature');
  });

  test('an embedded x5c header is ignored', async () => {
    const attacker = await generateTestKey({ kid: 'test-key' });
    const token = await signRawToken(attacker, { alg: 'RS256', kid: 'test-key', x5c: ['MIIB'] }, fx.issuer.claims());
    expect((await rejection(fx.verifier().verify(token))).code).toBe('invalid_signature');
  });
});

describe('signature: RS256 over the exact received bytes', () => {
  test('a token signed by the issuer verifies', async () => {
    await expect(fx.verifier().verify(await fx.issuer.token())).resolves.toMatchObject({ issuer: fx.issuer.issuer });
  });

  test('RS256 with an empty signature is invalid_signature', async () => {
    const token = await fx.issuer.token();
    const error = await rejection(fx.verifier().verify(token.slice(0, token.lastIndexOf('.') + 1)));
    expect(error.code).toBe('invalid_signature');
  });

  test('a changed claim is invalid_signature (attack: tampering with the payload)', async () => {
    const [header, , signature] = (await fx.issuer.token()).split('.');
    const tampered = `${header}.${encodeSegment(fx.issuer.claims({ tenant_ern: 'ern:acme/tenants/t-2' }))}.${signature}`;
    expect((await rejection(fx.verifier().verify(tampered))).code).toBe('invalid_signature');
  });

  test('the same header re-encoded with other bytes is invalid_signature (the signature covers the received bytes)', async () => {
    const [header = '', payload, signature] = (await fx.issuer.token()).split('.');
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(Buffer.from(header, 'base64url').toString())).reverse()));
    const token = `${Buffer.from(reordered).toString('base64url')}.${payload}.${signature}`;
    expect((await rejection(fx.verifier().verify(token))).code).toBe('invalid_signature');
  });

  test('a signature three bytes short of the modulus is invalid_signature', async () => {
    const token = await fx.issuer.token();
    const dot = token.lastIndexOf('.');
    const short = Buffer.from(token.slice(dot + 1), 'base64url')
      .subarray(0, -3)
      .toString('base64url');
    expect((await rejection(fx.verifier().verify(`${token.slice(0, dot + 1)}${short}`))).code).toBe('invalid_signature');
  });

  test('the webcrypto engine reaches the same verdicts', async () => {
    const verifier = fx.verifier({ crypto: 'webcrypto' });
    await expect(verifier.verify(await fx.issuer.token())).resolves.toMatchObject({ issuer: fx.issuer.issuer });
    const [header, , signature] = (await fx.issuer.token()).split('.');
    const tampered = `${header}.${encodeSegment(fx.issuer.claims({ scope: 'pay:manageIntegration' }))}.${signature}`;
    expect((await rejection(verifier.verify(tampered))).code).toBe('invalid_signature');
  });

  test('many verifications in one turn of the event loop all reach the right verdict', async () => {
    const verifier = fx.verifier({ cache: false });
    const good = await fx.issuer.token();
    const [header, , signature] = good.split('.');
    const bad = `${header}.${encodeSegment(fx.issuer.claims({ scope: 'hub:subscribe' }))}.${signature}`;
    const outcomes = await Promise.allSettled(Array.from({ length: 40 }, (_, index) => verifier.verify(index % 2 === 0 ? good : bad)));
    outcomes.forEach((outcome, index) => {
      if (index % 2 === 0) expect(outcome.status).toBe('fulfilled');
      else expect(outcome.status === 'rejected' && (outcome.reason as { code: string }).code).toBe('invalid_signature');
    });
  });
});
