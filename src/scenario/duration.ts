/**
 * Spans of cluster time as scenario files write them: a whole number of
 * milliseconds, or a number with a unit (`500ms`, `30s`, `1.5m`, `2h`, `1d`),
 * at most MAX_DURATION_MS (30 days).
 */
import { MAX_DURATION_MS } from './limits.js';

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The pattern of a duration string, for the schema. */
export const DURATION_PATTERN = '^[0-9]+(\\.[0-9]+)?(ms|s|m|h|d)$';

const DURATION = new RegExp(DURATION_PATTERN);

/** Milliseconds, or undefined for what is not a duration (or is longer than MAX_DURATION_MS). */
export function parseDuration(value: unknown): number | undefined {
  const ms = millisecondsOf(value);
  return ms !== undefined && ms <= MAX_DURATION_MS ? ms : undefined;
}

function millisecondsOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = DURATION.exec(value);
  if (match === null) return undefined;
  return Math.round(Number(value.slice(0, value.length - match[2]!.length)) * UNITS[match[2]!]!);
}

/** A span in the largest unit that divides it: `90s`, `10m`, `1500ms`. */
export function formatSpan(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const size = UNITS[unit]!;
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
