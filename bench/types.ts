/** What every `bench/*.bench.ts` module's default export resolves to. */
export interface BenchResult {
  name: string;
  /** Measured values: rates, counts, durations, and anything a reader needs to judge them. */
  figures: Record<string, number | string>;
  /** The headline ratio against the baseline measured in the same run (1 = as fast as the baseline). */
  ratio: number;
  /** What `ratio` divides by what. */
  ratioLabel: string;
  /** The target, in words (e.g. "≥ 60% of raw"). */
  target: string;
  pass: boolean;
}

export type Bench = () => Promise<BenchResult>;
