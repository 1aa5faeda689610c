/** Types of the formatting helpers of `report.mjs`, for the tests that import them. */
import type { MedianInterval } from './statistics.mjs';

export function ratio(value: number | undefined, digits?: number): string;
export function ratioAgainst(value: number, threshold: number): string;
export function signed(text: string): string;
export function intervalText(
  judged: Pick<MedianInterval, 'low' | 'high' | 'coverage'> & { readonly line?: number },
  format?: { map?: (value: number) => number; digits?: number; unit?: string },
): string;
