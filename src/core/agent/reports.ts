/**
 * What a re-registering agent tells the master it runs: the tasks of its
 * live executors, the tasks whose updates it still holds (their executor
 * may be gone), and its executors other than command executors.
 */
import type { ReportedTask } from '../messages.js';
import type { TaskState, TaskStatus } from '../types.js';
import type { AgentExecutor } from './frameworks.js';

export function reportedTasks(
  executors: readonly AgentExecutor[],
  heads: readonly { readonly frameworkId: string; readonly status: TaskStatus }[],
  latest: ReadonlyMap<string, TaskState>,
): ReportedTask[] {
  const reported = executors.flatMap((e) =>
    [...e.tasks.values()].map((t) => ({ frameworkId: e.frameworkId, taskId: t.spec.taskId, executorId: e.executorId, state: t.state })),
  );
  const listed = new Set(reported.map((t) => `${t.frameworkId}\u0000${t.taskId}`));
  for (const { frameworkId, status } of heads) {
    const key = `${frameworkId}\u0000${status.taskId}`;
    if (listed.has(key)) continue;
    const state = latest.get(key) ?? status.state;
    reported.push({ frameworkId, taskId: status.taskId, executorId: status.executorId ?? status.taskId, state });
  }
  return reported;
}

export function reportedExecutors(executors: readonly AgentExecutor[]): { frameworkId: string; executorId: string }[] {
  return executors.filter((e) => e.alive && e.kind !== 'command').map((e) => ({ frameworkId: e.frameworkId, executorId: e.executorId }));
}
