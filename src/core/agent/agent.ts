/**
 * An agent node: its resources and attributes, the executors it runs for
 * each framework, and its status update manager. It talks to the master
 * only through messages (`MasterLink`, delivered over the simulated
 * network); the master reaches it the same way through the `on*` handlers.
 */
import { wallTimeMs, type SimContext } from '../context.js';
import type { TimerId } from '../event-loop.js';
import type { Rng } from '../rng.js';
import { toHex } from '../rng.js';
import type { Resources } from '../resources.js';
import type {
  Attribute,
  ExecutorSpec,
  FrameworkInfo,
  StatusReason,
  StatusSource,
  TaskSpec,
  TaskState,
  TaskStatus,
} from '../types.js';
import { SimExecutor, type ExecutorHost, type ExecutorKind } from './executor.js';
import { StatusUpdateManager } from './status-update-manager.js';

export const EXECUTOR_SHUTDOWN_GRACE_MS = 5_000;

export interface AgentConfig {
  readonly id: string;
  readonly hostname: string;
  readonly ip: string;
  readonly port: number;
  readonly resources: Resources;
  readonly attributes: readonly Attribute[];
}

/** Messages from an agent to the master. */
export interface MasterLink {
  statusUpdate(agentId: string, frameworkId: string, status: TaskStatus, latestState: TaskState): void;
  exitedExecutor(agentId: string, frameworkId: string, executorId: string, waitStatus: number): void;
}

interface AgentFramework {
  readonly info: FrameworkInfo;
  readonly executors: Map<string, SimExecutor>;
}

export class Agent implements ExecutorHost {
  readonly #frameworks = new Map<string, AgentFramework>();
  readonly #updates: StatusUpdateManager;
  readonly #rng: Rng;
  readonly #shutdownTimers = new Map<SimExecutor, TimerId>();
  /** The newest state of every task with updates still in flight. */
  readonly #latest = new Map<string, TaskState>();

  constructor(
    private readonly ctx: SimContext,
    readonly config: AgentConfig,
    private readonly master: MasterLink,
  ) {
    this.#rng = ctx.rng.fork(`agent/${config.id}`);
    this.#updates = new StatusUpdateManager(ctx, (frameworkId, status) => this.#forward(frameworkId, status));
  }

  get id(): string {
    return this.config.id;
  }

  /** `slave(1)@ip:port`, the upstream process id of the agent. */
  get pid(): string {
    return `slave(1)@${this.config.ip}:${this.config.port}`;
  }

  executors(): SimExecutor[] {
    return [...this.#frameworks.values()].flatMap((f) => [...f.executors.values()]);
  }

  pendingUpdates(): number {
    return this.#updates.size;
  }

  // ---- messages from the master ----

  onRunTask(framework: FrameworkInfo & { id: string }, task: TaskSpec): void {
    const kind: ExecutorKind = task.executor === undefined ? 'command' : 'custom';
    const executorId = task.executor?.executorId ?? task.taskId;
    const executor = this.#executorFor(framework, executorId, kind);
    executor.launch([task]);
  }

  onRunTaskGroup(framework: FrameworkInfo & { id: string }, executorSpec: ExecutorSpec, tasks: readonly TaskSpec[]): void {
    const executor = this.#executorFor(framework, executorSpec.executorId, 'default');
    executor.launch(tasks);
  }

  onKillTask(frameworkId: string, taskId: string): void {
    const executor = this.#executorOfTask(frameworkId, taskId);
    if (executor !== undefined) {
      executor.kill(taskId);
      return;
    }
    // Unknown here: tell the master it is lost so the framework hears of it.
    const fw = this.#frameworks.get(frameworkId);
    if (fw !== undefined && !this.#updates.hasPending(frameworkId, taskId)) {
      this.#emit(frameworkId, taskId, undefined, 'TASK_LOST', 'SOURCE_AGENT', 'Cannot find task to kill', 'REASON_TASK_UNKNOWN');
    }
  }

  onShutdownExecutor(frameworkId: string, executorId: string): void {
    const executor = this.#frameworks.get(frameworkId)?.executors.get(executorId);
    if (executor === undefined || !executor.alive) return;
    this.ctx.trace.append('executor:shutdown', { agentId: this.id, frameworkId, executorId });
    // The grace period bounds how long a hung executor may take to exit.
    this.#shutdownTimers.set(
      executor,
      this.ctx.loop.schedule(EXECUTOR_SHUTDOWN_GRACE_MS, 'executor:shutdown-grace', () => this.#destroy(executor)),
    );
    executor.shutdown();
  }

  onShutdownFramework(frameworkId: string): void {
    const fw = this.#frameworks.get(frameworkId);
    if (fw === undefined) return;
    for (const executor of fw.executors.values()) if (executor.alive) executor.shutdown();
    this.#updates.removeFramework(frameworkId);
    this.#frameworks.delete(frameworkId);
    for (const key of this.#latest.keys()) if (key.startsWith(`${frameworkId}\u0000`)) this.#latest.delete(key);
  }

  onAcknowledge(frameworkId: string, taskId: string, uuid: string): void {
    const acked = this.#updates.acknowledge(frameworkId, taskId, uuid);
    if (acked === undefined) {
      this.ctx.trace.append('status-update:ack-ignored', { agentId: this.id, taskId, uuid });
    } else if (!this.#updates.hasPending(frameworkId, taskId)) {
      this.#latest.delete(`${frameworkId}\u0000${taskId}`);
    }
  }

  onFrameworkMessage(frameworkId: string, executorId: string, data: Uint8Array): void {
    const executor = this.#frameworks.get(frameworkId)?.executors.get(executorId);
    this.ctx.trace.append('executor:message', { agentId: this.id, executorId, bytes: data.length, delivered: executor?.alive ?? false });
  }

  /** Re-sends unacknowledged updates (the master link came back). */
  onReconnected(): void {
    this.#updates.flush();
  }

  // ---- ExecutorHost ----

  update(executor: SimExecutor, taskId: string, state: TaskState, message?: string, reason?: StatusReason): void {
    this.#emit(executor.frameworkId, taskId, executor, state, 'SOURCE_EXECUTOR', message, reason);
  }

  exited(executor: SimExecutor, waitStatus: number): void {
    this.ctx.loop.cancel(this.#shutdownTimers.get(executor));
    this.#shutdownTimers.delete(executor);
    this.ctx.trace.append('executor:exit', { agentId: this.id, executorId: executor.executorId, waitStatus });
    this.#frameworks.get(executor.frameworkId)?.executors.delete(executor.executorId);
    // The command executor is an implementation detail; upstream reports only the others.
    if (executor.kind === 'command') return;
    const { id } = this;
    this.ctx.network.send(id, 'master', 'agent:exited-executor', () =>
      this.master.exitedExecutor(id, executor.frameworkId, executor.executorId, waitStatus),
    );
  }

  // ---- internals ----

  #executorFor(framework: FrameworkInfo & { id: string }, executorId: string, kind: ExecutorKind): SimExecutor {
    let fw = this.#frameworks.get(framework.id);
    if (fw === undefined) {
      fw = { info: framework, executors: new Map() };
      this.#frameworks.set(framework.id, fw);
    }
    let executor = fw.executors.get(executorId);
    if (executor === undefined || !executor.alive) {
      const killing = framework.capabilities.includes('TASK_KILLING_STATE');
      executor = new SimExecutor(this.ctx, this, executorId, framework.id, kind, this.#rng.uuid(), killing);
      fw.executors.set(executorId, executor);
      this.ctx.trace.append('executor:launch', { agentId: this.id, frameworkId: framework.id, executorId, kind });
    }
    return executor;
  }

  #executorOfTask(frameworkId: string, taskId: string): SimExecutor | undefined {
    for (const executor of this.#frameworks.get(frameworkId)?.executors.values() ?? []) {
      if (executor.tasks.has(taskId)) return executor;
    }
    return undefined;
  }

  /** A hung executor outlived its grace period: destroy its container. */
  #destroy(executor: SimExecutor): void {
    for (const task of executor.liveTasks()) {
      task.state = 'TASK_LOST';
      this.#emit(executor.frameworkId, task.spec.taskId, executor, 'TASK_LOST', 'SOURCE_AGENT', 'Executor did not exit within its grace period', 'REASON_EXECUTOR_TERMINATED');
    }
    this.exited(executor, 9);
  }

  #emit(
    frameworkId: string,
    taskId: string,
    executor: SimExecutor | undefined,
    state: TaskState,
    source: StatusSource,
    message?: string,
    reason?: StatusReason,
  ): void {
    const status: TaskStatus = {
      taskId,
      state,
      source,
      ...(reason === undefined ? {} : { reason }),
      ...(message === undefined ? {} : { message }),
      agentId: this.id,
      ...(executor === undefined ? {} : { executorId: executor.executorId, containerId: executor.containerId }),
      timestampMs: wallTimeMs(this.ctx),
      uuid: toHex(this.#rng.bytes(16)),
    };
    this.#latest.set(`${frameworkId}\u0000${taskId}`, state);
    this.#updates.update(frameworkId, status);
  }

  #forward(frameworkId: string, status: TaskStatus): void {
    const latest = this.#latest.get(`${frameworkId}\u0000${status.taskId}`) ?? status.state;
    const { id } = this;
    this.ctx.network.send(id, 'master', 'agent:status-update', () =>
      this.master.statusUpdate(id, frameworkId, status, latest),
    );
  }
}
