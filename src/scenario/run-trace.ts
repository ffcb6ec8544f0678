/**
 * What a run keeps of its trace, in bounded memory however long it runs:
 * the cluster keeps the latest TRACE_WINDOW entries; every entry goes to
 * the run's sink as it is written (`--trace` streams it to a file, whole);
 * and the rolling hash is noted every so many entries (at most
 * MAX_CHECKPOINTS notes, spaced wider as the run grows). Two runs of a file
 * compare by their hashes, which cover every entry; the notes narrow a
 * difference down to a stretch of entries, and the windows find the exact
 * entry when they hold that stretch.
 */
import type { Trace, TraceEntry } from '../core/kernel/trace.js';

/** The latest trace entries a scenario's cluster keeps in memory (up to twice as many are held). */
export const TRACE_WINDOW = 100_000;

/** The most hash notes a run keeps: when full, every other one goes and the spacing doubles. */
export const MAX_CHECKPOINTS = 1_024;

/** The trace's rolling hash after entry `seq`. */
export interface TraceCheckpoint {
  readonly seq: number;
  readonly hash: string;
}

export class RunTrace {
  #every = 1_024;
  readonly #checkpoints: TraceCheckpoint[] = [];
  readonly #listener = (entry: TraceEntry): void => this.#on(entry);

  constructor(
    private readonly trace: Trace,
    private readonly sink: ((entry: TraceEntry) => void) | undefined,
  ) {
    // The entries written while the cluster started are all still in its window.
    const kept = trace.entries();
    if (sink !== undefined && trace.length > 0 && kept[0]?.seq !== 1) {
      throw new Error(
        `the cluster's trace window lost its first entries before the run began (${trace.length} written)`,
      );
    }
    if (sink !== undefined) for (const entry of kept) sink(entry);
    trace.onEntry(this.#listener);
  }

  /** The hash notes so far, oldest first. */
  get checkpoints(): readonly TraceCheckpoint[] {
    return this.#checkpoints;
  }

  close(): void {
    this.trace.offEntry(this.#listener);
  }

  #on(entry: TraceEntry): void {
    this.sink?.(entry);
    if (entry.seq % this.#every !== 0) return;
    this.#checkpoints.push({ seq: entry.seq, hash: this.trace.hash() });
    if (this.#checkpoints.length < MAX_CHECKPOINTS) return;
    this.#every *= 2;
    const kept = this.#checkpoints.filter((c) => c.seq % this.#every === 0);
    this.#checkpoints.splice(0, this.#checkpoints.length, ...kept);
  }
}

/** What a run's trace looks like from outside: its hash and length, its notes, and the entries its window kept. */
export interface TraceSummary {
  readonly traceHash: string;
  readonly traceLength: number;
  readonly checkpoints: readonly TraceCheckpoint[];
  readonly trace?: readonly TraceEntry[];
}

/** Where two runs' traces part: the exact entry when the windows hold it, else the stretch between two notes. */
export type TraceDifference =
  | {
      readonly kind: 'entry';
      readonly seq: number;
      readonly first: TraceEntry | undefined;
      readonly second: TraceEntry | undefined;
    }
  | { readonly kind: 'stretch'; readonly afterSeq: number; readonly bySeq: number };

/** Undefined when the two traces are the same (hash and length), else where they part. */
export function traceDifference(a: TraceSummary, b: TraceSummary): TraceDifference | undefined {
  if (a.traceHash === b.traceHash && a.traceLength === b.traceLength) return undefined;
  const end = Math.max(a.traceLength, b.traceLength);
  // Notes at the same seq in both runs (the sparser run's spacing), compared in order.
  const theirs = new Map(b.checkpoints.map((c) => [c.seq, c.hash]));
  let afterSeq = 0;
  let bySeq = end;
  for (const c of a.checkpoints) {
    const other = theirs.get(c.seq);
    if (other === undefined) continue;
    if (other !== c.hash) {
      bySeq = c.seq;
      break;
    }
    afterSeq = c.seq;
  }
  const first = entryAt(a.trace, afterSeq + 1);
  const second = entryAt(b.trace, afterSeq + 1);
  if (
    (first === undefined && afterSeq + 1 <= a.traceLength) ||
    (second === undefined && afterSeq + 1 <= b.traceLength)
  ) {
    return { kind: 'stretch', afterSeq, bySeq };
  }
  for (let seq = afterSeq + 1; seq <= end; seq++) {
    const [x, y] = [entryAt(a.trace, seq), entryAt(b.trace, seq)];
    if (x?.line !== y?.line) return { kind: 'entry', seq, first: x, second: y };
  }
  return { kind: 'stretch', afterSeq, bySeq };
}

/** The entry of a window with this seq (the window holds consecutive entries). */
function entryAt(window: readonly TraceEntry[] | undefined, seq: number): TraceEntry | undefined {
  const start = window?.[0]?.seq;
  return start === undefined ? undefined : window![seq - start];
}
