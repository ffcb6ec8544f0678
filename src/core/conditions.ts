/**
 * Conditions on a running cluster, as data: what `POST /sim/v1/run_until`
 * waits for, and what scenario timelines and expectations test. JSON in
 * (`parseCondition`), a boolean out (`watchCondition(...).holds()`), read
 * from the read model only.
 *
 *   {"task_state": {"state", "task_id"?, "framework_id"?, "count"?}}
 *        at least `count` (default 1) tasks in that state (the master's
 *        view, completed tasks included), or the task named in it
 *   {"agents_registered": N}       at least N agents registered and reachable
 *   {"frameworks_subscribed": N}   at least N frameworks subscribed (stream open)
 *   {"trace_kind": "kind"}         an entry of that kind appended since the watch began
 *   {"all": [c...]} / {"any": [c...]}  each / one of the conditions
 */
import type { ClusterView } from './view.js';
import type { Trace, TraceEntry } from './kernel/trace.js';
import { TASK_STATES, type TaskState } from './model/types.js';

export type Condition =
  | { readonly task_state: { readonly state: TaskState; readonly task_id?: string; readonly framework_id?: string; readonly count?: number } }
  | { readonly agents_registered: number }
  | { readonly frameworks_subscribed: number }
  | { readonly trace_kind: string }
  | { readonly all: readonly Condition[] }
  | { readonly any: readonly Condition[] };

export const CONDITION_KINDS = ['task_state', 'agents_registered', 'frameworks_subscribed', 'trace_kind', 'all', 'any'] as const;

/** How deep `all` and `any` may nest. */
const MAX_DEPTH = 8;

/** A condition from JSON, or the reason it is not one (naming the field at fault). */
export function parseCondition(value: unknown, where = 'condition', depth = 0): Condition | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `Expecting '${where}' to be an object`;
  const keys = Object.keys(value);
  const kind = keys[0];
  if (keys.length !== 1 || !(CONDITION_KINDS as readonly string[]).includes(kind!)) {
    return `Expecting '${where}' to have exactly one of ${CONDITION_KINDS.join(', ')}`;
  }
  const body = (value as Record<string, unknown>)[kind!];
  const field = `${where}.${kind!}`;
  switch (kind as (typeof CONDITION_KINDS)[number]) {
    case 'task_state':
      return taskState(body, field);
    case 'agents_registered':
    case 'frameworks_subscribed':
      return isCount(body) ? ({ [kind!]: body } as Condition) : `Expecting '${field}' to be a whole number from 0`;
    case 'trace_kind':
      return typeof body === 'string' && body !== '' ? { trace_kind: body } : `Expecting '${field}' to be a trace entry kind`;
    case 'all':
    case 'any':
      return group(kind as 'all' | 'any', body, field, depth);
  }
}

function taskState(body: unknown, field: string): Condition | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return `Expecting '${field}' to be an object`;
  const { state, task_id: taskId, framework_id: frameworkId, count } = body as Record<string, unknown>;
  if (typeof state !== 'string' || !(TASK_STATES as readonly string[]).includes(state)) return `Expecting '${field}.state' to be a task state (TASK_RUNNING, ...)`;
  if (taskId !== undefined && (typeof taskId !== 'string' || taskId === '')) return `Expecting '${field}.task_id' to be a task id`;
  if (frameworkId !== undefined && (typeof frameworkId !== 'string' || frameworkId === '')) return `Expecting '${field}.framework_id' to be a framework id`;
  if (count !== undefined && !isCount(count)) return `Expecting '${field}.count' to be a whole number from 0`;
  return {
    task_state: {
      state: state as TaskState,
      ...(taskId === undefined ? {} : { task_id: taskId as string }),
      ...(frameworkId === undefined ? {} : { framework_id: frameworkId as string }),
      ...(count === undefined ? {} : { count: count as number }),
    },
  };
}

function group(kind: 'all' | 'any', body: unknown, field: string, depth: number): Condition | string {
  if (!Array.isArray(body) || body.length === 0) return `Expecting '${field}' to be a non-empty array of conditions`;
  if (depth >= MAX_DEPTH) return `Expecting '${field}' to nest at most ${MAX_DEPTH} deep`;
  const parts: Condition[] = [];
  for (const [i, part] of body.entries()) {
    const parsed = parseCondition(part, `${field}[${i}]`, depth + 1);
    if (typeof parsed === 'string') return parsed;
    parts.push(parsed);
  }
  return kind === 'all' ? { all: parts } : { any: parts };
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

export interface ConditionWatch {
  /** Whether the condition holds now. */
  readonly holds: () => boolean;
  /** Ends the watch (its trace listener, if any). */
  stop(): void;
}

/** Watches a condition from now on: `trace_kind` counts entries appended after this call. */
export function watchCondition(condition: Condition, view: ClusterView, trace: Trace): ConditionWatch {
  const kinds = new Set<string>();
  traceKinds(condition, kinds);
  const seen = new Set<string>();
  const listener = (entry: TraceEntry): void => {
    if (kinds.has(entry.kind)) seen.add(entry.kind);
  };
  if (kinds.size > 0) trace.onEntry(listener);
  return {
    holds: () => evaluate(condition, view, seen),
    stop: () => trace.offEntry(listener),
  };
}

/** Whether a condition holds now; `seenKinds`: trace kinds appended since it began to be watched. */
export function evaluate(condition: Condition, view: ClusterView, seenKinds: ReadonlySet<string>): boolean {
  if ('task_state' in condition) return countTasks(view, condition.task_state) >= (condition.task_state.count ?? 1);
  if ('agents_registered' in condition) return countOf(view.agents()) >= condition.agents_registered;
  if ('frameworks_subscribed' in condition) return countOf([...view.frameworks()].filter((f) => f.state === 'subscribed')) >= condition.frameworks_subscribed;
  if ('trace_kind' in condition) return seenKinds.has(condition.trace_kind);
  if ('all' in condition) return condition.all.every((c) => evaluate(c, view, seenKinds));
  return condition.any.some((c) => evaluate(c, view, seenKinds));
}

function countTasks(view: ClusterView, want: Extract<Condition, { task_state: unknown }>['task_state']): number {
  let n = 0;
  const frameworks = want.framework_id === undefined ? [...view.frameworks(), ...view.completedFrameworks()] : [view.framework(want.framework_id)];
  for (const fw of frameworks) {
    if (fw === undefined) continue;
    for (const task of [...fw.tasks.values(), ...fw.completedTasks]) {
      if (task.state === want.state && (want.task_id === undefined || task.spec.taskId === want.task_id)) n++;
    }
  }
  return n;
}

function countOf(items: Iterable<unknown>): number {
  let n = 0;
  for (const _ of items) n++;
  return n;
}

function traceKinds(condition: Condition, into: Set<string>): void {
  if ('trace_kind' in condition) into.add(condition.trace_kind);
  else if ('all' in condition) for (const c of condition.all) traceKinds(c, into);
  else if ('any' in condition) for (const c of condition.any) traceKinds(c, into);
}
