/**
 * Lists of integer ranges, as the RANGES resources (ports) hold them:
 * inclusive `[begin, end]` intervals, kept sorted and disjoint, adjacent
 * ones merged, so that equal lists are equal arrays. Their arithmetic is
 * exact, on integers.
 */

export type Range = readonly [begin: number, end: number];

/** Total number of integers covered by the ranges. */
export function rangesSize(rs: readonly Range[]): number {
  return rs.reduce((n, [lo, hi]) => n + (hi - lo + 1), 0);
}

/** Overlapping or repeated ranges within one list, described for an error. */
export function rangesOverlapWithin(items: readonly Range[]): string | undefined {
  const sorted = [...items].sort((p, q) => p[0] - q[0] || p[1] - q[1]);
  for (let i = 1; i < sorted.length; i++) {
    const [prev, next] = [sorted[i - 1]!, sorted[i]!];
    if (next[0] <= prev[1]) return `[${prev[0]}-${prev[1]}] and [${next[0]}-${next[1]}] overlap`;
  }
  return undefined;
}

export function normaliseRanges(items: readonly Range[]): Range[] {
  const sorted = items
    .filter(([lo, hi]) => lo <= hi)
    .map(([lo, hi]) => [lo, hi] as const)
    .sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

export function subtractRanges(a: readonly Range[], b: readonly Range[]): Range[] {
  let out: Range[] = [...a];
  for (const [blo, bhi] of b) {
    const next: Range[] = [];
    for (const [lo, hi] of out) {
      if (bhi < lo || blo > hi) next.push([lo, hi]);
      else {
        if (lo < blo) next.push([lo, blo - 1]);
        if (bhi < hi) next.push([bhi + 1, hi]);
      }
    }
    out = next;
  }
  return normaliseRanges(out);
}
