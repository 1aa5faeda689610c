import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { HandlerRequest } from '../../src/payment-links/index.js';
import { TENANT_A, makeHandler, useCallers, validBody } from './support.js';

const callers = useCallers();

async function send(request: Omit<HandlerRequest, 'auth'>, deps: Parameters<typeof makeHandler>[0] = {}) {
  const handler = makeHandler(deps);
  const response = await handler({ auth: await callers.auth(), ...request });
  return { response, stored: await handler.store.list(TENANT_A) };
}

const json = JSON.stringify(validBody());

describe('POST /payment-links/ body handling', () => {
  it.each([
    ['text/plain', 'text/plain'],
    ['form encoding', 'application/x-www-form-urlencoded'],
    ['a JSON-like vendor type', 'application/vnd.api+json'],
    ['JSON in another charset', 'application/json; charset=iso-8859-1'],
  ])('refuses %s with 415', async (_label, type) => {
    const { response, stored } = await send({ headers: { 'content-type': type }, body: json });
    expect(response.status).toBe(415);
    expect(response.body).toMatchObject({ code: 'unsupported_media_type', status: 415 });
    expect(stored).toEqual([]);
  });

  it.each([
    ['the media type found', 'text/plain', '"text/plain"'],
    ['the charset found', 'application/json; charset=iso-8859-1', '"iso-8859-1"'],
  ])('names %s in a 415', async (_label, type, found) => {
    const { response } = await send({ headers: { 'content-type': type }, body: json });
    expect((response.body as { detail: string }).detail).toContain(found);
  });

  it('names the repeated Content-Type values it found in a 415, quoted and escaped', async () => {
    const { response } = await send({ headers: { 'content-type': ['application/json', 'text/plain\u001b[31m'] }, body: json });
    expect(response.status).toBe(415);
    expect((response.body as { detail: string }).detail).toContain('got "application/json", "text/plain\\u001b[31m"');
  });

  it.each([
    ['gzip', 'gzip'],
    ['deflate in upper case', 'DEFLATE'],
    ['identity followed by br', 'identity, br'],
  ])('refuses a raw body sent with Content-Encoding %s with 415, storing nothing', async (_label, coding) => {
    const { response, stored } = await send({ headers: { 'content-type': 'application/json', 'content-encoding': coding }, body: json });
    expect(response.status).toBe(415);
    expect(response.body).toMatchObject({ code: 'unsupported_media_type' });
    expect(stored).toEqual([]);
  });

  it('names the Content-Encoding found in its 415, quoted and escaped', async () => {
    const { response } = await send({ headers: { 'content-type': 'application/json', 'content-encoding': 'gzip\u001b[31m' }, body: json });
    expect((response.body as { detail: string }).detail).toContain('got "gzip\\u001b[31m"');
  });

  it.each(['identity', 'Identity', ''])('accepts a raw body sent with Content-Encoding %j', async (coding) => {
    const { response } = await send({ headers: { 'content-type': 'application/json', 'content-encoding': coding }, body: json });
    expect(response.status).toBe(201);
  });

  it('takes a body a framework parsed (and decoded) already whatever its Content-Encoding', async () => {
    const { response } = await send({ headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: validBody() });
    expect(response.status).toBe(201);
  });

  it('refuses a body without Content-Type with 415', async () => {
    const { response } = await send({ headers: {}, body: json });
    expect(response.status).toBe(415);
  });

  it.each(['application/json', 'Application/JSON', 'application/json; charset=utf-8', 'application/json;charset="UTF-8"'])(
    'accepts Content-Type %j',
    async (type) => {
      const { response } = await send({ headers: { 'Content-Type': type }, body: json });
      expect(response.status).toBe(201);
    },
  );

  it.each([
    ['broken JSON', '{"amount": "1",'],
    ['an empty body', ''],
    ['whitespace only', '  \n'],
    ['bytes that are not UTF-8', new Uint8Array([0x7b, 0xff, 0x7d])],
  ])('refuses %s with 400 invalid_json', async (_label, body) => {
    const { response, stored } = await send({ headers: { 'content-type': 'application/json' }, body });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'invalid_json' });
    expect(stored).toEqual([]);
  });

  it.each([
    ['an array', '[]'],
    ['a string', '"hello"'],
    ['a number', '12.5'],
    ['null', 'null'],
  ])('refuses a body that is %s with 400', async (_label, body) => {
    const { response } = await send({ headers: { 'content-type': 'application/json' }, body });
    expect(response.status).toBe(400);
    expect(['invalid_body', 'invalid_json']).toContain((response.body as { code: string }).code);
  });

  it('names the start of a body that is not JSON, quoted and escaped, in a 400 invalid_json', async () => {
    const { response } = await send({ headers: { 'content-type': 'application/json' }, body: "{'amount': '1'}" });
    expect(response.body).toMatchObject({ code: 'invalid_json' });
    expect((response.body as { detail: string }).detail).toContain(`got "{'amount': '1'}"`);
  });

  it.each([
    ['a byte that starts no character', [0x7b, 0xff, 0x7d], 'byte 1 (0xff)'],
    ['a sequence cut by another start', [0x7b, 0x22, 0xc3, 0x41, 0x22, 0x7d], 'byte 3 (0x41)'],
    ['a sequence cut by the end of the body', [0x7b, 0x7d, 0xe2, 0x82], 'byte 4'],
    [
      'a fault past the first 4096 bytes, in a character begun before them',
      [...Array(4095).fill(0x20), 0xe2, 0x82, 0x41],
      'byte 4097 (0x41)',
    ],
    ['a stray continuation byte after a 4-byte character', [...Array(4092).fill(0x20), 0xf0, 0x9f, 0x98, 0x80, 0x80], 'byte 4096 (0x80)'],
  ])('names where the UTF-8 breaks in a 400 invalid_json: %s', async (_label, bytes, found) => {
    const { response } = await send({ headers: { 'content-type': 'application/json' }, body: new Uint8Array(bytes) });
    expect(response.body).toMatchObject({ code: 'invalid_json' });
    expect((response.body as { detail: string }).detail).toContain(found);
  });

  it.each([
    ['an array', '[]', 'got an array'],
    ['a string', '"hello"', 'got a string'],
    ['null', 'null', 'got null'],
  ])('names the JSON type of a body that is %s in its 400 invalid_body', async (_label, body, found) => {
    const { response } = await send({ headers: { 'content-type': 'application/json' }, body });
    expect(response.body).toMatchObject({ code: 'invalid_body' });
    expect((response.body as { detail: string }).detail).toContain(found);
  });

  it('reads a body that starts with a UTF-8 byte order mark as the JSON after it', async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(json)]);
    const { response } = await send({ headers: { 'content-type': 'application/json' }, body: bytes });
    expect(response.status).toBe(201);
  });

  it('refuses a body over 64 KiB with 413', async () => {
    const body = JSON.stringify(validBody({ description: 'x'.repeat(65_536) }));
    const { response, stored } = await send({ headers: { 'content-type': 'application/json' }, body });
    expect(response.status).toBe(413);
    expect(response.body).toMatchObject({ code: 'payload_too_large', status: 413 });
    expect(stored).toEqual([]);
  });

  it.each([
    ['a declared Content-Length', { 'content-length': '70000' }, 'x', 'got Content-Length "70000"'],
    ['a body of bytes', {}, new Uint8Array(70_000), 'got 70000 bytes'],
    [
      'a stream, read no further than the limit',
      {},
      (async function* () {
        yield new Uint8Array(70_000);
      })(),
      'got more than 65536 bytes',
    ],
  ])('names what it found of %s in a 413', async (_label, headers, body, found) => {
    const { response } = await send({ headers: { 'content-type': 'application/json', ...headers }, body });
    expect(response.status).toBe(413);
    expect((response.body as { detail: string }).detail).toContain(found);
  });

  it('accepts a body of exactly the limit', async () => {
    const base = JSON.stringify(validBody({ description: '' }));
    const padded = `${base}${' '.repeat(2048 - Buffer.byteLength(base))}`;
    const { response } = await send({ headers: { 'content-type': 'application/json' }, body: padded }, { maxBodyBytes: 2048 });
    expect(response.status).toBe(201);
  });

  it('counts bytes, not characters, against the limit', async () => {
    const base = JSON.stringify(validBody({ description: '' }));
    const body = base.replace('"description":""', `"description":"${'é'.repeat(600)}"`); // 1200 bytes of text
    const { response } = await send({ headers: { 'content-type': 'application/json' }, body }, { maxBodyBytes: 1024 });
    expect(response.status).toBe(413);
  });

  it('refuses a declared Content-Length over the limit before reading', async () => {
    let pulled = 0;
    async function* stream() {
      pulled += 1;
      yield new TextEncoder().encode(json);
    }
    const { response } = await send({
      headers: { 'content-type': 'application/json', 'content-length': '70000' },
      body: stream(),
    });
    expect(response.status).toBe(413);
    expect(pulled).toBe(0);
  });

  it('reads a stream (a Node request) only up to the limit', async () => {
    let pulled = 0;
    async function* endless() {
      for (;;) {
        pulled += 1;
        yield new Uint8Array(16_384);
      }
    }
    const { response } = await send({ headers: { 'content-type': 'application/json' }, body: endless() });
    expect(response.status).toBe(413);
    expect(pulled).toBe(5);
  });

  it('reads a Node stream, a Web ReadableStream and an ArrayBuffer alike', async () => {
    const bodies = [
      Readable.from([Buffer.from(json.slice(0, 10)), Buffer.from(json.slice(10))]),
      new Blob([json]).stream(),
      new TextEncoder().encode(json).buffer,
    ];
    for (const body of bodies) {
      const { response } = await send({ headers: { 'content-type': 'application/json' }, body });
      expect(response.status).toBe(201);
    }
  });

  it.each([
    [
      'a Node request',
      () =>
        new Readable({
          read() {
            this.push(Buffer.from(json.slice(0, 10)));
            this.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
          },
        }),
    ],
    [
      'a Web ReadableStream',
      () =>
        new ReadableStream({
          pull(controller) {
            controller.enqueue(new TextEncoder().encode(json.slice(0, 10)));
            controller.error(new TypeError('terminated'));
          },
        }),
    ],
  ])('answers %s cut short by the client 400 invalid_json, not a rejection taken for a server fault', async (_label, body) => {
    const { response, stored } = await send({ headers: { 'content-type': 'application/json' }, body: body() });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'invalid_json' });
    expect(stored).toEqual([]);
  });

  it('takes a body a framework parsed already, still checking Content-Type and Content-Length', async () => {
    expect((await send({ headers: { 'content-type': 'application/json' }, body: validBody() })).response.status).toBe(201);
    expect((await send({ headers: { 'content-type': 'text/plain' }, body: validBody() })).response.status).toBe(415);
    const declared = { 'content-type': 'application/json', 'content-length': '65537' };
    expect((await send({ headers: declared, body: validBody() })).response.status).toBe(413);
  });

  it('reads headers from a Web Headers object', async () => {
    const { response } = await send({ headers: new Headers({ 'Content-Type': 'application/json' }), body: json });
    expect(response.status).toBe(201);
  });
});
