/**
 * A verifier detached from `postgresKeyHistory` while a flush writes its history: the flush, which
 * took the verifier's changes before the detachment, must not keep the verifier afterwards (a
 * verifier holds its result cache, up to `cacheMaxBytes`). The flush's write is held by a gate
 * the test opens, so the detachment lands inside it every time.
 */
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { IssuerRegistry, type Verifier, createVerifier } from '../../src/index.js';
import { migrate, postgresKeyHistory } from '../../src/postgres/index.js';
import { TABLES } from '../../src/postgres/schema-names.js';
import { eventually } from './eventually.js';
import { createTestPglite } from './pglite.js';

const AUDIENCE = 'https://payments.test';
const ISSUER = 'https://detach.test';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/** A verifier trusting {@link ISSUER}, with one key of history changed here (so a flush writes it). */
function changedVerifier() {
  const verifier = createVerifier({
    registry: new IssuerRegistry([{ issuer: ISSUER, jwksUri: `${ISSUER}/jwks.json`, products: ['detach'] }]),
    audience: AUDIENCE,
  });
  const at = Date.now();
  verifier.mergeKeyHistory([
    {
      issuer: ISSUER,
      kid: 'detach-1',
      firstSeen: at,
      publishedAfter: null,
      firstUsed: null,
      lastUsed: null,
      latestExpiry: null,
      withdrawn: null,
      breaches: [],
    },
  ]);
  return verifier;
}

describe('postgresKeyHistory detaching a verifier during a flush', () => {
  let lite: PGlite;
  beforeAll(async () => {
    lite = await createTestPglite();
    await migrate(lite, { only: 'keys' });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await lite?.close();
  });

  it('keeps no hold on the verifier once that flush ends', async () => {
    const keys = await postgresKeyHistory(lite, { flushInterval: 600_000, onError: () => undefined });
    let open = (): void => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let held = 0;
    const query = lite.query.bind(lite);
    vi.spyOn(lite, 'query').mockImplementation(async (text: string, ...rest: unknown[]) => {
      if (text.includes(`INSERT INTO ${TABLES.keyHistory}`)) {
        held += 1;
        await gate;
      }
      return query(text, ...(rest as [unknown[]]));
    });
    try {
      let verifier: Verifier | undefined = changedVerifier();
      let detach: (() => void) | undefined = keys.attach(verifier);
      const flushing = keys.flush();
      await eventually('the flush writes the verifier history', () => held > 0);
      detach();
      detach = undefined;
      const ref = new WeakRef(verifier);
      verifier = undefined;
      open();
      await flushing;
      // A WeakRef holds its target until the job that made it ends.
      await new Promise((resolve) => setImmediate(resolve));
      collect();
      expect(ref.deref()).toBeUndefined();
    } finally {
      open();
      vi.restoreAllMocks();
      await keys.close();
    }
  });
});
