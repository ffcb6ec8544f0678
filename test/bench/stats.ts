/**
 * Small numeric helpers for the benchmark: nearest-rank percentiles and a
 * plain-text table whose columns line up.
 */

/** The q-th percentile (0..1) by nearest rank; NaN for an empty sample. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function sortedCopy(sample: readonly number[]): number[] {
  return [...sample].sort((a, b) => a - b);
}

export interface Spread {
  readonly min: number;
  readonly median: number;
  readonly p90: number;
  readonly max: number;
}

export function spreadOf(sample: readonly number[]): Spread {
  const s = sortedCopy(sample);
  return {
    min: s[0] ?? Number.NaN,
    median: percentile(s, 0.5),
    p90: percentile(s, 0.9),
    max: s[s.length - 1] ?? Number.NaN,
  };
}

/** A number with a fixed count of decimals and thousands separators. */
export function num(value: number, decimals = 0): string {
  if (!Number.isFinite(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/** Rows of cells as text; the first column is left-aligned, the others right-aligned. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => (r[c] ?? '').length)));
  const line = (r: readonly string[]) =>
    r
      .map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Progress goes to stderr so that stdout holds only the figures. */
export function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}
