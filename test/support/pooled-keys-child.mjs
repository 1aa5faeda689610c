// Preloaded into a test's child processes (`node --import <this file>`): their 2048-bit RSA keys
// come from the keys the test reserved for them from the run's pool (`reservePooledKeys` of
// test/support/key-pool.ts, pooled-generate-key.mjs), then fresh ones once those run out.
//
// PAYGATE_TEST_KEYS names a JSON file holding the reserved keys (private JWKs); `<that file>.next`
// holds the index of the next one to hand out, for children run one after another. The index is
// replaced before a key is handed out, by a rename, so a child killed at any moment never hands
// one out twice: a kill between the truncation and the write of a plain rewrite would leave the
// file empty, and the next child would start again at key 0.
// Without PAYGATE_TEST_KEYS nothing changes.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { installPooledGenerateKey } from './pooled-generate-key.mjs';

const file = process.env.PAYGATE_TEST_KEYS;
if (file) {
  const keys = JSON.parse(readFileSync(file, 'utf8'));
  const cursor = `${file}.next`;
  installPooledGenerateKey(() => {
    const index = readCursor(cursor);
    const key = keys[index];
    if (key !== undefined) {
      writeFileSync(`${cursor}.${process.pid}`, String(index + 1));
      renameSync(`${cursor}.${process.pid}`, cursor);
    }
    return key;
  });
}

/** The index of the next key to hand out: 0 before the first; an error for anything but a count. */
function readCursor(cursor) {
  let text;
  try {
    text = readFileSync(cursor, 'utf8');
  } catch (error) {
    if (error.code === 'ENOENT') return 0;
    throw error;
  }
  if (!/^\d+$/.test(text)) throw new Error(`${cursor} holds ${JSON.stringify(text)}, not the index of the next key`);
  return Number(text);
}
