/** Near misses: the known name a mistyped one was meant to be, for "did you mean" hints. */

/** Edit distance: insertions, deletions, substitutions and swaps of two neighbours (optimal string alignment). */
export function distance(a: string, b: string): number {
  let before: number[] = [];
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        next[j] = Math.min(next[j]!, before[j - 2]! + 1);
    }
    before = row;
    row = next;
  }
  return row[b.length]!;
}

/** The known name nearest to `name`, if near enough to be a slip (a third of its letters, at least one); the first of equals. */
export function nearest(name: string, known: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const candidate of known) {
    const d = distance(name, candidate);
    if (d <= Math.max(1, Math.floor(candidate.length / 3)) && (best === undefined || d < best.d))
      best = { name: candidate, d };
  }
  return best?.name;
}
