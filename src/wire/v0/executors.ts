/**
 * The ExecutorSpec behind an executor record, which the executor objects of
 * `/state` and `/frameworks` print. A lookup over the framework's tasks, not
 * accounting: what executors hold is in the master's books.
 */
import type { ExecutorRecord, Task } from '../../core/model/records.js';
import type { ExecutorSpec } from '../../core/model/types.js';
import type { FrameworkView } from '../../core/view.js';

/**
 * The master keeps only the id, agent and resources of an executor. A
 * custom executor's spec travels in each of its tasks (the first one, live
 * before completed, is taken); a task group's executor is not kept
 * anywhere, but only DEFAULT executors run groups, so that much is known of
 * it. One walk over the framework's tasks answers for all its executors.
 */
export function executorSpecs(fw: FrameworkView): (record: ExecutorRecord) => ExecutorSpec {
  let specs: Map<string, ExecutorSpec> | undefined;
  return (record) => {
    specs ??= specsByExecutor(fw);
    return (
      specs.get(keyOf(record.agentId, record.executorId)) ?? {
        executorId: record.executorId,
        type: 'DEFAULT',
        resources: record.resources,
      }
    );
  };
}

function specsByExecutor(fw: FrameworkView): Map<string, ExecutorSpec> {
  const specs = new Map<string, ExecutorSpec>();
  const learn = (task: Task) => {
    const spec = task.spec.executor;
    if (spec === undefined) return;
    const key = keyOf(task.agentId, spec.executorId);
    if (!specs.has(key)) specs.set(key, spec);
  };
  if (fw.executors.size === 0) return specs;
  for (const task of fw.tasks.values()) learn(task);
  for (const task of fw.completedTasks) learn(task);
  return specs;
}

const keyOf = (agentId: string, executorId: string): string => `${agentId}\u0000${executorId}`;
