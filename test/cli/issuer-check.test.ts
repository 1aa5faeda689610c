/**
 * The check before `issuers add` / `update` writes an entry: the gateway's verifier reads the
 * entry's JWKS (served on 127.0.0.1) and refuses a set it would not use, naming the verifier's
 * reason; a sample token must verify.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { UsageError } from '../../src/cli/command.js';
import { type CandidateCheck, IssuerRefusedError, checkCandidate } from '../../src/cli/issuer-check.js';
import type { IssuerEntry } from '../../src/index.js';
import { type JwksServer, type TestIssuer, createTestIssuer, generateTestKey, serveJwks } from '../../src/testing/index.js';
import { LOADED_MARGIN_MS } from '../support/loaded-machine.js';
import { stubResolver } from '../support/resolver-stub.js';

const ISS = 'https://auth.acme.example';
const AUD = 'https://payments.example';

let issuer: TestIssuer;
let served: unknown;
let answer: ((response: ServerResponse) => void) | undefined;
let server: JwksServer;
let entry: IssuerEntry;

beforeAll(async () => {
  server = await serveJwks(() => served, {
    respond: (_request, response) => {
      if (answer === undefined) return false;
      answer(response);
      return true;
    },
  });
  issuer = await createTestIssuer({ issuer: ISS, audience: AUD, product: 'acme', jwksUri: server.url });
  entry = issuer.entry;
});

afterAll(() => server.close());

/** Runs the check with the JWKS `document` served; resolves what it wrote, or rejects. */
async function check(document: unknown, options: Partial<CandidateCheck> = {}): Promise<string> {
  served = document;
  const lines: string[] = [];
  await checkCandidate({ entry, audience: [], force: false, now: Date.now(), write: (text) => lines.push(text), ...options });
  return lines.join('');
}

async function refusal(promise: Promise<unknown>): Promise<IssuerRefusedError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(IssuerRefusedError);
  return error as IssuerRefusedError;
}

describe('checkCandidate: the JWKS, by the verifier rules', () => {
  it('passes a JWKS with a usable key, naming its kids', async () => {
    expect(await check(issuer.jwks)).toMatch(/^✓ jwks .*: 1 usable key\(s\), kids "test-key"\n$/);
  });

  it('refuses a JWKS whose only key is 1024 bits, naming the kid and the rule', async () => {
    const weak = await generateTestKey({ kid: 'k-weak', modulusLength: 1024 });
    const error = await refusal(check({ keys: [weak.publicJwk] }));
    expect(error.code).toBe('no_usable_key');
    expect(error.message).toContain('"k-weak" modulus of 1024 bits, under 2048');
  });

  it('refuses a JWKS that lists no key', async () => {
    const error = await refusal(check({ keys: [] }));
    expect(error.code).toBe('no_usable_key');
    expect(error.message).toContain('it lists no key');
  });

  it('refuses a JWKS whose keys are all for encryption, naming the rule of each', async () => {
    const error = await refusal(check({ keys: [{ ...issuer.jwks.keys[0], use: 'enc' }] }));
    expect(error.message).toContain('"test-key" use is not sig');
  });

  it('refuses a JWKS not served as JSON, with the download failure reason', async () => {
    answer = (response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
    try {
      const error = await refusal(check(issuer.jwks));
      expect(error.code).toBe('jwks_unavailable');
      expect(error.message).toContain('(content_type)');
    } finally {
      answer = undefined;
    }
  });

  it('refuses a JWKS URL that answers 404, with the status reason', async () => {
    const error = await refusal(check(issuer.jwks, { entry: { ...entry, jwksUri: `${server.url}.missing` } }));
    expect(error.code).toBe('jwks_unavailable');
    expect(error.message).toContain('(status)');
  });

  it('refuses a JWKS whose server is stopped (network)', async () => {
    const stopped = await serveJwks(() => issuer.jwks);
    await stopped.close();
    const error = await refusal(check(issuer.jwks, { entry: { ...entry, jwksUri: stopped.url } }));
    expect(error.code).toBe('jwks_unavailable');
    expect(error.message).toContain('(network)');
  });

  it("refuses a JWKS whose server goes silent, within the verifier's download time limit (timeout)", async () => {
    answer = () => undefined; // the request is read, and never answered
    /** The verifier's `jwksTimeout` by default, in milliseconds. */
    const DOWNLOAD_LIMIT = 5000;
    const started = performance.now();
    try {
      const error = await refusal(check(issuer.jwks));
      expect(error.code).toBe('jwks_unavailable');
      expect(error.message).toContain('(timeout)');
      expect(performance.now() - started).toBeLessThan(DOWNLOAD_LIMIT + LOADED_MARGIN_MS);
    } finally {
      answer = undefined;
    }
  });

  it('with force, passes a JWKS with no usable key, saying why it would have refused', async () => {
    const weak = await generateTestKey({ kid: 'k-weak', modulusLength: 1024 });
    const out = await check({ keys: [weak.publicJwk] }, { force: true });
    expect(out).toContain('--force: no usable key in the JWKS: 1 entry ignored: "k-weak" modulus of 1024 bits, under 2048');
  });

  it('refuses an entry the registry would refuse, naming the field, before any download', async () => {
    const before = server.requests;
    const error = await check(issuer.jwks, { entry: { ...entry, jwksUri: 'http://jwks.example/keys.json' } }).catch((caught) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain('jwksUri');
    expect(server.requests).toBe(before);
  });
});

describe('checkCandidate: the JWKS address (registration refuses a special-purpose address)', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('refuses a JWKS at a cloud metadata address, naming the rule, before any download', async () => {
    const error = await check(issuer.jwks, { entry: { ...entry, jwksUri: 'https://169.254.169.254/latest/meta-data/' } }).catch(
      (caught) => caught,
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain('(169.254.169.254/32; rule metadata)');
    expect((error as Error).message).toContain('--allow-jwks-host "169.254.169.254"');
  });

  it('refuses, even forced, a JWKS name that resolves to a private address (resolver stub), naming it', async () => {
    stubResolver().set('jwks.rebind.example', ['10.0.0.7']);
    const error = await refusal(check(issuer.jwks, { entry: { ...entry, jwksUri: 'https://jwks.rebind.example/jwks.json' }, force: true }));
    expect(error.code).toBe('jwks_address_refused');
    expect(error.message).toContain('"jwks.rebind.example" resolves to "10.0.0.7", a private address (10.0.0.0/8; rule private)');
    expect(error.message).not.toContain('--force writes it anyway');
  });

  it('allowedHosts lets a named host through: its download is tried, and fails for its own reason', async () => {
    // https to the plain-http server on 127.0.0.1: reached, then the TLS handshake fails.
    const jwksUri = server.url.replace('http:', 'https:');
    const error = await refusal(check(issuer.jwks, { entry: { ...entry, jwksUri }, allowedHosts: ['127.0.0.1'] }));
    expect(error.code).toBe('jwks_unavailable');
    expect(error.message).toContain('(network)');
  });
});

describe('checkCandidate: the sample token', () => {
  it('passes a token the verifier accepts, after printing its rules', async () => {
    const out = await check(issuer.jwks, { token: await issuer.token(), audience: [AUD] });
    expect(out).toContain('✓ signature');
    expect(out).toContain('✓ the sample token verifies');
  });

  it("refuses a token the verifier rejects, with the verifier's code", async () => {
    const error = await refusal(check(issuer.jwks, { token: await issuer.token({ aud: 'https://elsewhere.example' }), audience: [AUD] }));
    expect(error.code).toBe('token_rejected');
    expect(error.message).toContain('audience_mismatch');
  });

  it('refuses a token signed by a key the JWKS does not publish (unknown_key)', async () => {
    const other = await generateTestKey({ kid: 'k-other' });
    const error = await refusal(check(issuer.jwks, { token: await issuer.token({}, undefined, { key: other }), audience: [AUD] }));
    expect(error.message).toContain('the sample token is rejected: unknown_key');
  });

  it('refuses a token of another issuer (unknown_issuer), even with force', async () => {
    const stranger = await createTestIssuer({ issuer: 'https://other.example', audience: AUD, jwksUri: server.url });
    const error = await refusal(check(issuer.jwks, { token: await stranger.token(), audience: [AUD], force: true }));
    expect(error.message).toContain('unknown_issuer');
  });
});
