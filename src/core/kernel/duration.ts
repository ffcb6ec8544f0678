/** Durations as upstream's stout `Duration` prints them. */

/**
 * A duration as upstream prints it: in the largest unit it reaches, as a
 * decimal (`1secs`, `1.5mins`, `500ms`, `0ns`).
 */
export function formatDuration(ms: number): string {
  const units: readonly [string, number][] = [
    ['weeks', 604_800_000],
    ['days', 86_400_000],
    ['hrs', 3_600_000],
    ['mins', 60_000],
    ['secs', 1_000],
    ['ms', 1],
    ['us', 0.001],
  ];
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  for (const [unit, size] of units) {
    if (abs >= size) return `${sign}${Number((abs / size).toPrecision(15))}${unit}`;
  }
  return `${sign}${Number((abs * 1_000_000).toPrecision(15))}ns`;
}
