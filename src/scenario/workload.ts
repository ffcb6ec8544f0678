/**
 * What a scripted framework launches into an offer: as many tasks of its
 * plan as it still needs and the offer holds, each taking its resources
 * from the offer's own (keeping their role, reservation and allocation
 * info, as a multi-role framework must). Pure: offers in, operations out.
 */
import type { JsonEvent } from '../client/event-queue.js';
import type { TaskPlan } from './scenario.js';

const TERMINAL = new Set([
  'TASK_FINISHED',
  'TASK_FAILED',
  'TASK_KILLED',
  'TASK_ERROR',
  'TASK_LOST',
  'TASK_DROPPED',
  'TASK_GONE',
  'TASK_GONE_BY_OPERATOR',
]);

export function isTerminalState(state: string): boolean {
  return TERMINAL.has(state);
}

type JsonResource = Record<string, any> & { name: string };

export interface TaskCount {
  /** Tasks launched and not known to have ended. */
  readonly live: number;
  /** Tasks launched so far. */
  readonly launched: number;
}

/** How many more tasks the plan wants now. */
export function wanted(plan: TaskPlan, count: TaskCount): number {
  const keep = plan.keepRunning === undefined ? Infinity : plan.keepRunning - count.live;
  const total = plan.total === undefined ? Infinity : plan.total - count.launched;
  const n = Math.min(keep, total);
  return Number.isFinite(n) ? Math.max(0, n) : 0;
}

/**
 * The TaskInfos (upstream JSON) to launch on one offer: up to `want`, named
 * by `nextId`. Scalars are taken from the first offered resource of each
 * name that still has enough.
 */
export function tasksFor(
  offer: JsonEvent,
  plan: TaskPlan,
  want: number,
  nextId: () => string,
): Record<string, unknown>[] {
  const pool: JsonResource[] = (offer['resources'] ?? []).map((r: JsonResource) => structuredClone(r));
  const needs = (['cpus', 'mem', 'disk'] as const)
    .map((name) => [name, plan[name]] as const)
    .filter(([, amount]) => amount > 0);
  const tasks: Record<string, unknown>[] = [];
  while (tasks.length < want) {
    const taken = needs.map(([name, amount]) => take(pool, name, amount));
    if (taken.some((r) => r === undefined)) break;
    const id = nextId();
    tasks.push({
      name: id,
      task_id: { value: id },
      agent_id: offer['agent_id'],
      resources: taken,
      command: { value: plan.command, shell: true },
    });
  }
  return tasks;
}

function take(pool: JsonResource[], name: string, amount: number): JsonResource | undefined {
  const from = pool.find((r) => r.name === name && r.type === 'SCALAR' && r.scalar.value + 1e-9 >= amount);
  if (from === undefined) return undefined;
  from.scalar.value = Math.round((from.scalar.value - amount) * 1000) / 1000;
  return { ...structuredClone(from), scalar: { value: amount } };
}
