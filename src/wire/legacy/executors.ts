/**
 * The ExecutorSpec behind an executor record, which the executor objects of
 * `/state` and `/frameworks` print. A lookup over the framework's tasks, not
 * accounting: what executors hold is in the master's books.
 */
import type { ExecutorRecord } from '../../core/master/framework.js';
import type { ExecutorSpec } from '../../core/types.js';
import type { FrameworkView } from '../../core/view.js';

/**
 * The master keeps only the id, agent and resources of an executor. A
 * custom executor's spec travels in each of its tasks; a task group's
 * executor is not kept anywhere, but only DEFAULT executors run groups, so
 * that much is known of it.
 */
export function executorSpecOf(fw: FrameworkView, record: ExecutorRecord): ExecutorSpec {
  for (const task of [...fw.tasks.values(), ...fw.completedTasks]) {
    const spec = task.spec.executor;
    if (task.agentId === record.agentId && spec?.executorId === record.executorId) return spec;
  }
  return { executorId: record.executorId, type: 'DEFAULT', resources: record.resources };
}
