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
});
