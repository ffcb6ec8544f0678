/**
 * What the master orders an agent to do with frameworks' tasks and
 * executors: run a task or a task group (each launch once: a RUN_TASK the
 * network repeated is dropped, a task launched again after it ended is
 * not), kill a task, shut down an executor or a whole framework, pass an
 * acknowledgement or a framework's message on to an executor. The agent
 * keeps the records (frameworks.ts) and its process's lifecycle; this is
 * how the master's orders change them.
 */
import type { SimContext } from '../network/context.js';
import type { FrameworkRef } from '../model/messages.js';
import type { ExecutorSpec, TaskSpec } from '../model/types.js';
import type { Containerizer } from './containerizer.js';
import type { ExecutorKind } from './executor.js';
import { forgetIfDone, frameworkEntry, remember, type AgentExecutor, type AgentFramework } from './frameworks.js';
import type { TaskUpdates } from './task-updates.js';

/** What the orders need of their agent. */
export interface OrdersPort {
  readonly ctx: SimContext;
  readonly agentId: string;
  readonly updates: TaskUpdates;
  readonly containerizer: Containerizer;
  /** Whether the agent is registered with its master. */
  active(): boolean;
  /** The agent's frameworks (a new map after each crash). */
  frameworks(): Map<string, AgentFramework>;
  /** Those it shut down and forgot, for its endpoints. */
  completedFrameworks(): AgentFramework[];
  /** The live executor running a task, if any. */
  executorOfTask(frameworkId: string, taskId: string): AgentExecutor | undefined;
}

export class MasterOrders {
  /** Launch messages taken (their ids), the newest kept: a repeat the network made is dropped, a task launched again is not. */
  readonly #launches = new Set<string>();

  constructor(private readonly port: OrdersPort) {}

  /** The process is gone, and what it knew of launches with it. */
  lost(): void {
    this.#launches.clear();
  }

  runTask(launchId: string, framework: FrameworkRef, task: TaskSpec): void {
    if (this.#refuseRun(framework.id, [task.taskId], launchId)) return;
    const kind: ExecutorKind = task.executor === undefined ? 'command' : 'custom';
    const executorId = task.executor?.executorId ?? task.taskId;
    const executor = this.#executorFor(framework, executorId, kind, task.executor);
    this.port.frameworks().get(framework.id)!.tasks.set(task.taskId, executor);
    this.port.ctx.network.send(this.port.agentId, executor.nodeId, { type: 'LAUNCH', task });
  }

  runTaskGroup(
    launchId: string,
    framework: FrameworkRef,
    executorSpec: ExecutorSpec,
    tasks: readonly TaskSpec[],
  ): void {
    if (
      this.#refuseRun(
        framework.id,
        tasks.map((t) => t.taskId),
        launchId,
      )
    )
      return;
    const executor = this.#executorFor(framework, executorSpec.executorId, 'default');
    for (const task of tasks) this.port.frameworks().get(framework.id)!.tasks.set(task.taskId, executor);
    this.port.ctx.network.send(this.port.agentId, executor.nodeId, { type: 'LAUNCH_GROUP', tasks });
  }

  /** Forwards a kill to the task's executor, with the kill policy's grace period: the call's, else the task's. */
  killTask(frameworkId: string, taskId: string, callGracePeriodMs: number | undefined): void {
    const executor = this.port.executorOfTask(frameworkId, taskId);
    if (executor !== undefined) {
      const gracePeriodMs = callGracePeriodMs ?? executor.tasks.get(taskId)?.spec.killGracePeriodMs;
      this.port.ctx.network.send(this.port.agentId, executor.nodeId, {
        type: 'KILL',
        taskId,
        ...(gracePeriodMs === undefined ? {} : { gracePeriodMs }),
      });
      return;
    }
    // Unknown here: tell the master it is lost so the framework hears of it.
    const fw = this.port.frameworks().get(frameworkId);
    if (fw !== undefined && !this.port.updates.hasPending(frameworkId, taskId)) {
      this.port.updates.emit(
        frameworkId,
        taskId,
        undefined,
        'TASK_LOST',
        'Cannot find task to kill',
        'REASON_TASK_UNKNOWN',
      );
    }
  }

  shutdownExecutor(frameworkId: string, executorId: string): void {
    const executor = this.port.frameworks().get(frameworkId)?.executors.get(executorId);
    if (executor !== undefined) this.port.containerizer.shutdown(executor);
  }

  shutdownFramework(frameworkId: string): void {
    const frameworks = this.port.frameworks();
    const fw = frameworks.get(frameworkId);
    if (fw === undefined || fw.terminating) return;
    fw.terminating = true;
    for (const executor of fw.executors.values()) this.shutdownExecutor(frameworkId, executor.executorId);
    this.port.updates.removeFramework(frameworkId);
    forgetIfDone(frameworks, fw, this.port.completedFrameworks());
  }

  acknowledge(frameworkId: string, taskId: string, uuid: string): void {
    const { ctx, agentId } = this.port;
    const acked = this.port.updates.acknowledge(frameworkId, taskId, uuid);
    if (acked === undefined) {
      ctx.trace.append('status-update:ack-ignored', { agentId, taskId, uuid });
      return;
    }
    const executor =
      acked.executorId === undefined
        ? undefined
        : this.port.frameworks().get(frameworkId)?.executors.get(acked.executorId);
    if (executor?.alive === true) ctx.network.send(agentId, executor.nodeId, { type: 'ACKNOWLEDGED', taskId, uuid });
  }

  /** Hands a framework's message to its executor; false when no live executor takes it. */
  frameworkMessage(frameworkId: string, executorId: string, data: Uint8Array): boolean {
    const { ctx, agentId } = this.port;
    const executor = this.port.frameworks().get(frameworkId)?.executors.get(executorId);
    const delivered = executor?.alive ?? false;
    ctx.trace.append('executor:message', { agentId, executorId, bytes: data.length, delivered });
    if (delivered) ctx.network.send(agentId, executor!.nodeId, { type: 'FRAMEWORK_MESSAGE', data });
    return delivered;
  }

  /**
   * Whether a launch must not run: the agent is not registered, or it has
   * run the task already (a RUN_TASK the network repeated).
   */
  #refuseRun(frameworkId: string, taskIds: readonly string[], launchId: string): boolean {
    const { ctx, agentId } = this.port;
    if (!this.port.active()) {
      // A launch that crossed a restart: the master, on re-registration,
      // reconciles the task as lost, so running it would contradict that.
      ctx.trace.append('agent:run-dropped', { agentId, frameworkId, tasks: taskIds });
      return true;
    }
    const fw = this.port.frameworks().get(frameworkId);
    const seen = this.#launches.has(launchId) ? taskIds[0] : taskIds.find((id) => fw?.tasks.has(id) === true);
    if (seen !== undefined) ctx.trace.append('agent:run-repeated', { agentId, frameworkId, taskId: seen });
    else remember(this.#launches, launchId);
    return seen !== undefined;
  }

  #executorFor(framework: FrameworkRef, executorId: string, kind: ExecutorKind, spec?: ExecutorSpec): AgentExecutor {
    const fw = frameworkEntry(this.port.frameworks(), framework);
    // A task for a framework shut down here (on an agent back from a partition): the master still runs it, so it runs again.
    fw.terminating = false;
    let executor = fw.executors.get(executorId);
    if (executor === undefined || !executor.alive)
      fw.executors.set(executorId, (executor = this.port.containerizer.launch(framework, executorId, kind, spec)));
    return executor;
  }
}
