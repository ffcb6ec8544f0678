/**
 * The agent's containerizer: it starts an executor's container (an
 * executor the agent plays itself, or a process outside the core through
 * its host), finds containers by id or by their executor's connection,
 * shuts executors down (SHUTDOWN, then destruction once the grace period
 * is over), and reaps them: an exit the host reports, or a kill the agent
 * orders (SIGKILL of the executor's process, as when it crashes). The
 * agent keeps the records of which framework runs which executor; this is
 * its hand on the processes.
 */
import { wallTimeMs, type SimContext } from '../network/context.js';
import { newSandbox, type SandboxSettings } from './sandboxes.js';
import type { TimerId } from '../kernel/event-loop.js';
import type { FrameworkRef } from '../model/messages.js';
import type { ExecutorSpec } from '../model/types.js';
import { SimExecutor, type ExecutorHost, type ExecutorKind } from './executor.js';
import type { AgentConfig } from './flags.js';
import type { AgentExecutor } from './frameworks.js';
import { HttpExecutor } from './http-executor.js';
import type { HttpExecutors } from './http-executors.js';

/** The wait(2) status of a process killed by SIGKILL. */
export const SIGKILL_STATUS = 9;

export interface ContainerizerPort {
  readonly ctx: SimContext;
  readonly config: AgentConfig;
  /** The agent, which learns of each exit. */
  readonly host: ExecutorHost & { exited(executor: AgentExecutor, waitStatus: number): void };
  /** The agent's hand for executors that run outside the core. */
  http(): HttpExecutors;
  /** Every executor the agent knows, those that outlived a crash of its process included. */
  all(): readonly AgentExecutor[];
  /** A fresh container id. */
  containerId(): string;
  /** Where sandboxes go and how big they may grow. */
  readonly sandboxes: SandboxSettings;
}

export class Containerizer {
  /** Executors asked to shut down, with the timer that destroys each once its grace period is over. */
  readonly #shutdowns = new Map<AgentExecutor, TimerId>();

  constructor(private readonly port: ContainerizerPort) {}

  /** SHUTDOWN to a live executor (once); the grace period bounds how long a hung one may take to exit. */
  shutdown(executor: AgentExecutor): void {
    if (!executor.alive || this.#shutdowns.has(executor)) return;
    const { ctx, config } = this.port;
    ctx.trace.append('executor:shutdown', {
      agentId: config.id,
      frameworkId: executor.frameworkId,
      executorId: executor.executorId,
    });
    const destroy = () =>
      this.port
        .http()
        .terminate(
          executor,
          'TASK_LOST',
          'Executor did not exit within its grace period',
          'REASON_EXECUTOR_TERMINATED',
        );
    this.#shutdowns.set(
      executor,
      ctx.loop.schedule(config.flags.executorShutdownGracePeriodMs, 'executor:shutdown-grace', destroy),
    );
    ctx.network.send(config.id, executor.nodeId, { type: 'SHUTDOWN' });
  }

  /** The executor exited: no grace period runs for it any more. */
  cancelShutdown(executor: AgentExecutor): void {
    this.port.ctx.loop.cancel(this.#shutdowns.get(executor));
    this.#shutdowns.delete(executor);
  }

  /** The agent process died: its grace periods die with it (a restarted agent starts them again). */
  cancelShutdowns(): void {
    for (const timer of this.#shutdowns.values()) this.port.ctx.loop.cancel(timer);
    this.#shutdowns.clear();
  }

  /** Starts the container of a new executor of `framework` and attaches it to the network. */
  launch(framework: FrameworkRef, executorId: string, kind: ExecutorKind, spec?: ExecutorSpec): AgentExecutor {
    const { ctx, config } = this.port;
    const [killingCapable, engine] = [
      framework.capabilities.includes('TASK_KILLING_STATE'),
      config.flags.containerEngine,
    ];
    const identity = {
      agentId: config.id,
      executorId,
      frameworkId: framework.id,
      kind,
      containerId: this.port.containerId(),
      killingCapable,
      engine,
    };
    const mode = config.flags.customExecutors;
    const sandbox = newSandbox(this.port.sandboxes, identity, wallTimeMs(ctx));
    const executor =
      kind === 'custom' && spec !== undefined && mode !== 'simulate'
        ? this.port.http().launch(identity, sandbox, spec, framework, mode === 'spawn')
        : new SimExecutor(ctx, this.port.host, identity, sandbox);
    ctx.network.attach(executor, config.id);
    ctx.trace.append('executor:launch', { agentId: config.id, frameworkId: framework.id, executorId, kind, mode });
    return executor;
  }

  /** The executor whose stream is `connectionId`, if it is one of this agent's. */
  byConnection(connectionId: string): HttpExecutor | undefined {
    return this.port.all().find((e): e is HttpExecutor => e instanceof HttpExecutor && e.connectionId === connectionId);
  }

  /** The process of an executor's container exited (spawn mode), with its wait(2) status. */
  exited(containerId: string, waitStatus: number): void {
    const executor = this.port.all().find((e) => e.containerId === containerId);
    if (executor === undefined || !executor.alive) return;
    executor.destroy();
    this.port.host.exited(executor, waitStatus);
  }

  /**
   * The host could not start the process of an executor's container (its
   * sandbox could not be given to the executor's user, as upstream's agent
   * fails to make it): its tasks end as upstream's agent ends them then,
   * TASK_DROPPED for a partition-aware framework, else TASK_LOST, with
   * REASON_EXECUTOR_TERMINATED and the host's reason; the container is gone.
   */
  launchFailed(containerId: string, message: string): void {
    const executor = this.port.all().find((e) => e.containerId === containerId);
    if (executor === undefined || !executor.alive) return;
    const partitionAware =
      executor instanceof HttpExecutor && executor.framework.capabilities.includes('PARTITION_AWARE');
    this.port.ctx.trace.append('executor:launch-failed', {
      agentId: this.port.config.id,
      executorId: executor.executorId,
      containerId,
      message,
    });
    this.port
      .http()
      .terminate(executor, partitionAware ? 'TASK_DROPPED' : 'TASK_LOST', message, 'REASON_EXECUTOR_TERMINATED');
  }

  /**
   * The executor's process dies at once (SIGKILL): its container is
   * destroyed (a spawned process is killed by the host) and reaped; the
   * agent reports its live tasks as an executor's termination.
   */
  kill(executor: AgentExecutor): void {
    if (!executor.alive) return;
    this.port.ctx.trace.append('executor:killed', {
      agentId: this.port.config.id,
      frameworkId: executor.frameworkId,
      executorId: executor.executorId,
    });
    this.port.http().destroyContainer(executor);
    this.port.host.exited(executor, SIGKILL_STATUS);
  }
}
