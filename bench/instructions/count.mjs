/**
 * One case of `bench/instructions.mjs`, run under valgrind by it:
 * `node count.mjs <case> <tokens file> <warm-up> <counted>`. Qualifies the case, converts every
 * token to the case's input up front (so that two runs differing only in `<counted>` do the same
 * work besides), then verifies `<warm-up>` tokens and `<counted>` more, one at a time: distinct
 * tokens (cold) or one token again (warm); or, for a case with `lanes`, that many distinct tokens
 * in flight at once.
 */
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import { flat, rawParts } from '../lib/tokens.mjs';
import { inFlight, qualify } from '../lib/verifiers.mjs';
import { CASES } from './cases.mjs';

// Inside the event loop from here on, where the parent has callgrind count.
await new Promise((resolve) => setImmediate(resolve));

const [id, file, warmUpText, countedText] = process.argv.slice(2);
const c = CASES.find((candidate) => candidate.id === id);
if (c === undefined) throw new Error(`unknown case ${id}`);
const total = Number(warmUpText) + Number(countedText);

const { jwk, pem, tokens, valid, bad } = JSON.parse(readFileSync(file, 'utf8'));
const { op, async, input } = await c.make({ jwk, pem, publicKey: crypto.createPublicKey(pem) });
const convert = input === 'parts' ? rawParts : flat;
// Raw `crypto.verify` checks the signature only: the tampered token is the one it must refuse.
const refused = input === 'parts' ? { tampered: bad.tampered } : bad;
await qualify(c.label, op, convert(valid), Object.fromEntries(Object.entries(refused).map(([kind, token]) => [kind, convert(token)])));

const warm = c.group.startsWith('warm');
const inputs = warm ? [convert(valid)] : tokens.map(convert);
if (inputs.length < (warm ? 1 : total)) throw new Error(`${file} holds ${inputs.length} tokens; ${total} are needed`);
// `op` is called here directly: a wrapper would be counted with every verification.
if (c.lanes !== undefined) await inFlight(op, inputs, 0, total, c.lanes);
else
  for (let index = 0; index < total; index += 1) {
    const value = inputs[warm ? 0 : index];
    if (async) await op(value);
    else op(value);
  }
