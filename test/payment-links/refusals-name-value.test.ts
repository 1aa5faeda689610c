/**
 * Each option refusal of the payment-link APIs names the value it found (`got …`), quoted as the
 * package quotes values, so a misconfigured gateway is fixed from the message alone.
 */
import { describe, expect, it } from 'vitest';
import {
  InMemoryDirectory,
  createGetPaymentLinkHandler,
  createOpenApiDocument,
  createPaymentLinkHandler,
} from '../../src/payment-links/index.js';
import { readJsonBody } from '../../src/payment-links/request-body.js';
import { jsonRequest, makeHandler, useCallers, validBody } from './support.js';

const callers = useCallers();

function messageOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as Error).message;
  }
  throw new Error('expected a TypeError');
}

describe('payment-link refusals name the value found', () => {
  it('createPaymentLinkHandler names deps that are not an object', () => {
    expect(messageOf(() => createPaymentLinkHandler('https://pay.example.test/l' as never))).toContain('got "https://pay.example.test/l"');
  });

  it('createPaymentLinkHandler names the missing method of a store', () => {
    const message = messageOf(() => createPaymentLinkHandler({ payPageUrl: 'https://pay.example.test/l', store: { insert: 5 } as never }));
    expect(message).toMatch(/store\.\w+ must be a function, got (5|undefined)/);
  });

  it('createPaymentLinkHandler names what now() returned', async () => {
    const handler = makeHandler({ now: () => Number.NaN });
    await expect(handler(jsonRequest(await callers.auth(), validBody()))).rejects.toThrow(/now\(\) must return .*got NaN/);
  });

  it('createOpenApiDocument names a version that is not a string', () => {
    expect(messageOf(() => createOpenApiDocument({ version: 2 as never }))).toContain('got 2');
    expect(messageOf(() => createOpenApiDocument({ version: '' }))).toContain('got ""');
  });

  it('createGetPaymentLinkHandler names a store without get', () => {
    expect(messageOf(() => createGetPaymentLinkHandler({ store: 'links' as never }))).toContain('got "links"');
    expect(messageOf(() => createGetPaymentLinkHandler({ store: {} as never }))).toContain('got an object whose get is undefined');
  });

  it('InMemoryDirectory quotes a seed id that is no UUID, cut to a log line', () => {
    const id = `x${'9'.repeat(500)}`;
    const message = messageOf(() => new InMemoryDirectory([{ tenant: 'ern:acme/tenants/t-1', stores: [{ id, name: 'Desk' }] }] as never));
    expect(message).toContain('got "x999');
    expect(message).not.toContain(id);
  });

  it('InMemoryDirectory names tenants that are not a list', () => {
    expect(messageOf(() => new InMemoryDirectory('ern:acme/tenants/t-1' as never))).toContain('got "ern:acme/tenants/t-1"');
  });

  it('InMemoryDirectory names a ref that is no name, and a department store it does not hold', () => {
    const tenant = 'ern:acme/tenants/t-1';
    expect(messageOf(() => new InMemoryDirectory([{ tenant, departments: [{ ref: 'a b' }] }] as never))).toContain('got "a b"');
    const store = '5a1d0f8e-8d3c-4c55-9a55-0f7a3c1b0a09';
    const seed = { tenant, departments: [{ ref: 'cardiology', store }] };
    expect(messageOf(() => new InMemoryDirectory([seed] as never))).toContain(`got "${store}"`);
  });

  it('names the chunk a body stream yielded that is neither bytes nor text', async () => {
    async function* stream() {
      yield 42;
    }
    const request = { auth: null, headers: { 'content-type': 'application/json' }, body: stream() };
    await expect(readJsonBody(request as never, 1024)).rejects.toThrow(/neither bytes nor text, got 42/);
  });

  it('InMemoryDirectory names the payment-method code it refuses, and where', () => {
    const seed = { tenant: 'ern:acme/tenants/t-1', paymentMethods: { allowed: ['visa', ''], blocked: [] } };
    expect(messageOf(() => new InMemoryDirectory([seed] as never))).toContain('got "" at [1]');
  });
});
