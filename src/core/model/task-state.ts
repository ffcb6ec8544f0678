/**
 * The task state machine. Truth table (from -> allowed next states):
 *
 *   TASK_STAGING     -> STARTING, RUNNING, KILLING, any terminal, UNREACHABLE
 *   TASK_STARTING    -> RUNNING, KILLING, any terminal, UNREACHABLE
 *   TASK_RUNNING     -> RUNNING (health/check updates), KILLING, any terminal, UNREACHABLE
 *   TASK_KILLING     -> KILLING, any terminal, UNREACHABLE
 *   TASK_UNREACHABLE -> STARTING, RUNNING, KILLING, any terminal (the agent came back)
 *   terminal         -> nothing
 *
 * Terminal: FINISHED, FAILED, KILLED, ERROR, LOST, DROPPED, GONE,
 * GONE_BY_OPERATOR, UNKNOWN. An illegal transition is a bug: `transition`
 * throws rather than overwrite silently.
 */
import { pushed } from '../kernel/small-map.js';
import type { TaskState, TaskStatus } from './types.js';

const TERMINAL: ReadonlySet<TaskState> = new Set<TaskState>([
  'TASK_FINISHED',
  'TASK_FAILED',
  'TASK_KILLED',
  'TASK_ERROR',
  'TASK_LOST',
  'TASK_DROPPED',
  'TASK_GONE',
  'TASK_GONE_BY_OPERATOR',
  'TASK_UNKNOWN',
]);

const LIVE_NEXT: Readonly<Record<string, readonly TaskState[]>> = {
  TASK_STAGING: ['TASK_STARTING', 'TASK_RUNNING', 'TASK_KILLING', 'TASK_UNREACHABLE'],
  TASK_STARTING: ['TASK_RUNNING', 'TASK_KILLING', 'TASK_UNREACHABLE'],
  TASK_RUNNING: ['TASK_RUNNING', 'TASK_KILLING', 'TASK_UNREACHABLE'],
  TASK_KILLING: ['TASK_KILLING', 'TASK_UNREACHABLE'],
  TASK_UNREACHABLE: ['TASK_STARTING', 'TASK_RUNNING', 'TASK_KILLING'],
};

export function isTerminal(state: TaskState): boolean {
  return TERMINAL.has(state);
}

export function canTransition(from: TaskState, to: TaskState): boolean {
  if (isTerminal(from)) return false;
  if (isTerminal(to)) return true;
  return LIVE_NEXT[from]?.includes(to) ?? false;
}

/** Returns `to`, or throws on an illegal transition. */
export function transition(taskId: string, from: TaskState, to: TaskState): TaskState {
  if (!canTransition(from, to)) {
    throw new Error(`task '${taskId}': illegal transition ${from} -> ${to}`);
  }
  return to;
}

/**
 * A status as the master and the agent keep it: without its data, as
 * upstream keeps it (MESOS-1746: frameworks' data would fill them). One
 * without data is kept as it is, shared with whoever sent it (statuses are
 * never changed once made).
 */
export function withoutData(status: TaskStatus): TaskStatus {
  if (status.data === undefined) return status;
  const { data: _dropped, ...kept } = status;
  return kept;
}

/**
 * A task's status history as the master and the agent keep it (upstream's
 * `Master::updateTask` and `Executor::updateTaskState`): each update
 * appended without its data, and one repeating the latest state replacing
 * it. The list returned replaces `statuses`: an exact-size array while it
 * is small (a task has two or three statuses; a list grown in place
 * reserves room for seventeen).
 */
export function appendStatus(statuses: TaskStatus[], status: TaskStatus): TaskStatus[] {
  const kept = withoutData(status);
  if (statuses.length > 0 && statuses[statuses.length - 1]!.state === status.state) {
    statuses[statuses.length - 1] = kept;
    return statuses;
  }
  return pushed(statuses, kept);
}
