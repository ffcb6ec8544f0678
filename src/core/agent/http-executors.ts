/**
 * The agent's work for executors that run outside the core (`spawn` and
 * `await`): starting and destroying their containers through the host,
 * answering their calls (executor-calls.ts), and the agent's own updates
 * when one never subscribes, is killed before it got its task, or loses
 * its only connection. The agent owns the records; this is its hand for
 * them, reached through a narrow port.
 */
import { formatDuration } from '../kernel/duration.js';
import type { ExecutorAgentInfo, ExecutorAuthorizer, ExecutorCallEnvelope } from '../model/executor-api.js';
import type { Outcome } from '../model/errors.js';
import type { AgentToMaster, FrameworkRef } from '../model/messages.js';
import type { Outbox } from '../network/outbox.js';
import type { SimContext } from '../network/context.js';
import type { TimerId } from '../kernel/event-loop.js';
import type { Resources } from '../model/resources.js';
import type { ExecutorSpec, StatusReason, TaskState, TaskStatus } from '../model/types.js';
import { executorCall, executorSubscribe, type ExecutorEndpointHost } from './executor-calls.js';
import type { ExecutorIdentity } from './executor.js';
import type { Sandbox } from '../process/sandbox.js';
import type { AgentConfig } from './flags.js';
import type { AgentExecutor, AgentFramework } from './frameworks.js';
import { HttpExecutor, type HttpExecutorHost } from './http-executor.js';

/** What the agent lends its executors' hand. */
export interface AgentPort {
  readonly ctx: SimContext;
  readonly config: AgentConfig;
  readonly outbox: Outbox;
  /** Whether the agent process runs. */
  up(): boolean;
  resources(): Resources;
  framework(frameworkId: string): AgentFramework | undefined;
  /** An update the agent makes itself about a task. */
  emit(
    frameworkId: string,
    taskId: string,
    executor: AgentExecutor,
    state: TaskState,
    message: string,
    reason: StatusReason,
    limitation?: Resources,
  ): void;
  take(frameworkId: string, status: TaskStatus): boolean;
  exited(executor: AgentExecutor, waitStatus: number): void;
  toMaster(message: AgentToMaster): void;
}

export class HttpExecutors implements HttpExecutorHost {
  /** A restarted agent waiting for its executors to subscribe again before it registers. */
  #awaiting:
    | { readonly waiting: readonly HttpExecutor[]; readonly proceed: () => void; readonly timer: TimerId }
    | undefined;

  constructor(private readonly agent: AgentPort) {}

  get outbox(): Outbox {
    return this.agent.outbox;
  }

  /** A custom executor run by a process outside the core: spawned by the host, or awaited. */
  launch(
    identity: ExecutorIdentity,
    sandbox: Sandbox,
    spec: ExecutorSpec,
    framework: FrameworkRef,
    spawned: boolean,
  ): HttpExecutor {
    const { flags, ip, port } = this.agent.config;
    const executor = new HttpExecutor(
      this.agent.ctx,
      this,
      identity,
      sandbox,
      spec,
      framework,
      flags.executorRegistrationTimeoutMs,
      spawned,
    );
    if (!spawned) return executor;
    this.outbox.container({
      kind: 'launch',
      launch: {
        agentId: identity.agentId,
        containerId: identity.containerId,
        framework,
        executor: spec,
        directory: sandbox.path,
        agentEndpoint: `${ip}:${port}`,
        checkpoint: framework.checkpoint,
        shutdownGracePeriodMs: flags.executorShutdownGracePeriodMs,
        recoveryTimeoutMs: flags.recoveryTimeoutMs,
        subscriptionBackoffMaxMs: flags.executorReregistrationTimeoutMs,
      },
    });
    return executor;
  }

  /** Ends an executor's container; a spawned process is killed by the host. */
  destroyContainer(executor: AgentExecutor): void {
    if (!executor.alive) return;
    executor.destroy();
    if (executor instanceof HttpExecutor && executor.spawned) {
      this.outbox.container({ kind: 'destroy', agentId: this.agent.config.id, containerId: executor.containerId });
    }
  }

  /** Destroys an executor's container, its live tasks ending as `state` with the agent's reason (and the limitation it passed). */
  terminate(
    executor: AgentExecutor,
    state: TaskState,
    message: string,
    reason: StatusReason,
    limitation?: Resources,
  ): void {
    for (const task of executor.liveTasks()) {
      this.agent.emit(executor.frameworkId, task.spec.taskId, executor, state, message, reason, limitation);
      task.state = state;
    }
    this.destroyContainer(executor);
    this.agent.exited(executor, 9);
  }

  /**
   * After a restart: `proceed` once every executor that outlived the agent
   * has subscribed again, or when `--executor_reregistration_timeout` has
   * passed, the executors still away destroyed first.
   */
  awaitReregistration(waiting: readonly HttpExecutor[], proceed: () => void): void {
    const timeoutMs = this.agent.config.flags.executorReregistrationTimeoutMs;
    const timer = this.agent.ctx.loop.schedule(timeoutMs, 'agent:executor-reregistration-timeout', () => {
      this.#awaiting = undefined;
      if (!this.agent.up()) return;
      for (const executor of waiting) {
        if (executor.state !== 'disconnected') continue;
        const message = `Executor did not reregister within ${formatDuration(timeoutMs)}`;
        this.terminate(executor, 'TASK_FAILED', message, 'REASON_EXECUTOR_REREGISTRATION_TIMEOUT');
      }
      proceed();
    });
    this.#awaiting = { waiting, proceed, timer };
  }

  /** An executor of a framework that does not checkpoint dies with its agent. */
  destroyWithAgent(executor: AgentExecutor): void {
    this.destroyContainer(executor);
    this.agent.ctx.network.detach(executor.nodeId);
  }

  /** The agent's process is gone again: nothing waits for its executors any more. */
  agentLost(): void {
    if (this.#awaiting !== undefined) this.agent.ctx.loop.cancel(this.#awaiting.timer);
    this.#awaiting = undefined;
  }

  subscribe(connectionId: string, envelope: ExecutorCallEnvelope, authorize?: ExecutorAuthorizer): Outcome {
    const outcome = executorSubscribe(this.#endpoint(), connectionId, envelope, authorize);
    const awaiting = this.#awaiting;
    if (outcome.ok && awaiting !== undefined && awaiting.waiting.every((e) => e.state !== 'disconnected')) {
      this.agent.ctx.loop.cancel(awaiting.timer);
      this.#awaiting = undefined;
      awaiting.proceed();
    }
    return outcome;
  }

  call(envelope: ExecutorCallEnvelope, authorize?: ExecutorAuthorizer): Outcome {
    return executorCall(this.#endpoint(), envelope, authorize);
  }

  // ---- HttpExecutorHost ----

  agentInfo(): ExecutorAgentInfo {
    const { id: agentId, hostname, port, attributes } = this.agent.config;
    return { agentId, hostname, port, resources: this.agent.resources(), attributes };
  }

  registrationTimedOut(executor: HttpExecutor): void {
    const message = `Executor did not register within ${formatDuration(this.agent.config.flags.executorRegistrationTimeoutMs)}`;
    this.terminate(executor, 'TASK_FAILED', message, 'REASON_EXECUTOR_REGISTRATION_TIMEOUT');
  }

  killedBeforeDelivery(executor: HttpExecutor, taskId: string): void {
    this.agent.emit(
      executor.frameworkId,
      taskId,
      executor,
      'TASK_KILLED',
      'Killed before delivery to the executor',
      'REASON_TASK_KILLED_DURING_LAUNCH',
    );
    executor.setTaskState(taskId, 'TASK_KILLED');
  }

  connectionLost(executor: HttpExecutor): void {
    executor.destroy();
    this.agent.exited(executor, 0);
  }

  #endpoint(): ExecutorEndpointHost {
    const agent = this.agent;
    return {
      id: agent.config.id,
      ctx: agent.ctx,
      up: agent.up(),
      framework: (frameworkId) => agent.framework(frameworkId)?.info,
      executor: (frameworkId, executorId) => agent.framework(frameworkId)?.executors.get(executorId),
      takeUpdate: (frameworkId, status) => agent.take(frameworkId, status),
      agentUpdate: (executor, taskId, state, message, reason) => {
        agent.emit(executor.frameworkId, taskId, executor, state, message, reason);
        executor.setTaskState(taskId, state);
      },
      toMaster: (message) => agent.toMaster(message),
    };
  }
}
