/**
 * What an agent process counts as it runs, for its `/metrics/snapshot`
 * (upstream's `slave/*` counters, src/slave/metrics.cpp): the tasks that
 * ended by terminal state, the status updates and framework messages it
 * took or refused, the executors that terminated, and the containers it
 * could not launch. A process of its own: a restart begins again at zero,
 * as upstream's counters do. Counting changes nothing the trace holds.
 */
import { isTerminal } from '../model/task-state.js';
import type { TaskState, TaskStatus } from '../model/types.js';

export class AgentCounters {
  /** When the process started, in cluster wall time. */
  startedMs = 0;
  /** Tasks that reached each terminal state, as the agent took their update. */
  readonly tasksEnded = new Map<TaskState, number>();
  validStatusUpdates = 0;
  invalidStatusUpdates = 0;
  validFrameworkMessages = 0;
  invalidFrameworkMessages = 0;
  executorsTerminated = 0;
  containerLaunchErrors = 0;

  /** A new process: every count at zero, the uptime from now. */
  reset(nowMs: number): void {
    this.startedMs = nowMs;
    this.tasksEnded.clear();
    this.validStatusUpdates = 0;
    this.invalidStatusUpdates = 0;
    this.validFrameworkMessages = 0;
    this.invalidFrameworkMessages = 0;
    this.executorsTerminated = 0;
    this.containerLaunchErrors = 0;
  }

  /** A status update the agent took (its own or an executor's). */
  statusTaken(status: TaskStatus): void {
    this.validStatusUpdates++;
    if (isTerminal(status.state)) this.tasksEnded.set(status.state, (this.tasksEnded.get(status.state) ?? 0) + 1);
  }

  /** A framework message to an executor: delivered, or dropped for want of a live executor. */
  frameworkMessage(delivered: boolean): void {
    if (delivered) this.validFrameworkMessages++;
    else this.invalidFrameworkMessages++;
  }
}

/** A task's status history, kept by the agent as the master keeps it. */
export { appendStatus } from '../model/task-state.js';
