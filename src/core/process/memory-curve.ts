/**
 * How much memory a simulated task uses over virtual time, from its
 * `memory` label (TaskInfo.labels). Amounts are MiB (fractions allowed),
 * times take a unit (`ms`, `s`, `m`, `h`), measured from the task's start:
 *
 *   constant:64          64 MiB from the start on
 *   growing:10/s         0 MiB at the start, 10 MiB more every second
 *   growing:64+10/s      64 MiB at the start, 10 MiB more every second
 *   spike:512@30s        512 MiB more from 30 s on
 *   spike:512@30s/5s     512 MiB more from 30 s on, for 5 s
 *
 * Terms joined by `,` add up (`constant:64,spike:512@30s/5s`). A task
 * without the label uses no memory; a label that does not parse is
 * reported and treated as none.
 *
 * Usage is a sum of pieces that are each constant or linear, so the first
 * instant it passes a limit is computed, not found by polling: the caller
 * schedules one timer for it.
 */

/** The label that holds a task's memory curve. */
export const MEMORY_LABEL = 'memory';

export const MIB = 1024 * 1024;

/** One piece of a curve: `level + rate × (t − from)` MiB for `from ≤ t < until`, else 0. */
export interface MemoryPiece {
  readonly from: number;
  readonly until: number;
  readonly level: number;
  /** MiB per millisecond. */
  readonly rate: number;
}

/** A curve relative to its task's start (t = 0). */
export type MemoryCurve = readonly MemoryPiece[];

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const NUMBER = String.raw`\d+(?:\.\d+)?`;
const DURATION = new RegExp(`^(${NUMBER})(ms|s|m|h)$`);
const MIB_VALUE = new RegExp(`^${NUMBER}$`);

function duration(text: string): number | undefined {
  const m = DURATION.exec(text);
  return m === null ? undefined : Number(m[1]) * UNIT_MS[m[2]!]!;
}

function mib(text: string): number | undefined {
  return MIB_VALUE.test(text) ? Number(text) : undefined;
}

/** One term of the label, or the reason it does not parse. */
function term(text: string): MemoryPiece | string {
  const colon = text.indexOf(':');
  const [kind, arg] = colon < 0 ? [text, ''] : [text.slice(0, colon), text.slice(colon + 1)];
  switch (kind) {
    case 'constant': {
      const level = mib(arg);
      return level === undefined ? `'${text}': expected constant:<MiB>` : { from: 0, until: Infinity, level, rate: 0 };
    }
    case 'growing': {
      const m = new RegExp(`^(?:(${NUMBER})\\+)?(${NUMBER})/(ms|s|m|h)$`).exec(arg);
      if (m === null) return `'${text}': expected growing:[<MiB>+]<MiB>/<unit>`;
      return { from: 0, until: Infinity, level: Number(m[1] ?? 0), rate: Number(m[2]) / UNIT_MS[m[3]!]! };
    }
    case 'spike': {
      const m = /^([^@]+)@([^/]+)(?:\/(.+))?$/.exec(arg);
      const [level, at, length] = [
        mib(m?.[1] ?? ''),
        duration(m?.[2] ?? ''),
        m?.[3] === undefined ? Infinity : duration(m[3]),
      ];
      if (level === undefined || at === undefined || length === undefined)
        return `'${text}': expected spike:<MiB>@<time>[/<time>]`;
      return { from: at, until: at + length, level, rate: 0 };
    }
    default:
      return `'${text}': unknown term (constant, growing, spike)`;
  }
}

/** The curve a label value describes, or the reason it does not parse. */
export function parseMemoryCurve(value: string): { readonly curve: MemoryCurve } | { readonly error: string } {
  const pieces: MemoryPiece[] = [];
  for (const text of value.split(',').map((t) => t.trim())) {
    const piece = term(text);
    if (typeof piece === 'string') return { error: piece };
    pieces.push(piece);
  }
  return { curve: pieces };
}

/** The pieces of a curve moved to absolute time, for a task that started at `startMs`. */
export function shifted(curve: MemoryCurve, startMs: number): MemoryCurve {
  return curve.map((p) => ({ ...p, from: p.from + startMs, until: p.until + startMs }));
}

/** Bytes used at `t` by the pieces (whole bytes, as a cgroup counts them). */
export function bytesAt(pieces: MemoryCurve, t: number): number {
  let total = 0;
  for (const p of pieces) if (t >= p.from && t < p.until) total += p.level + p.rate * (t - p.from);
  return Math.round(total * MIB);
}

/**
 * The first whole millisecond at or after `fromMs` at which the pieces use
 * more than `limitBytes`; undefined if they never do. Between two
 * consecutive piece boundaries usage is linear, so each span is solved.
 */
export function firstExceeding(pieces: MemoryCurve, limitBytes: number, fromMs: number): number | undefined {
  if (limitBytes === Infinity) return undefined;
  const edges = [...new Set(pieces.flatMap((p) => [p.from, p.until]).filter((t) => t > fromMs && t !== Infinity))].sort(
    (a, b) => a - b,
  );
  const starts = [fromMs, ...edges.map((t) => Math.ceil(t))];
  for (let i = 0; i < starts.length; i++) {
    const start = starts[i]!;
    const end = starts[i + 1] ?? Infinity;
    if (start >= end) continue;
    const found = firstInSpan(pieces, limitBytes, start, end);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Within [start, end), where usage is linear: `base + slope × (t − start)` MiB. */
function firstInSpan(pieces: MemoryCurve, limitBytes: number, start: number, end: number): number | undefined {
  if (bytesAt(pieces, start) > limitBytes) return start;
  const live = pieces.filter((p) => start >= p.from && start < p.until);
  const slope = live.reduce((s, p) => s + p.rate, 0);
  if (slope <= 0) return undefined;
  const base = live.reduce((s, p) => s + p.level + p.rate * (start - p.from), 0);
  // Rounded bytes pass the limit once the exact MiB reach limit + half a byte; float error is a millisecond at most.
  const estimate = start + Math.ceil(((limitBytes + 0.5) / MIB - base) / slope);
  for (let t = Math.max(start, estimate - 2); t < end && t <= estimate + 2; t++)
    if (bytesAt(pieces, t) > limitBytes) return t;
  return undefined;
}
