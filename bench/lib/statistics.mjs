/**
 * The median of noisy rounds, how far it can be trusted, and what that says of a target.
 *
 * The interval is distribution-free: of n rounds, the k-th smallest and the k-th largest enclose
 * the true median unless at least n − k + 1 of the rounds fall on one side of it, which for a
 * median has the chance of a fair coin coming up the same way that often (a binomial tail). No
 * shape of the noise is assumed, only that rounds are independent; on a shared host they are
 * not quite, so the interval is a floor on the uncertainty, not its measure.
 */

/** The middle value of `values` (the mean of the two middle ones when they are even in number). */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The least confidence asked of an interval: the narrowest one (the largest k) that reaches it is taken. */
export const CONFIDENCE = 0.95;

/** P(X ≤ j) for X binomial with n trials of one chance in two, for j = 0 … n. */
function binomialHalfCdf(n) {
  const cdf = [];
  let term = 2 ** -n; // C(n, 0) / 2^n
  let sum = 0;
  for (let j = 0; j <= n; j += 1) {
    sum += term;
    cdf.push(sum);
    term = (term * (n - j)) / (j + 1);
  }
  return cdf;
}

/**
 * The median of `values` and an interval that holds the true median with at least `confidence`
 * (or, when `values` are too few for that, the widest one there is: their whole range, with the
 * coverage it has).
 * @param {readonly number[]} values at least one finite number
 * @param {number} [confidence]
 * @returns {{ median: number, low: number, high: number, coverage: number, rounds: number }}
 */
export function medianInterval(values, confidence = CONFIDENCE) {
  if (!Array.isArray(values) || values.length === 0 || !values.every(Number.isFinite)) {
    throw new TypeError('medianInterval: values must be a non-empty array of finite numbers');
  }
  if (!(confidence > 0 && confidence < 1)) throw new RangeError('medianInterval: confidence must lie between 0 and 1');
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const cdf = binomialHalfCdf(n);
  // The k-th order statistics from each end cover the median with 1 − 2·P(X ≤ k − 1).
  let k = 1;
  while (k + 1 <= Math.ceil(n / 2) && 1 - 2 * cdf[k] >= confidence) k += 1;
  const coverage = Math.max(0, 1 - 2 * cdf[k - 1]);
  return { median: median(sorted), low: sorted[k - 1], high: sorted[n - k], coverage, rounds: n };
}

/**
 * What one run says of "the median is at least `line`" (or, with `above: false`, at most):
 * `pass` reads the median, as the targets always have; `decided` says whether the interval lies
 * wholly on the side the median is on, so that the run tells the two apart.
 * @param {readonly number[]} values
 * @param {number} line
 * @param {{ above?: boolean, strict?: boolean }} [side] `strict`: the line itself does not pass
 * @returns {{ median: number, low: number, high: number, coverage: number, rounds: number, line: number, pass: boolean, decided: boolean }}
 */
export function judgeMedian(values, line, { above = true, strict = false } = {}) {
  const interval = medianInterval(values);
  const passes = (value) => (above ? (strict ? value > line : value >= line) : strict ? value < line : value <= line);
  const pass = passes(interval.median);
  const decided = pass === passes(interval.low) && pass === passes(interval.high);
  return { ...interval, line, pass, decided };
}

/**
 * One verdict over several parts of a target (each a {@link judgeMedian} result): it holds when
 * every part does; the run decides it when every part holds beyond doubt, or one misses so.
 * @param {readonly { pass: boolean, decided: boolean }[]} parts
 * @returns {{ pass: boolean, decided: boolean }}
 */
export function combineVerdicts(parts) {
  const pass = parts.every((part) => part.pass);
  const decided = pass ? parts.every((part) => part.decided) : parts.some((part) => !part.pass && part.decided);
  return { pass, decided };
}

/** A verdict for the targets table: `yes` or `**no**`, and whether the run's interval spans the line. */
export function verdictText({ pass, decided }) {
  const word = pass ? 'yes' : '**no**';
  return decided ? word : `${word} (the interval spans the line)`;
}
