/**
 * A condition as scenario files (`when`, `expect`), the control API
 * (`POST /sim/v1/run_until`) and the library (`runUntil`) write it, read
 * into the core's `Condition` (core/conditions.ts), or the reason it is not
 * one, naming the field at fault. One vocabulary:
 *
 * | kind         | fields                                          | bounds            | meaning |
 * |--------------|-------------------------------------------------|-------------------|---------|
 * | `tasks`      | `state` (a task state), `framework`?, `task_id`? | `count` `min` `max` | tasks whose latest state (the master's view) is `state`, completed ones included, of the frameworks the master books (one framework's, or the one task named) |
 * | `agents`     | `state`: active, disconnected, unreachable, gone | `count` `min` `max` | agents the master books in that state |
 * | `frameworks` | `state`: subscribed, disconnected, removed       | `count` `min` `max` | frameworks the master books in that state, removed ones included |
 * | `trace`      | `kind` (e.g. `agent:unreachable`), `contains`?   | `count` `min` `max` | trace entries of that kind (whose line contains the text) appended since the watch began: the run's start in a scenario, the call for `run_until` |
 * | `all`        | a non-empty array of conditions                  |                   | every one holds |
 * | `any`        | a non-empty array of conditions                  |                   | one of them holds |
 *
 * Bounds: `count` exactly, `min` at least, `max` at most; each one given
 * must hold, and with none the count must be at least 1. `framework` is
 * the framework's id for the control API and the library, and its name in
 * the file for a scenario (the runner resolves it; a framework not yet
 * subscribed has no tasks). `all` and `any` nest at most 8 deep.
 *
 * The forms before this vocabulary (`task_state`, `agents_registered`,
 * `frameworks_subscribed`, `trace_kind`) are refused with the new form to
 * write instead.
 */
import {
  AGENT_STATES,
  FRAMEWORK_STATES,
  type Bounds,
  type Condition,
  type CountedCondition,
} from '../../core/conditions.js';
import { TASK_STATES, type TaskState } from '../../core/model/types.js';

/** A condition as written (JSON, or a plain object in the library): what `parseCondition` reads. */
export type ConditionJson =
  | { readonly tasks: { readonly state: TaskState; readonly framework?: string; readonly task_id?: string } & Bounds }
  | { readonly agents: { readonly state: (typeof AGENT_STATES)[number] } & Bounds }
  | { readonly frameworks: { readonly state: (typeof FRAMEWORK_STATES)[number] } & Bounds }
  | { readonly trace: { readonly kind: string; readonly contains?: string } & Bounds }
  | { readonly all: readonly ConditionJson[] }
  | { readonly any: readonly ConditionJson[] };

const COUNTED_KINDS = ['tasks', 'agents', 'frameworks', 'trace'] as const;
export const CONDITION_KINDS = [...COUNTED_KINDS, 'all', 'any'] as const;
type CountedKind = (typeof COUNTED_KINDS)[number];

/** The largest bound a condition takes. */
export const MAX_CONDITION_BOUND = 1_000_000_000;

/** How deep `all` and `any` may nest. */
const MAX_DEPTH = 8;

/** The fields of each counted kind (the bounds aside), as written. */
const FIELDS: Readonly<Record<CountedKind, readonly string[]>> = {
  tasks: ['state', 'framework', 'task_id'],
  agents: ['state'],
  frameworks: ['state'],
  trace: ['kind', 'contains'],
};
const BOUNDS = ['count', 'min', 'max'] as const;

type Body = Readonly<Record<string, unknown>>;

/** A condition from JSON (or YAML read as such), or the reason it is not one (naming the field at fault). */
export function parseCondition(value: unknown, where = 'condition', depth = 0): Condition | string {
  const kind = kindOf(value, where, CONDITION_KINDS);
  if (kind.error !== undefined) return kind.error;
  const body = (value as Body)[kind.name];
  const field = `${where}.${kind.name}`;
  if (kind.name === 'all' || kind.name === 'any') return group(kind.name, body, field, depth);
  return countedBody(kind.name, body, field);
}

function kindOf<K extends string>(
  value: unknown,
  where: string,
  kinds: readonly K[],
): { name: K; error?: undefined } | { error: string } {
  if (!isObject(value)) return { error: `Expecting '${where}' to be an object` };
  const keys = Object.keys(value);
  const old = keys.find((k) => Object.hasOwn(OLD_FORMS, k));
  if (old !== undefined)
    return { error: `'${where}.${old}' is the old form of a condition: write ${OLD_FORMS[old]!(value[old])}` };
  if (keys.length !== 1 || !(kinds as readonly string[]).includes(keys[0]!))
    return { error: `Expecting '${where}' to have exactly one of ${kinds.join(', ')}` };
  return { name: keys[0] as K };
}

function countedBody(kind: CountedKind, body: unknown, field: string): CountedCondition | string {
  if (!isObject(body)) return `Expecting '${field}' to be an object`;
  const allowed = [...FIELDS[kind], ...BOUNDS];
  const unknown = Object.keys(body).find((k) => !allowed.includes(k));
  if (unknown !== undefined) return `Expecting '${field}' to have only ${allowed.join(', ')} (not '${unknown}')`;
  const bounds = boundsOf(body, field);
  if (typeof bounds === 'string') return bounds;
  switch (kind) {
    case 'tasks':
      return tasks(body, field, bounds);
    case 'agents':
      return isOneOf(body['state'], AGENT_STATES)
        ? { agents: { state: body['state'], ...bounds } }
        : `Expecting '${field}.state' to be one of ${AGENT_STATES.join(', ')}`;
    case 'frameworks':
      return isOneOf(body['state'], FRAMEWORK_STATES)
        ? { frameworks: { state: body['state'], ...bounds } }
        : `Expecting '${field}.state' to be one of ${FRAMEWORK_STATES.join(', ')}`;
    case 'trace': {
      const { kind: traced, contains } = body;
      if (typeof traced !== 'string' || traced === '')
        return `Expecting '${field}.kind' to be a trace entry kind (e.g. agent:unreachable)`;
      if (contains !== undefined && typeof contains !== 'string') return `Expecting '${field}.contains' to be a text`;
      return { trace: { kind: traced, ...(contains === undefined ? {} : { contains }), ...bounds } };
    }
  }
}

function tasks(body: Body, field: string, bounds: Bounds): CountedCondition | string {
  const { state, framework, task_id: taskId } = body;
  if (!isOneOf(state, TASK_STATES)) return `Expecting '${field}.state' to be a task state (TASK_RUNNING, ...)`;
  if (framework !== undefined && (typeof framework !== 'string' || framework === ''))
    return `Expecting '${field}.framework' to be a framework`;
  if (taskId !== undefined && (typeof taskId !== 'string' || taskId === ''))
    return `Expecting '${field}.task_id' to be a task id`;
  return {
    tasks: {
      state: state as TaskState,
      ...(framework === undefined ? {} : { framework: framework as string }),
      ...(taskId === undefined ? {} : { taskId: taskId as string }),
      ...bounds,
    },
  };
}

function boundsOf(body: Body, field: string): Bounds | string {
  const bounds: { count?: number; min?: number; max?: number } = {};
  for (const name of BOUNDS) {
    const n = body[name];
    if (n === undefined) continue;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_CONDITION_BOUND) {
      return `Expecting '${field}.${name}' to be a whole number from 0 to ${MAX_CONDITION_BOUND}`;
    }
    bounds[name] = n;
  }
  return bounds;
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

/**
 * The forms conditions had before, each with what to write instead (its
 * own values carried over where they read; `agents_registered` counted
 * agents registered and reachable).
 */
const OLD_FORMS: Readonly<Record<string, (body: unknown) => string>> = {
  task_state: (body) => {
    const old = isObject(body) ? body : {};
    const state = typeof old['state'] === 'string' ? old['state'] : 'TASK_RUNNING';
    const carried = {
      state,
      ...(old['framework_id'] === undefined ? {} : { framework: old['framework_id'] }),
      ...(old['task_id'] === undefined ? {} : { task_id: old['task_id'] }),
    };
    return JSON.stringify({ tasks: { ...carried, min: wholeOr(old['count'], 1) } });
  },
  agents_registered: (n) => JSON.stringify({ agents: { state: 'active', min: wholeOr(n, 1) } }),
  frameworks_subscribed: (n) => JSON.stringify({ frameworks: { state: 'subscribed', min: wholeOr(n, 1) } }),
  trace_kind: (kind) =>
    JSON.stringify({ trace: { kind: typeof kind === 'string' && kind !== '' ? kind : 'agent:unreachable' } }),
};

function wholeOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : fallback;
}

function isObject(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isOneOf<T extends string>(value: unknown, options: readonly T[]): value is T {
  return typeof value === 'string' && (options as readonly string[]).includes(value);
}
