/** Types of `report.mjs`, for the tests that import it. */
export interface Row {
  readonly id: string;
  readonly group: string;
  readonly label: string;
  readonly rate: number;
  readonly spread?: number;
  readonly role: 'baseline' | 'peer' | 'ours' | 'reference';
  readonly baseline?: string;
}
export type RowWithRatios = Row & {
  readonly xBaseline?: number;
  readonly xBestPeer?: number;
  readonly bestPeer?: string;
};

export function withRatios(rows: readonly Row[], options?: { lowerIsBetter?: boolean }): RowWithRatios[];
/** The middle of `values` (the upper of the two middle ones for an even count). */
export function median(values: readonly number[]): number;
export function figure(value: number | undefined): string;
export function ratio(value: number | undefined): string;
export function markdownTable(head: readonly string[], rows: readonly (readonly string[])[], align?: readonly string[]): string;
export function resultTable(rows: readonly Row[], options?: { unit?: string; lowerIsBetter?: boolean }): string;
export function replaceSection(document: string, name: string, text: string): string;
export function writeSection(name: string, text: string): void;
export function machineLine(): string;
