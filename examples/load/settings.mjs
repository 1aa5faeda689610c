/**
 * Settings of the load run, from flags or the environment (a flag wins), each checked and bounded.
 *
 *   --seconds N           LOAD_SECONDS            measured run, 1 to 600 (default 20)
 *   --warmup N            LOAD_WARMUP_SECONDS     warm-up before the memory baseline, 0 to 120 (default 3; 1 when seconds < 5)
 *   --connections N       LOAD_CONNECTIONS        concurrent connections, 1 to 256 (default 16)
 *   --keys N              LOAD_KEYS               Idempotency-Key values per tenant, 1 to 100000 (default 1000)
 *   --max-requests N      LOAD_MAX_REQUESTS       stop the run once this many responses came back (default 2000000)
 *   --max-heap-growth N   LOAD_MAX_HEAP_GROWTH_MB heap growth allowed from warm-up to end, MiB, after a full GC (default 24)
 *   --keep                LOAD_KEEP=1             keep the state directory (demo key, request log)
 */
import { parseArgs } from 'node:util';

const FLAGS = {
  seconds: { env: 'LOAD_SECONDS', min: 1, max: 600, fallback: 20 },
  warmup: { env: 'LOAD_WARMUP_SECONDS', min: 0, max: 120, fallback: undefined },
  connections: { env: 'LOAD_CONNECTIONS', min: 1, max: 256, fallback: 16, integer: true },
  keys: { env: 'LOAD_KEYS', min: 1, max: 100_000, fallback: 1000, integer: true },
  'max-requests': { env: 'LOAD_MAX_REQUESTS', min: 1, max: 100_000_000, fallback: 2_000_000, integer: true },
  'max-heap-growth': { env: 'LOAD_MAX_HEAP_GROWTH_MB', min: 1, max: 4096, fallback: 24 },
};

export const USAGE =
  'Usage: npm run load -- [--seconds N] [--warmup N] [--connections N] [--keys N] [--max-requests N] [--max-heap-growth MiB] [--keep]';

function number(name, text) {
  const { env, min, max, integer } = FLAGS[name];
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
    throw new TypeError(
      `--${name} (${env}) must be ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}, got ${JSON.stringify(text)}`,
    );
  }
  return value;
}

/** The settings of this run. @throws {TypeError} naming the flag at fault. */
export function readSettings(argv = process.argv.slice(2), env = process.env) {
  const options = Object.fromEntries(Object.keys(FLAGS).map((name) => [name, { type: 'string' }]));
  const { values } = parseArgs({
    args: argv,
    options: { ...options, keep: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
  const read = (name) => {
    const text = values[name] ?? env[FLAGS[name].env];
    return text === undefined ? FLAGS[name].fallback : number(name, text);
  };
  const seconds = read('seconds');
  return {
    help: values.help === true,
    seconds,
    warmup: read('warmup') ?? (seconds < 5 ? 1 : 3),
    connections: read('connections'),
    keys: read('keys'),
    maxRequests: read('max-requests'),
    maxHeapGrowthMiB: read('max-heap-growth'),
    keep: values.keep === true || env.LOAD_KEEP === '1',
  };
}
