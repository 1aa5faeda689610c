// Preloaded into a test's child processes (`node --import <this file>`): their 2048-bit RSA keys
// come from the keys the test reserved for them from the run's pool (`reservePooledKeys` of
// test/support/key-pool.ts, pooled-generate-key.mjs), then fresh ones once those run out.
//
// PAYGATE_TEST_KEYS names a JSON file holding the reserved keys (private JWKs); `<that file>.next`
// holds the index of the next one to hand out, for children run one after another. The index is
// written before a key is handed out, so a child killed at any moment never hands one out twice.
// Without PAYGATE_TEST_KEYS nothing changes.
import { readFileSync, writeFileSync } from 'node:fs';
import { installPooledGenerateKey } from './pooled-generate-key.mjs';

const file = process.env.PAYGATE_TEST_KEYS;
if (file) {
  const keys = JSON.parse(readFileSync(file, 'utf8'));
  const cursor = `${file}.next`;
  installPooledGenerateKey(() => {
    let index = 0;
    try {
      index = Number(readFileSync(cursor, 'utf8'));
    } catch {
      // no key handed out yet
    }
    const key = keys[index];
    if (key !== undefined) writeFileSync(cursor, String(index + 1));
    return key;
  });
}
