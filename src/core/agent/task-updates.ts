/**
 * The agent's task status updates: the streams of the status update
 * manager (status-update-manager.ts), the newest state of every task with
 * updates still in flight, which each forwarded update carries to the
 * master as its `latestState`, the updates the agent makes itself, and
 * those its simulated executors send. A crash loses them all but what the
 * checkpoint keeps of checkpointing frameworks.
 */
import { wallTimeMs, type SimContext } from '../network/context.js';
import type { Rng } from '../kernel/rng.js';
import type { AgentToMaster, ExecutorToAgent } from '../model/messages.js';
import type { Resources } from '../model/resources.js';
import type { StatusReason, TaskState, TaskStatus } from '../model/types.js';
import type { AgentExecutor } from './frameworks.js';
import {
  StatusUpdateManager,
  type EndedTask,
  type StreamCheckpoint,
  type StreamHead,
} from './status-update-manager.js';

/** What the updates need of their agent. */
export interface TaskUpdatesPort {
  readonly ctx: SimContext;
  readonly agentId: string;
  /** The agent's stream, for the uuids of its own updates. */
  readonly rng: Rng;
  /** Whether a framework takes updates: known to the agent, and not being shut down. */
  accepts(frameworkId: string): boolean;
  /** The executor of that id, if the agent has it. */
  executor(frameworkId: string, executorId: string): AgentExecutor | undefined;
  /** An update was taken: the task and its container learn its state. */
  taken(frameworkId: string, status: TaskStatus): void;
  /** An update refused: its framework is unknown or shutting down, or its executor is gone. */
  refused?(): void;
  toMaster(message: AgentToMaster): void;
}

/** What the checkpoint keeps of the updates. */
export interface UpdatesCheckpoint {
  readonly updates: readonly StreamCheckpoint[];
  readonly latest: ReadonlyMap<string, TaskState>;
}

export class TaskUpdates {
  #manager: StatusUpdateManager;

  constructor(private readonly port: TaskUpdatesPort) {
    this.#manager = this.#newManager();
  }

  get size(): number {
    return this.#manager.size;
  }

  heads(): StreamHead[] {
    return this.#manager.heads();
  }

  hasPending(frameworkId: string, taskId: string): boolean {
    return this.#manager.hasPending(frameworkId, taskId);
  }

  keepEnded(frameworkId: string, ended: EndedTask): void {
    this.#manager.keepEnded(frameworkId, ended);
  }

  /**
   * The tasks an exited executor's process left running end with it, as
   * upstream's agent reports them: as far as the agent knows (an update of
   * the executor's still on the way is refused when it arrives).
   */
  failUnended(executor: AgentExecutor): void {
    for (const task of executor.unended()) {
      const taskId = task.spec.taskId;
      this.emit(
        executor.frameworkId,
        taskId,
        executor,
        'TASK_FAILED',
        'Executor terminated',
        'REASON_EXECUTOR_TERMINATED',
      );
      task.state = 'TASK_FAILED';
    }
  }

  /** Every task of an exited executor, kept as ended for the updates still to be acknowledged. */
  keepAllEnded(executor: AgentExecutor): void {
    const command = executor.kind === 'command';
    for (const task of executor.tasks.values())
      this.keepEnded(executor.frameworkId, { spec: task.spec, executorId: executor.executorId, command });
  }

  pause(): void {
    this.#manager.pause();
  }

  resume(): void {
    this.#manager.resume();
  }

  /** An update the agent makes itself (not its executors'). */
  emit(
    frameworkId: string,
    taskId: string,
    executor: AgentExecutor | undefined,
    state: TaskState,
    message: string,
    reason: StatusReason,
    limitation?: Resources,
  ): void {
    this.take(frameworkId, {
      ...(limitation === undefined ? {} : { limitation }),
      taskId,
      state,
      source: 'SOURCE_AGENT',
      reason,
      message,
      agentId: this.port.agentId,
      ...(executor === undefined ? {} : { executorId: executor.executorId, containerId: executor.containerId }),
      timestampMs: wallTimeMs(this.port.ctx),
      uuid: this.port.rng.hex(16),
    });
  }

  /** Takes an update into the status update manager, unless it has it already (then false). */
  take(frameworkId: string, status: TaskStatus): boolean {
    if (!this.port.accepts(frameworkId)) {
      this.port.refused?.();
      return false;
    }
    if (!this.#manager.update(frameworkId, status)) return false;
    this.port.taken(frameworkId, status);
    return true;
  }

  /** A call of a simulated executor: an update, or its subscription again with what it has not seen acknowledged. */
  fromExecutor(from: string, m: ExecutorToAgent): void {
    // A call that arrives after the agent has reaped its executor (delayed on the way) finds no executor, as
    // upstream's executor API answers 400 "Executor cannot be found": the agent has already ended its tasks.
    const { ctx, agentId } = this.port;
    const executor = this.port.executor(m.frameworkId, m.executorId);
    if (executor?.nodeId !== from) {
      if (m.type === 'EXECUTOR_UPDATE') this.port.refused?.();
      ctx.trace.append('executor:call-refused', {
        agentId,
        executorId: m.executorId,
        call: m.type,
        reason: 'Executor cannot be found',
      });
      return;
    }
    switch (m.type) {
      case 'EXECUTOR_UPDATE':
        this.take(m.frameworkId, m.status);
        return;
      case 'EXECUTOR_SUBSCRIBE':
        ctx.trace.append('executor:resubscribe', {
          agentId,
          executorId: m.executorId,
          unacknowledged: m.unacknowledged.length,
        });
        for (const status of m.unacknowledged) this.take(m.frameworkId, status);
        return;
    }
  }

  /** The acknowledged update, undefined for a stale or unknown acknowledgement. */
  acknowledge(frameworkId: string, taskId: string, uuid: string): TaskStatus | undefined {
    return this.#manager.acknowledge(frameworkId, taskId, uuid);
  }

  /** A framework shut down: its updates are dropped. */
  removeFramework(frameworkId: string): void {
    this.#manager.removeFramework(frameworkId);
  }

  checkpoint(keep: (frameworkId: string) => boolean): UpdatesCheckpoint {
    return {
      updates: this.#manager.checkpoint(keep),
      latest: this.#manager.latestStates(keep),
    };
  }

  /** The process is gone: everything in memory with it. */
  lost(): void {
    this.#manager = this.#newManager();
  }

  /** Takes back what a checkpoint kept (paused until `resume`). */
  recover(disk: UpdatesCheckpoint): void {
    this.#manager.recover(disk.updates);
    this.#manager.recoverLatest(disk.latest);
  }

  #newManager(): StatusUpdateManager {
    return new StatusUpdateManager(this.port.ctx, (frameworkId, status, latestState) => {
      this.port.toMaster({ type: 'STATUS_UPDATE', agentId: this.port.agentId, frameworkId, status, latestState });
    });
  }
}
