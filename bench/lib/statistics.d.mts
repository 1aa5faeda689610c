/** Types of `statistics.mjs`, for the tests that import it. */
export interface MedianInterval {
  readonly median: number;
  readonly low: number;
  readonly high: number;
  /** The chance that [low, high] holds the true median. */
  readonly coverage: number;
  readonly rounds: number;
}
export interface Verdict {
  readonly pass: boolean;
  readonly decided: boolean;
}
export const CONFIDENCE: number;
export function median(values: readonly number[]): number;
export function medianInterval(values: readonly number[], confidence?: number): MedianInterval;
export function judgeMedian(values: readonly number[], line: number, side?: { above?: boolean; strict?: boolean }): MedianInterval & Verdict & { readonly line: number };
export function combineVerdicts(parts: readonly Verdict[]): Verdict;
export function verdictText(verdict: Verdict): string;
