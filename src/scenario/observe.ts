/**
 * What the runner keeps of a run as it goes, from the trace: events sent to
 * each framework (the counts its stream is synced against), its event
 * sequence (heartbeats aside), and counts of the trace kinds conditions ask
 * about. Bounded by what the scenario asks for.
 */
import type { Trace, TraceEntry } from '../core/trace.js';
import type { ClusterDriver } from '../runtime/driver.js';
import type { Observed } from './conditions.js';

export class RunRecord {
  readonly #events = new Map<string, number>();
  readonly #sequences = new Map<string, string[]>();
  readonly #kinds = new Map<string, { readonly contains: string | undefined; count: number }[]>();
  readonly #listener = (entry: TraceEntry, data: Readonly<Record<string, unknown>>): void => this.#on(entry, data);

  constructor(
    private readonly trace: Trace,
    /** Trace kinds (and texts) that conditions count. */
    watched: readonly { readonly kind: string; readonly contains?: string }[],
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

  /** A framework's events in order: `TYPE`, or `UPDATE TASK_STATE`. */
  sequence(frameworkId: string | undefined): readonly string[] {
    return frameworkId === undefined ? [] : (this.#sequences.get(frameworkId) ?? []);
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
    const sequence = this.#sequences.get(frameworkId) ?? [];
    sequence.push(type === 'UPDATE' ? `UPDATE ${text.split(' ')[2] ?? ''}` : type);
    this.#sequences.set(frameworkId, sequence);
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
