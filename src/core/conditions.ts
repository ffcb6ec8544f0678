/**
 * Conditions on a running cluster, as data: what `Cluster.runUntil` (the
 * control API's `run_until`, the library's `runUntil`) waits for, and what
 * scenario timelines and expectations test. Counted over the read model and
 * the trace; read from JSON or YAML in `wire/sim/conditions.ts`, which has
 * the table of the vocabulary.
 *
 * A counted kind holds when its count is within its bounds: `count`
 * exactly, `min` at least, `max` at most (each one given must hold); with
 * no bound at all, at least 1.
 */
import type { ClusterView } from './view.js';
import type { Trace, TraceEntry } from './kernel/trace.js';
import type { AgentRecordState } from './master/agents.js';
import type { FrameworkState } from './model/records.js';
import type { TaskState } from './model/types.js';

export interface Bounds {
  /** Exactly this many. */
  readonly count?: number;
  /** At least this many. */
  readonly min?: number;
  /** At most this many. */
  readonly max?: number;
}

/** The agent states a condition counts: the master's books of its agents. */
export const AGENT_STATES = [
  'active',
  'disconnected',
  'unreachable',
  'gone',
] as const satisfies readonly AgentRecordState[];
/** The framework states a condition counts. */
export const FRAMEWORK_STATES = ['subscribed', 'disconnected', 'removed'] as const satisfies readonly FrameworkState[];

/** What a condition counts, with the bounds the count is held to. */
export type CountedCondition =
  /** Tasks whose latest state (the master's) is `state`, of one framework (by id) or all, or the one task named. */
  | { readonly tasks: { readonly state: TaskState; readonly framework?: string; readonly taskId?: string } & Bounds }
  | { readonly agents: { readonly state: AgentRecordState } & Bounds }
  | { readonly frameworks: { readonly state: FrameworkState } & Bounds }
  /** Trace entries of `kind` (whose line contains `contains`) appended since the watch began. */
  | { readonly trace: { readonly kind: string; readonly contains?: string } & Bounds };

export type Condition =
  | CountedCondition
  | { readonly all: readonly Condition[] }
  | { readonly any: readonly Condition[] };

/** A kind of trace entry (and a text its line contains) that conditions count. */
export interface TraceWatched {
  readonly kind: string;
  readonly contains?: string;
}

/** How many entries of a kind (containing a text) the trace took since the watch began. */
export type TraceCounted = (kind: string, contains: string | undefined) => number;

/** Whether `n` is within the bounds: each one given holds; with none, at least 1. */
export function inBounds(bounds: Bounds, n: number): boolean {
  if (bounds.count === undefined && bounds.min === undefined && bounds.max === undefined) return n >= 1;
  return (
    (bounds.count === undefined || n === bounds.count) &&
    (bounds.min === undefined || n >= bounds.min) &&
    (bounds.max === undefined || n <= bounds.max)
  );
}

/** The bounds of a counted condition, without what it counts. */
export function boundsOf(condition: CountedCondition): Bounds {
  const { count, min, max } =
    'tasks' in condition
      ? condition.tasks
      : 'agents' in condition
        ? condition.agents
        : 'frameworks' in condition
          ? condition.frameworks
          : condition.trace;
  return {
    ...(count === undefined ? {} : { count }),
    ...(min === undefined ? {} : { min }),
    ...(max === undefined ? {} : { max }),
  };
}

/**
 * What a counted condition counts now. Tasks: those of the frameworks the
 * master books (not those of frameworks it removed), live and completed,
 * by their latest state. Agents and frameworks: the master's records in
 * that state, removed frameworks included.
 */
export function countOf(condition: CountedCondition, view: ClusterView, traced: TraceCounted): number {
  if ('tasks' in condition) return countTasks(view, condition.tasks);
  if ('agents' in condition) return countWhere(view.allAgents(), (a) => a.state === condition.agents.state);
  if ('frameworks' in condition) {
    const state = condition.frameworks.state;
    return (
      countWhere(view.frameworks(), (fw) => fw.state === state) +
      countWhere(view.completedFrameworks(), (fw) => fw.state === state)
    );
  }
  return traced(condition.trace.kind, condition.trace.contains);
}

/** Whether a condition holds now. */
export function evaluate(condition: Condition, view: ClusterView, traced: TraceCounted): boolean {
  if ('all' in condition) return condition.all.every((c) => evaluate(c, view, traced));
  if ('any' in condition) return condition.any.some((c) => evaluate(c, view, traced));
  return inBounds(boundsOf(condition), countOf(condition, view, traced));
}

function countTasks(view: ClusterView, want: Extract<CountedCondition, { tasks: unknown }>['tasks']): number {
  let n = 0;
  for (const fw of view.frameworks()) {
    if (want.framework !== undefined && fw.id !== want.framework) continue;
    for (const task of fw.tasks.values())
      if (task.state === want.state && (want.taskId === undefined || task.spec.taskId === want.taskId)) n++;
    for (const task of fw.completedTasks)
      if (task.state === want.state && (want.taskId === undefined || task.spec.taskId === want.taskId)) n++;
  }
  return n;
}

function countWhere<T>(items: Iterable<T>, test: (item: T) => boolean): number {
  let n = 0;
  for (const item of items) if (test(item)) n++;
  return n;
}

/** The trace kinds (and texts) a condition counts. */
export function traceWatched(condition: Condition): TraceWatched[] {
  if ('all' in condition) return condition.all.flatMap(traceWatched);
  if ('any' in condition) return condition.any.flatMap(traceWatched);
  if (!('trace' in condition)) return [];
  const { kind, contains } = condition.trace;
  return [{ kind, ...(contains === undefined ? {} : { contains }) }];
}

/** Counts of trace entries of the kinds (and texts) watched, from its construction on, until `stop`. */
export class TraceCounts {
  readonly #kinds = new Map<string, { readonly contains: string | undefined; count: number }[]>();
  readonly #listener = (entry: TraceEntry): void => {
    const counted = this.#kinds.get(entry.kind);
    if (counted !== undefined)
      for (const c of counted) if (c.contains === undefined || entry.line.includes(c.contains)) c.count++;
  };

  constructor(
    private readonly trace: Trace,
    watched: readonly TraceWatched[],
  ) {
    for (const w of watched) {
      const list = this.#kinds.get(w.kind) ?? [];
      if (!list.some((c) => c.contains === w.contains)) list.push({ contains: w.contains, count: 0 });
      this.#kinds.set(w.kind, list);
    }
    if (this.#kinds.size > 0) trace.onEntry(this.#listener);
  }

  /** Entries of a watched kind (and text) so far; 0 for one not watched. */
  readonly count: TraceCounted = (kind, contains) =>
    this.#kinds.get(kind)?.find((c) => c.contains === contains)?.count ?? 0;

  stop(): void {
    this.trace.offEntry(this.#listener);
  }
}

export interface ConditionWatch {
  /** Whether the condition holds now. */
  readonly holds: () => boolean;
  /** Ends the watch (its trace listener, if any). */
  stop(): void;
}

/**
 * Watches a condition from now on: `trace` counts entries appended after this call.
 * A value of another shape is a bug of the caller (conditions from outside
 * are read by wire/sim/conditions.ts), or a recorded input of an older
 * form: it throws, naming it.
 */
export function watchCondition(condition: Condition, view: ClusterView, trace: Trace): ConditionWatch {
  if (!isCondition(condition))
    throw new Error(`Not a condition of tasks, agents, frameworks, trace, all or any: ${JSON.stringify(condition)}`);
  const counts = new TraceCounts(trace, traceWatched(condition));
  return {
    holds: () => evaluate(condition, view, counts.count),
    stop: () => counts.stop(),
  };
}

const COUNTED = ['tasks', 'agents', 'frameworks', 'trace'];

function isCondition(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const keys = Object.keys(value);
  if (keys.length !== 1) return false;
  const body: unknown = (value as Record<string, unknown>)[keys[0]!];
  if (keys[0] === 'all' || keys[0] === 'any') return Array.isArray(body) && body.every(isCondition);
  return COUNTED.includes(keys[0]!) && typeof body === 'object' && body !== null;
}
