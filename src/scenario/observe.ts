/**
 * What the runner keeps of a run as it goes, from the trace: events sent to
 * each framework (the counts its stream is synced against), how far its
 * events (heartbeats aside) have matched each sequence the file expects,
 * and counts of the trace kinds conditions ask about. Bounded by what the
 * scenario asks for, however long the run: the trace itself is not kept.
 */
import { countOf, TraceCounts, type TraceWatched } from '../core/conditions.js';
import type { Trace, TraceEntry } from '../core/kernel/trace.js';
import type { ClusterDriver } from '../runtime/driver.js';
import type { Observed } from './conditions.js';

/** How far a framework's events (heartbeats aside) have matched an expected sequence. */
export interface SequenceProgress {
  /** Expected events found in order so far. */
  readonly matched: number;
  /** Its events so far, and the first HEAD_EVENTS of them (for the report). */
  readonly count: number;
  readonly head: readonly string[];
}

/** The events a report shows of a framework's sequence. */
export const HEAD_EVENTS = 12;

/** A framework's events as the expected sequences see them: counted, the first few kept, each sequence matched as they come. */
class EventSequence {
  count = 0;
  readonly head: string[] = [];
  readonly matched: number[];

  constructor(private readonly expected: readonly (readonly string[])[]) {
    this.matched = expected.map(() => 0);
  }

  add(event: string): void {
    this.count++;
    if (this.head.length < HEAD_EVENTS) this.head.push(event);
    this.expected.forEach((sequence, i) => {
      if (sequence[this.matched[i]!] === event) this.matched[i]!++;
    });
  }
}

export class RunRecord {
  readonly #events = new Map<string, number>();
  readonly #sequences = new Map<string, EventSequence>();
  readonly #counts: TraceCounts;
  readonly #listener = (entry: TraceEntry, data: Readonly<Record<string, unknown>>): void => this.#on(entry, data);

  constructor(
    private readonly trace: Trace,
    /** Trace kinds (and texts) that conditions count. */
    watched: readonly TraceWatched[],
    /** The event sequences the file's expectations look for. */
    private readonly expected: readonly (readonly string[])[] = [],
  ) {
    this.#counts = new TraceCounts(trace, watched);
    trace.onEntry(this.#listener);
  }

  /** Events (heartbeats too) the master has sent to a framework. */
  eventsSent(frameworkId: string | undefined): number {
    return frameworkId === undefined ? 0 : (this.#events.get(frameworkId) ?? 0);
  }

  /** How far a framework's events (`TYPE`, or `UPDATE TASK_STATE`) have matched `expected`, one of those given. */
  sequence(frameworkId: string | undefined, expected: readonly string[]): SequenceProgress {
    const seen = frameworkId === undefined ? undefined : this.#sequences.get(frameworkId);
    const i = this.expected.indexOf(expected);
    if (i < 0) throw new Error('run record: a sequence it was not given to watch');
    return { matched: seen?.matched[i] ?? 0, count: seen?.count ?? 0, head: seen?.head ?? [] };
  }

  /** Entries of a watched trace kind (and text) since the run began. */
  traceCount(kind: string, contains: string | undefined): number {
    return this.#counts.count(kind, contains);
  }

  close(): void {
    this.#counts.stop();
    this.trace.offEntry(this.#listener);
  }

  #on(entry: TraceEntry, data: Readonly<Record<string, unknown>>): void {
    if (!entry.kind.startsWith('event:')) return;
    const text = String(data['text'] ?? '');
    const space = text.indexOf(' ');
    const frameworkId = space < 0 ? text : text.slice(0, space);
    this.#events.set(frameworkId, (this.#events.get(frameworkId) ?? 0) + 1);
    if (entry.kind === 'event:heartbeat') return;
    const type = entry.kind.slice('event:'.length).toUpperCase();
    let sequence = this.#sequences.get(frameworkId);
    if (sequence === undefined) this.#sequences.set(frameworkId, (sequence = new EventSequence(this.expected)));
    sequence.add(type === 'UPDATE' ? `UPDATE ${text.split(' ')[2] ?? ''}` : type);
  }
}

/** The cluster as conditions see it: the read model through the driver, counted as the core counts, the record for the trace. */
export function observed(
  driver: ClusterDriver,
  record: RunRecord,
  idOf: (name: string) => string | undefined,
): Observed {
  const traced = (kind: string, contains: string | undefined): number => record.traceCount(kind, contains);
  return {
    count: (condition) => driver.read((view) => countOf(condition, view, traced)),
    frameworkId: idOf,
  };
}
