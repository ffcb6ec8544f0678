/**
 * The master's tasks and executors, and the one place they change:
 * recorded with the resources they hold (booked in the ledger), moved by
 * status updates under the task state table, and their resources given
 * back to the allocator, once, when they end. The operator feed hears of
 * each new task and each change of a task's state.
 */
import { wallTimeMs } from '../network/context.js';
import type { ExecutorRecord, Task } from '../model/records.js';
import type { OperatorEvent } from '../model/operator-types.js';
import { appendStatus, canTransition, isTerminal } from '../model/task-state.js';
import type { TaskState, TaskStatus } from '../model/types.js';
import type { Framework, TaskRef } from './framework.js';
import type { MasterOps } from './ops.js';
import { taskSnapshot } from './snapshots.js';

/**
 * Records a new task holding `task.resources`; the launch is the caller's.
 * With `book` false the caller books the resources in the ledger itself
 * (an ACCEPT books all its launches on the agent in one step).
 */
export function addTask(m: MasterOps, fw: Framework, task: Task, book = true): void {
  fw.tasks.set(task.spec.taskId, task);
  if (book) m.ledger.hold('used', task, task.resources);
  m.feed.emit(() => ({ type: 'TASK_ADDED', task: taskSnapshot(task), user: fw.info.user }));
}

/** Records an executor holding `record.resources`, keyed `agentId/executorId`. */
export function addExecutor(m: MasterOps, fw: Framework, key: string, record: ExecutorRecord): void {
  fw.executors.set(key, record);
  m.ledger.hold('used', { frameworkId: fw.id, agentId: record.agentId }, record.resources);
}

export function removeExecutor(m: MasterOps, fw: Framework, key: string): void {
  const record = fw.executors.get(key);
  if (record === undefined) return;
  fw.executors.delete(key);
  m.ledger.release('used', { frameworkId: fw.id, agentId: record.agentId }, record.resources);
  m.allocator.recoverResources(fw.id, record.agentId, record.resources);
}

/** A status the master makes up itself: no uuid, so never acknowledged. */
export function masterStatus(
  m: MasterOps,
  task: TaskRef,
  state: TaskState,
  message: string,
  reason: TaskStatus['reason'],
): TaskStatus {
  return {
    taskId: task.taskId,
    state,
    source: 'SOURCE_MASTER',
    ...(reason === undefined ? {} : { reason }),
    message,
    ...(task.agentId === undefined ? {} : { agentId: task.agentId }),
    ...(task.executorId === undefined ? {} : { executorId: task.executorId }),
    timestampMs: wallTimeMs(m.ctx),
  };
}

/**
 * Moves the master's task to the status' latest state. An update that
 * the network delayed or duplicated may arrive after a newer one; a move
 * the task state table does not allow from where the task is now is such
 * a stale update, and leaves the task where it is, unless the update
 * itself says the task has ended.
 */
export function updateTaskState(m: MasterOps, task: Task, status: TaskStatus, latest: TaskState = status.state): void {
  if (task.state !== latest && !isTerminal(task.state)) {
    if (canTransition(task.state, latest)) task.state = latest;
    else if (isTerminal(status.state)) task.state = status.state;
    else m.ctx.trace.append('task:stale-update', { taskId: task.spec.taskId, state: task.state, latest });
  }
  const changed = task.statuses.at(-1)?.state !== status.state;
  // Kept without its data, as upstream keeps it (MESOS-1746: frameworks' data would fill the master);
  // a repeated state replaces the latest status, as upstream's `updateTask` does.
  task.statuses = appendStatus(task.statuses, status);
  task.statusUpdateState = status.state;
  task.statusUpdateUuid = status.uuid;
  if (isTerminal(task.state)) recoverTaskResources(m, task);
  if (changed && m.feed.heard) m.feed.emit(() => taskUpdated(m, task, status));
}

function taskUpdated(m: MasterOps, task: Task, status: TaskStatus): OperatorEvent {
  const user = m.frameworks.get(task.frameworkId)?.info.user ?? '';
  return { type: 'TASK_UPDATED', frameworkId: task.frameworkId, status, state: task.state, spec: task.spec, user };
}

/** Gives an ended task's resources back, once. */
export function recoverTaskResources(m: MasterOps, task: Task): void {
  if (task.resourcesRecovered) return;
  task.resourcesRecovered = true;
  m.ledger.release('used', task, task.resources);
  m.allocator.recoverResources(task.frameworkId, task.agentId, task.resources);
}
