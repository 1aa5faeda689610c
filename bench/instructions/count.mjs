/**
 * One case of `bench/instructions.mjs`, run under valgrind by it:
 * `node count.mjs <case> <tokens file> <warm-up> <counted>`. Qualifies the case, converts every
 * token of the file to the case's input (so that two runs differing only in `<counted>` do the
 * same work besides), then verifies `<warm-up>` tokens and `<counted>` more, one at a time:
 * distinct tokens (cold) or one token again and again (warm).
 */
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import { qualify } from '../lib/qualify.mjs';
import { flat, rawParts } from '../lib/tokens.mjs';
import { CASES } from './cases.mjs';

// Inside the event loop from here on, where the parent has callgrind count.
await new Promise((resolve) => setImmediate(resolve));

const [id, file, warmUpText, countedText] = process.argv.slice(2);
const c = CASES.find((candidate) => candidate.id === id);
if (c === undefined) throw new Error(`unknown case ${id}`);
const warmUp = Number(warmUpText);
const counted = Number(countedText);

const { jwk, pem, tokens, valid, bad } = JSON.parse(readFileSync(file, 'utf8'));
const key = { jwk, pem, publicKey: crypto.createPublicKey(pem) };
const { op, sync, input, check } = await c.make(key);

const convert = { token: flat, header: (token) => flat(`Bearer ${token}`), parts: rawParts }[input];
const verify = async (value) => {
  const result = sync ? op(value) : await op(value);
  if (check !== undefined) check(result);
  return result;
};
// Raw `crypto.verify` checks the signature only: the tampered token is the one it must refuse.
const refused = input === 'parts' ? { tampered: bad.tampered } : bad;
await qualify(c.label, verify, convert(valid), Object.fromEntries(Object.entries(refused).map(([kind, token]) => [kind, convert(token)])));

const inputs = c.mode === 'warm' ? [convert(valid)] : tokens.map(convert);
if (c.mode === 'cold' && inputs.length < warmUp + counted) throw new Error(`${file} holds ${inputs.length} tokens; ${warmUp + counted} are needed`);
const total = warmUp + counted;
// `op` is called here, as lib/harness.mjs's samplers call it: a wrapper such as `verify` above
// would be counted with every verification.
for (let index = 0; index < total; index += 1) {
  const value = inputs[c.mode === 'warm' ? 0 : index];
  if (sync) {
    const result = op(value);
    if (check !== undefined) check(result);
  } else {
    const result = await op(value);
    if (check !== undefined) check(result);
  }
}
