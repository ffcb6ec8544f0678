/**
 * What a container is allotted: its executor's own resources (a command
 * executor gets upstream's allowance, 0.1 cpus and 32 MB) and those of its
 * live tasks. The agent's endpoints show it; the cgroup model sets the
 * memory files from it.
 */
import { add, scalar, type Resources } from '../model/resources.js';
import { isTerminal } from '../model/task-state.js';
import type { TaskSpec, TaskState } from '../model/types.js';
import type { ExecutorKind } from './executor.js';

/** What the agent adds to a command task for its command executor, as upstream does (0.1 cpus, 32 MB). */
export const COMMAND_EXECUTOR_RESOURCES: Resources = [scalar('cpus', 0.1), scalar('mem', 32)];

/** An executor as far as its allotment goes: its kind and its tasks. */
export interface AllottedExecutor {
  readonly kind: ExecutorKind;
  readonly tasks: ReadonlyMap<string, { readonly spec: TaskSpec; readonly state: TaskState }>;
}

/** The executor's own resources: its ExecutorInfo's (that of its first task), or a command executor's allowance. */
export function executorResources(executor: AllottedExecutor): Resources {
  if (executor.kind === 'command') return COMMAND_EXECUTOR_RESOURCES;
  const first = executor.tasks.values().next().value;
  return first?.spec.executor?.resources ?? [];
}

/** Its executor's resources and those of its live tasks. */
export function containerResources(executor: AllottedExecutor): Resources {
  let total = executorResources(executor);
  for (const task of executor.tasks.values()) if (!isTerminal(task.state)) total = add(total, task.spec.resources);
  return total;
}
