/** Types of `conformance.mjs` (plain JavaScript, so that every runtime loads it as it stands). */
export interface ConformanceCase {
  readonly name: string;
  run(): Promise<void>;
}

export declare const cases: readonly ConformanceCase[];

export declare function runCases(
  list: readonly ConformanceCase[],
  label: string,
  print?: (line: string) => void,
): Promise<{ readonly passed: number; readonly failed: number }>;
