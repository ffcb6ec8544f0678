/**
 * What the runner keeps of a run as it goes, from the trace: events sent to
 * each framework (the counts its stream is synced against), how far its
 * events (heartbeats aside) have matched each sequence the file expects,
 * and counts of the trace kinds conditions ask about. Bounded by what the
 * scenario asks for, however long the run: the trace itself is not kept.
 */
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
  readonly #kinds = new Map<string, { readonly contains: string | undefined; count: number }[]>();
  readonly #listener = (entry: TraceEntry, data: Readonly<Record<string, unknown>>): void => this.#on(entry, data);

  constructor(
    private readonly trace: Trace,
    /** Trace kinds (and texts) that conditions count. */
    watched: readonly { readonly kind: string; readonly contains?: string }[],
    /** The event sequences the file's expectations look for. */
    private readonly expected: readonly (readonly string[])[] = [],
  ) {
    for (const w of watched) {
      const list = this.#kinds.get(w.kind) ?? [];
      if (!list.some((c) => c.contains === w.contains)) list.push({ contains: w.contains, count: 0 });
      this.#kinds.set(w.kind, list);
    }
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

  traceCount(kind: string, contains: string | undefined): number {
    return this.#kinds.get(kind)?.find((c) => c.contains === contains)?.count ?? 0;
  }

  close(): void {
    this.trace.offEntry(this.#listener);
  }

  #on(entry: TraceEntry, data: Readonly<Record<string, unknown>>): void {
    const counted = this.#kinds.get(entry.kind);
    if (counted !== undefined) for (const c of counted) if (c.contains === undefined || entry.line.includes(c.contains)) c.count++;
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

/** The cluster as conditions see it: the read model through the driver, the record for the trace. */
export function observed(driver: ClusterDriver, agentIds: readonly string[], record: RunRecord, idOf: (name: string) => string | undefined): Observed {
  return {
    tasksIn: (state, frameworkId) =>
      driver.read((view) => {
        let n = 0;
        for (const fw of view.frameworks()) {
          if (frameworkId !== undefined && fw.id !== frameworkId) continue;
          for (const task of fw.tasks.values()) if (task.state === state) n++;
          for (const task of fw.completedTasks) if (task.state === state) n++;
        }
        return n;
      }),
    agentsIn: (state) => driver.read((view) => agentIds.filter((id) => view.agent(id)?.state === state).length),
    frameworksIn: (state) =>
      driver.read((view) => [...view.frameworks(), ...view.completedFrameworks()].filter((fw) => fw.state === state).length),
    traceCount: (kind, contains) => record.traceCount(kind, contains),
    frameworkId: idOf,
  };
}
