/**
 * The one home of option checks, for every public function that takes an options object: an
 * unknown option (naming the nearest known one), a number within its bounds, a boolean, a
 * function, an object with the methods required. A bad value throws a `TypeError` that names the
 * function, the option, the rule and the value found. Other areas reach these through
 * src/internal.
 */
import { quote } from './hint-text.js';

/** The bounds of a number option. */
export interface NumberRule {
  readonly min: number;
  readonly max: number;
  /** Whole numbers only. */
  readonly integer?: boolean;
  /** `min` itself is not allowed. */
  readonly exclusiveMin?: boolean;
  /** `0` is allowed besides `[min, max]` (it turns the feature off). */
  readonly orZero?: boolean;
  /** The unit, for the message: `seconds`, `milliseconds`, `bytes`. */
  readonly unit?: string;
}

/**
 * A short, safe description of a bad value for an error message: a string quoted as hints quote
 * one (cut, every control and bidirectional character escaped), since a value may be hostile
 * text from a table or a request.
 */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return quote(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

function withinRule(value: number, rule: NumberRule): boolean {
  if (!Number.isFinite(value) || (rule.integer === true && !Number.isInteger(value))) return false;
  if (rule.orZero === true && value === 0) return true;
  const aboveMin = rule.exclusiveMin === true ? value > rule.min : value >= rule.min;
  return aboveMin && value <= rule.max;
}

/** What `rule` asks for, in words: `a whole number of milliseconds from 10 to 600000`. */
function ruleText(rule: NumberRule): string {
  const kind = `${rule.integer === true ? 'a whole number' : 'a number'}${rule.unit === undefined ? '' : ` of ${rule.unit}`}`;
  const range = rule.exclusiveMin === true ? `above ${rule.min} and at most ${rule.max}` : `from ${rule.min} to ${rule.max}`;
  return `${kind} ${range}${rule.orZero === true ? ', or 0' : ''}`;
}

/**
 * `value`, or `fallback` when it is `undefined`; a number within `rule` either way.
 * @throws {TypeError} `${owner}: ${name} must be … , got …` otherwise.
 */
export function numberOption(owner: string, name: string, value: unknown, fallback: number, rule: NumberRule): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !withinRule(value, rule)) {
    throw new TypeError(`${owner}: ${name} must be ${ruleText(rule)}, got ${describe(value)}`);
  }
  return value;
}

/** `value`, or `fallback` when it is `undefined`. @throws {TypeError} naming `owner` and `name` when it is not a boolean. */
export function booleanOption(owner: string, name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`${owner}: ${name} must be a boolean, got ${describe(value)}`);
  return value;
}

/** `value`, a function, or `undefined`. @throws {TypeError} naming `owner` and `name` when it is anything else. */
export function functionOption<T>(owner: string, name: string, value: unknown): T | undefined {
  if (value !== undefined && typeof value !== 'function')
    throw new TypeError(`${owner}: ${name} must be a function, got ${describe(value)}`);
  return value as T | undefined;
}

/** `value` in words for a refusal of an object that needs `member`: `an object whose get is undefined`, or {@link describe}. */
export function describeHolder(value: unknown, member: string): string {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return describe(value);
  return `${typeof value === 'function' ? 'a function' : 'an object'} whose ${member} is ${describe((value as Record<string, unknown>)[member])}`;
}

/**
 * What a list option that must be a non-empty array of items passing `ok` holds instead, for the
 * `got …` of its refusal: the value, `an empty array`, or the first item refused and its index.
 */
export function describeListFault(value: unknown, ok: (item: unknown) => boolean): string {
  if (!Array.isArray(value)) return describe(value);
  if (value.length === 0) return 'an empty array';
  const index = value.findIndex((item) => !ok(item));
  return `${describe(value[index])} at [${index}]`;
}

/**
 * `value`, an object with each of `methods` (a verifier, a store, a provider).
 * @param what what it must be, for the message: `a verifier from createVerifier()`
 * @throws {TypeError} naming `owner`, `name`, `what` and the first method missing.
 */
export function methodsOption<T>(owner: string, name: string, value: unknown, methods: readonly string[], what: string): T {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) {
    throw new TypeError(`${owner}: ${name} must be ${what}, got ${describe(value)}`);
  }
  const missing = methods.find((method) => typeof (value as Record<string, unknown>)[method] !== 'function');
  if (missing !== undefined)
    throw new TypeError(
      `${owner}: ${name} must be ${what} (${name}.${missing} must be a function, got ${describe((value as Record<string, unknown>)[missing])})`,
    );
  return value as T;
}

/** Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`, up to `limit` + 1. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const row = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, (previous[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, (before[j - 2] as number) + 1);
      row.push(best);
    }
    before = previous;
    previous = row;
  }
  return previous[b.length] as number;
}

/**
 * The known name nearest `given` (letter case aside, a third of its letters at most), or
 * `undefined` when none is near. Option names are short, so the quadratic edit distance is cheap;
 * a long name is compared by its first 64 characters.
 */
export function nearestName(given: string, known: Iterable<string>): string | undefined {
  const text = given.slice(0, 64).toLowerCase();
  const limit = Math.max(2, Math.floor(text.length / 3));
  let nearest: string | undefined;
  let distance = limit + 1;
  for (const name of known) {
    const found = editDistance(text, name.toLowerCase(), limit);
    if (found < distance) {
      nearest = name;
      distance = found;
    }
  }
  return nearest;
}

/**
 * Every option name of `T`, each given once as `name: true`: a name missing, or one `T` does not
 * have, fails to compile, so the names {@link rejectUnknownOptions} accepts follow the options' type.
 */
export type OptionNames<T> = { readonly [K in keyof Required<T>]: true };

/** The names of {@link OptionNames}, for {@link rejectUnknownOptions}. */
export function optionNames<T extends object>(names: OptionNames<T>): ReadonlySet<string> {
  return new Set(Object.keys(names));
}

/**
 * Throws when `options` is not an object, or has a key not in `known` (a misspelt option is a silent
 * misconfiguration, in JavaScript as in TypeScript), naming the nearest known option.
 */
export function rejectUnknownOptions(owner: string, options: object, known: ReadonlySet<string>): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`${owner}: options must be an object, got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (known.has(key)) continue;
    const nearest = nearestName(key, known);
    const advice = nearest === undefined ? `the options are ${[...known].join(', ')}` : `did you mean ${quote(nearest)}?`;
    throw new TypeError(`${owner}: unknown option ${describe(key)} (${advice})`);
  }
}
