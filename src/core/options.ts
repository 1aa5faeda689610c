/**
 * Checks of option values: a bad one throws a `TypeError` naming the option and the rule.
 */

interface NumberRule {
  readonly min: number;
  readonly max: number;
  /** Whole numbers only. */
  readonly integer?: boolean;
  /** `min` itself is not allowed. */
  readonly exclusiveMin?: boolean;
}

/** `value`, or `fallback` when it is `undefined`; a number within `rule` either way. */
export function numberOption(owner: string, name: string, value: unknown, fallback: number, rule: NumberRule): number {
  if (value === undefined) return fallback;
  const belowMin = typeof value === 'number' && (rule.exclusiveMin ? value <= rule.min : value < rule.min);
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    belowMin ||
    value > rule.max ||
    (rule.integer === true && !Number.isInteger(value))
  ) {
    const kind = rule.integer ? 'a whole number' : 'a number';
    const lower = rule.exclusiveMin ? `above ${rule.min}` : `from ${rule.min}`;
    throw new TypeError(`${owner}: ${name} must be ${kind} ${lower} to ${rule.max}, got ${describe(value)}`);
  }
  return value;
}

/** `value`, or `fallback` when it is `undefined`. @throws {TypeError} naming `owner` and `name` when it is not a boolean. */
export function booleanOption(owner: string, name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`${owner}: ${name} must be a boolean, got ${describe(value)}`);
  return value;
}

/** A short, safe description of a bad value for an error message. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

/** Throws when `options` has a key not in `known` (a misspelt option is a silent misconfiguration). */
export function rejectUnknownOptions(owner: string, options: object, known: ReadonlySet<string>): void {
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw new TypeError(`${owner}: unknown option ${JSON.stringify(key)}`);
  }
}
