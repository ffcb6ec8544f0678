/**
 * What an agent keeps on disk across a crash (agent.ts): the frameworks
 * that checkpoint and are not being shut down, their unacknowledged status
 * updates, and its resources as operations left them with the operations'
 * own updates. A restart reads it back, and the executors that outlived
 * the process are their frameworks' again.
 */
import type { FrameworkRef } from '../model/messages.js';
import type { AgentExecutor, AgentFramework } from './frameworks.js';
import type { OperationsCheckpoint, ResourceOperations } from './operation-updates.js';
import type { TaskUpdates, UpdatesCheckpoint } from './task-updates.js';

export interface Checkpoint extends UpdatesCheckpoint, OperationsCheckpoint {
  readonly frameworks: readonly FrameworkRef[];
}

/** The checkpoint a crash leaves behind, with the frameworks it keeps: their executors outlive the agent. */
export function writeCheckpoint(
  frameworks: ReadonlyMap<string, AgentFramework>,
  updates: TaskUpdates,
  operations: ResourceOperations,
): { readonly disk: Checkpoint; readonly checkpointing: ReadonlySet<string> } {
  // A framework being shut down is not recovered: its executors end with the process.
  const checkpointing = new Set(
    [...frameworks.values()].filter((f) => f.info.checkpoint && !f.terminating).map((f) => f.info.id),
  );
  const disk: Checkpoint = {
    frameworks: [...frameworks.values()].filter((f) => checkpointing.has(f.info.id)).map((f) => f.info),
    ...updates.checkpoint((id) => checkpointing.has(id)),
    ...operations.checkpoint(),
  };
  return { disk, checkpointing };
}

/** What a restart finds with no checkpoint written: no framework, no update, the resources as they are. */
export function emptyCheckpoint(operations: ResourceOperations): Checkpoint {
  return { frameworks: [], updates: [], latest: new Map(), resources: operations.resources, operationUpdates: [] };
}

/** The agent's frameworks as a restart reads them back, with no executor yet. */
export function frameworksOf(disk: Checkpoint): Map<string, AgentFramework> {
  const frameworks = new Map<string, AgentFramework>();
  for (const info of disk.frameworks)
    frameworks.set(info.id, { info, executors: new Map(), tasks: new Map(), completed: [], terminating: false });
  return frameworks;
}

/** The executors that outlived the process and are still alive are their frameworks' again, with their tasks. */
export function adoptOrphans(frameworks: ReadonlyMap<string, AgentFramework>, orphans: readonly AgentExecutor[]): void {
  for (const executor of orphans) {
    if (!executor.alive) continue;
    const fw = frameworks.get(executor.frameworkId);
    fw?.executors.set(executor.executorId, executor);
    for (const taskId of executor.tasks.keys()) fw?.tasks.set(taskId, executor);
  }
}
