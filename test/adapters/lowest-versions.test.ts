/**
 * The shared table once more, against the oldest release of each framework that package.json's
 * peer range declares: Express 4, Fastify 4, Koa 2 and Hono 4.0, installed under aliases
 * (`express4`, `fastify4`, `koa2`, `hono-min` in devDependencies). The adapters load no framework
 * code of their own, so each reference app is built from the module given to it. The aliases are
 * typed as the latest release's module, whose API the apps use and the old release has too.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type express from 'express';
import type Fastify from 'fastify';
import type Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { describeAdapterTable } from './adapter-table.js';
import { expressHarness } from './express/express-app.js';
import { fastifyHarness } from './fastify/fastify-app.js';
import { type HonoModule, honoHarness } from './hono/hono-app.js';
import { koaHarness } from './koa/koa-app.js';

const load = createRequire(import.meta.url);

/** Each alias, the framework it installs, and the peer range whose lower end it must be. */
const LOWEST = [
  { alias: 'express4', framework: 'express' },
  { alias: 'fastify4', framework: 'fastify' },
  { alias: 'koa2', framework: 'koa' },
  { alias: 'hono-min', framework: 'hono' },
] as const;

function manifest(path: string): { version?: string; peerDependencies?: Record<string, string> } {
  return JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8'));
}

/** The version installed under `alias` (read from its manifest: Koa's `exports` leave out package.json). */
function installed(alias: string): string {
  return manifest(`../../node_modules/${alias}/package.json`).version ?? '';
}

describeAdapterTable(expressHarness(load('express4') as typeof express, `Express ${installed('express4')}`));
describeAdapterTable(fastifyHarness(load('fastify4') as typeof Fastify, `Fastify ${installed('fastify4')}`));
describeAdapterTable(koaHarness(load('koa2') as typeof Koa, `Koa ${installed('koa2')}`));
describeAdapterTable(honoHarness(load('hono-min') as HonoModule, `Hono ${installed('hono-min')}`));

describe('the oldest framework releases tested', () => {
  it.each(LOWEST)('installs $alias at the lower end of the peer range of $framework', ({ alias, framework }) => {
    const range = manifest('../../package.json').peerDependencies?.[framework] ?? '';
    expect(installed(alias)).toBe(/\d+\.\d+\.\d+/.exec(range)?.[0]);
  });
});
