import express from 'express';
import Fastify from 'fastify';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { InMemoryKeyStore, createIssuer, jwksFastifyHandler, jwksFetchHandler, jwksNodeHandler } from '../../src/issuer/index.js';

const issuer = await createIssuer({
  issuer: 'https://auth.acme.example',
  audience: 'https://payments.example',
  product: 'acme',
  keyStore: new InMemoryKeyStore(),
});
const expected = issuer.jwks();

describe('JWKS handlers', () => {
  it('fetch: serves the document with its Cache-Control and content type', async () => {
    const response = jwksFetchHandler(issuer)(new Request('https://auth.acme.example/.well-known/jwks.json'));
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, max-age=600');
    expect(response.headers.get('content-type')).toBe('application/jwk-set+json');
    expect(await response.json()).toEqual(expected.document);
  });

  it('fetch: answers HEAD without a body and refuses POST with 405', async () => {
    const handler = jwksFetchHandler(issuer);
    const head = handler(new Request('https://a.example/jwks', { method: 'HEAD' }));
    expect([head.status, await head.text()]).toEqual([200, '']);
    const post = handler(new Request('https://a.example/jwks', { method: 'POST' }));
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
  });

  it('Express: serves the document through jwksNodeHandler', async () => {
    const app = express();
    app.get('/.well-known/jwks.json', jwksNodeHandler(issuer));
    const response = await request(app).get('/.well-known/jwks.json');
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('public, max-age=600');
    expect(JSON.parse(response.text)).toEqual(expected.document);
  });

  it('Fastify: serves the document through jwksFastifyHandler', async () => {
    const app = Fastify();
    app.get('/.well-known/jwks.json', jwksFastifyHandler(issuer));
    const response = await app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['cache-control']).toBe('public, max-age=600');
    expect(response.headers['content-type']).toMatch(/^application\/jwk-set\+json/);
    expect(response.json()).toEqual(expected.document);
    await app.close();
  });
});
