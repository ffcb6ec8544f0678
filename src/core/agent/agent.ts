/**
 * An agent node: a machine with its resources and attributes, the agent
 * process on it, and the executors it runs. The agent talks to the master
 * and to its executors only through messages over the simulated network.
 *
 * Lifecycle of the agent process:
 *
 *   registering --AGENT_REGISTERED / AGENT_REREGISTERED--> active
 *   active --no PING from the master for 75 s--> registering (it re-registers)
 *   registering/active --crash--> crashed --restart--> registering
 *
 * A crash loses everything in memory. What a real agent keeps on disk
 * survives: its checkpointed resources (reservations and volumes made by
 * operations, and the unacknowledged status updates of those operations),
 * the checkpoint of its checkpointing frameworks (their info
 * and their unacknowledged status updates); their executors keep running
 * too, and subscribe again when the agent is back. Executors of
 * frameworks that do not checkpoint die with the agent. The restarted
 * agent re-registers with the tasks it still has, and the master
 * reconciles the rest.
 */
import { wallTimeMs, type SimContext } from '../context.js';
import type { TimerId } from '../event-loop.js';
import {
  MASTER_NODE,
  type AgentDescription,
  type AgentToMaster,
  type ExecutorToAgent,
  type FrameworkRef,
  type ApplyOperation,
  type MasterToAgent,
  type Message,
  type ReportedTask,
  type SimNode,
} from '../messages.js';
import { toHex, type Rng } from '../rng.js';
import { applyConversions, type Resources } from '../resources.js';
import type { Attribute, ExecutorSpec, StatusReason, TaskSpec, TaskState, TaskStatus } from '../types.js';
import { SimExecutor, type ExecutorHost, type ExecutorKind } from './executor.js';
import { OperationUpdates, type OperationUpdate } from './operation-updates.js';
import { StatusUpdateManager, type StreamCheckpoint } from './status-update-manager.js';

export const EXECUTOR_SHUTDOWN_GRACE_MS = 5_000;
/** How often a registering agent repeats its (re-)registration until answered. */
export const REGISTRATION_RETRY_MS = 2_000;
/** Upstream's master ping timeout: `--agent_ping_timeout` times `--max_agent_ping_timeouts`. */
export const MASTER_PING_TIMEOUT_MS = 75_000;

/** How many finished tasks an agent remembers, to ignore repeated launches of them. */
export const MAX_FINISHED_TASKS = 1_000;

/** How many exited executors an agent shows per framework (upstream's `--max_completed_executors_per_framework` default). */
export const MAX_COMPLETED_EXECUTORS_PER_FRAMEWORK = 150;

export type AgentState = 'registering' | 'active' | 'crashed';

const AGENT_PROCESS_NEXT: Readonly<Record<AgentState, readonly AgentState[]>> = {
  registering: ['active', 'crashed'],
  active: ['active', 'crashed', 'registering'],
  crashed: ['registering'],
};

export interface AgentConfig {
  readonly id: string;
  readonly hostname: string;
  readonly ip: string;
  readonly port: number;
  readonly resources: Resources;
  readonly attributes: readonly Attribute[];
}

interface AgentFramework {
  readonly info: FrameworkRef;
  readonly executors: Map<string, SimExecutor>;
  /** The executor each task was handed to, known before the executor has it. */
  readonly tasks: Map<string, SimExecutor>;
  /** Executors that exited, oldest first, for the agent's own endpoints. */
  readonly completed: SimExecutor[];
}

/** What the agent keeps on disk. */
interface Checkpoint {
  readonly frameworks: readonly FrameworkRef[];
  readonly updates: readonly StreamCheckpoint[];
  readonly latest: ReadonlyMap<string, TaskState>;
  readonly resources: CheckpointedResources;
  readonly operationUpdates: readonly OperationUpdate[];
}

/** The agent's resources as operations left them, and the last operation version they include. */
interface CheckpointedResources {
  readonly total: Resources;
  readonly version: number;
}

export class Agent implements SimNode, ExecutorHost {
  #state: AgentState = 'registering';
  #frameworks = new Map<string, AgentFramework>();
  #updates: StatusUpdateManager;
  readonly #rng: Rng;
  #shutdownTimers = new Map<SimExecutor, TimerId>();
  #registrationTimer: TimerId | undefined;
  /** Fires when the master has not pinged for too long. */
  #pingTimer: TimerId | undefined;
  /** The newest state of every task with updates still in flight. */
  #latest = new Map<string, TaskState>();
  /** Executor processes that outlived a crash, until the agent is back. */
  #orphans: SimExecutor[] = [];
  /** Tasks whose executor has exited, `frameworkId\0taskId`, the newest kept. */
  readonly #finished = new Set<string>();
  /** The checkpoint, read back on restart. */
  #disk: Checkpoint | undefined;
  /** Registered before (it restarted, or lost its master): it re-registers with what it runs. */
  #reregisters = false;
  /** Kept on disk at once: a real agent checkpoints its resources before it acknowledges an operation. */
  #resources: CheckpointedResources;
  #operationUpdates: OperationUpdates;

  constructor(
    private readonly ctx: SimContext,
    readonly config: AgentConfig,
  ) {
    this.#rng = ctx.rng.fork(`agent/${config.id}`);
    this.#updates = this.#newUpdateManager();
    this.#resources = { total: config.resources, version: 0 };
    this.#operationUpdates = this.#newOperationUpdates();
  }

  /** The agent's total: its resources flag, changed by the operations applied since. */
  get resources(): Resources {
    return this.#resources.total;
  }

  get id(): string {
    return this.config.id;
  }

  get nodeId(): string {
    return this.config.id;
  }

  get state(): AgentState {
    return this.#state;
  }

  /** `slave(1)@ip:port`, the upstream process id of the agent. */
  get pid(): string {
    return `slave(1)@${this.config.ip}:${this.config.port}`;
  }

  executors(): SimExecutor[] {
    return [...this.#frameworks.values()].flatMap((f) => [...f.executors.values()]);
  }

  /** Executors that exited while the agent ran, oldest first, the newest kept per framework. */
  completedExecutors(): SimExecutor[] {
    return [...this.#frameworks.values()].flatMap((f) => f.completed);
  }

  /** The frameworks the agent knows, in the order it learnt of them. */
  frameworks(): FrameworkRef[] {
    return [...this.#frameworks.values()].map((f) => f.info);
  }

  pendingUpdates(): number {
    return this.#updates.size;
  }

  pendingOperationUpdates(): number {
    return this.#operationUpdates.size;
  }

  /** Starts the agent process: it registers with the master. */
  start(): void {
    this.#register();
  }

  // ---- lifecycle ----

  crash(): void {
    const checkpointing = new Set([...this.#frameworks.values()].filter((f) => f.info.checkpoint).map((f) => f.info.id));
    const disk: Checkpoint = {
      frameworks: [...this.#frameworks.values()].filter((f) => checkpointing.has(f.info.id)).map((f) => f.info),
      updates: this.#updates.checkpoint((id) => checkpointing.has(id)),
      latest: new Map([...this.#latest].filter(([key]) => checkpointing.has(key.split('\u0000')[0]!))),
      resources: this.#resources,
      operationUpdates: this.#operationUpdates.checkpoint(),
    };
    this.#moveTo('crashed');
    this.ctx.trace.append('agent:crash', { agentId: this.id, checkpointed: disk.frameworks.length });
    this.#updates.pause();
    this.#operationUpdates.pause();
    this.ctx.loop.cancel(this.#registrationTimer);
    this.ctx.loop.cancel(this.#pingTimer);
    for (const timer of this.#shutdownTimers.values()) this.ctx.loop.cancel(timer);
    for (const executor of this.executors()) {
      if (!executor.alive) continue;
      if (checkpointing.has(executor.frameworkId)) {
        executor.agentLost();
        this.#orphans.push(executor);
      } else {
        executor.destroy();
        this.ctx.network.detach(executor.nodeId);
      }
    }
    this.#disk = disk;
    this.#finished.clear();
    this.#frameworks = new Map();
    this.#shutdownTimers = new Map();
    this.#latest = new Map();
    this.#updates = this.#newUpdateManager();
    this.#operationUpdates = this.#newOperationUpdates();
  }

  /** Starts the process again from its checkpoint; it re-registers. */
  restart(): void {
    const disk = this.#disk ?? { frameworks: [], updates: [], latest: new Map(), resources: this.#resources, operationUpdates: [] };
    this.#disk = undefined;
    this.#moveTo('registering');
    this.#reregisters = true;
    for (const info of disk.frameworks) this.#frameworks.set(info.id, { info, executors: new Map(), tasks: new Map(), completed: [] });
    this.#updates.recover(disk.updates);
    this.#resources = disk.resources;
    this.#operationUpdates.recover(disk.operationUpdates);
    this.#latest = new Map(disk.latest);
    for (const executor of this.#orphans) {
      if (!executor.alive) continue;
      const fw = this.#frameworks.get(executor.frameworkId);
      fw?.executors.set(executor.executorId, executor);
      for (const taskId of executor.tasks.keys()) fw?.tasks.set(taskId, executor);
    }
    this.ctx.trace.append('agent:restart', { agentId: this.id, executors: this.#orphans.length });
    const orphans = this.#orphans;
    this.#orphans = [];
    this.#register();
    for (const executor of orphans) this.ctx.network.send(this.id, executor.nodeId, { type: 'AGENT_RECONNECTED' });
  }

  #register(): void {
    const message: AgentToMaster = this.#reregisters
      ? {
          type: 'REREGISTER_AGENT',
          agent: this.#description(),
          tasks: this.#reportedTasks(),
          executors: this.#reportedExecutors(),
          resourceVersion: this.#resources.version,
        }
      : { type: 'REGISTER_AGENT', agent: this.#description() };
    this.#toMaster(message);
    this.#registrationTimer = this.ctx.loop.schedule(REGISTRATION_RETRY_MS, 'agent:register-retry', () => this.#register());
  }

  #moveTo(next: AgentState): void {
    if (!AGENT_PROCESS_NEXT[this.#state].includes(next)) {
      throw new Error(`agent '${this.id}': illegal transition ${this.#state} -> ${next}`);
    }
    this.#state = next;
  }

  // ---- messages ----

  receive(from: string, message: Message): void {
    if (this.#state === 'crashed') return;
    if (from === MASTER_NODE) this.#fromMaster(message as MasterToAgent);
    else this.#fromExecutor(message as ExecutorToAgent);
  }

  #fromMaster(m: MasterToAgent): void {
    switch (m.type) {
      case 'AGENT_REGISTERED':
      case 'AGENT_REREGISTERED':
        return this.#onRegistered();
      case 'RUN_TASK':
        return this.#onRunTask(m.framework, m.task);
      case 'RUN_TASK_GROUP':
        return this.#onRunTaskGroup(m.framework, m.executor, m.tasks);
      case 'KILL_TASK':
        return this.#onKillTask(m.frameworkId, m.taskId);
      case 'SHUTDOWN_EXECUTOR':
        return this.#onShutdownExecutor(m.frameworkId, m.executorId);
      case 'SHUTDOWN_FRAMEWORK':
        return this.#onShutdownFramework(m.frameworkId);
      case 'SHUTDOWN_AGENT':
        this.ctx.trace.append('agent:shutdown', { agentId: this.id, message: m.message });
        for (const frameworkId of [...this.#frameworks.keys()]) this.#onShutdownFramework(frameworkId);
        return;
      case 'STATUS_UPDATE_ACK':
        return this.#onAcknowledge(m.frameworkId, m.taskId, m.uuid);
      case 'FRAMEWORK_TO_EXECUTOR':
        return this.#onFrameworkMessage(m.frameworkId, m.executorId, m.data);
      case 'PING':
        this.#awaitPing();
        return this.#toMaster({ type: 'PONG' });
      case 'APPLY_OPERATION':
        return this.#onApplyOperation(m);
      case 'OPERATION_STATUS_ACK':
        if (!this.#operationUpdates.acknowledge(m.operationUuid, m.statusUuid)) {
          this.ctx.trace.append('operation-update:ack-ignored', { agentId: this.id, operationUuid: m.operationUuid });
        }
        return;
    }
  }

  /**
   * Applies a speculative operation to the checkpointed resources and
   * reports it finished. An operation the resources already include (sent
   * again after a re-registration) is reported again, not applied twice.
   * When an earlier operation never arrived (its message was lost), this
   * one cannot be applied on its own: the agent takes the master's total,
   * which includes both, as the master is the source of truth for
   * checkpointed resources.
   */
  #onApplyOperation(m: ApplyOperation): void {
    const { version, total } = this.#resources;
    if (m.version <= version) {
      this.#operationUpdates.resend(m.operationUuid);
      if (this.#operationUpdates.get(m.operationUuid) !== undefined) return;
    } else {
      const applied = m.version === version + 1 ? applyConversions(total, m.conversions) : m.total;
      this.#resources = { total: typeof applied === 'string' ? m.total : applied, version: m.version };
      this.ctx.trace.append('agent:apply-operation', { agentId: this.id, operationUuid: m.operationUuid, version: m.version });
    }
    this.#operationUpdates.update({
      ...(m.frameworkId === undefined ? {} : { frameworkId: m.frameworkId }),
      operationUuid: m.operationUuid,
      status: {
        ...(m.operationId === undefined ? {} : { operationId: m.operationId }),
        state: 'OPERATION_FINISHED',
        agentId: this.id,
        uuid: toHex(this.#rng.bytes(16)),
      },
    });
  }

  #fromExecutor(m: ExecutorToAgent): void {
    switch (m.type) {
      case 'EXECUTOR_UPDATE':
        this.#take(m.frameworkId, m.status);
        return;
      case 'EXECUTOR_SUBSCRIBE':
        this.ctx.trace.append('executor:resubscribe', { agentId: this.id, executorId: m.executorId, unacknowledged: m.unacknowledged.length });
        for (const status of m.unacknowledged) this.#take(m.frameworkId, status);
        return;
    }
  }

  #onRegistered(): void {
    this.ctx.loop.cancel(this.#registrationTimer);
    this.#registrationTimer = undefined;
    this.#awaitPing();
    if (this.#state === 'active') return;
    this.#moveTo('active');
    this.#updates.resume();
    this.#operationUpdates.resume();
  }

  /**
   * As upstream's agent: a master that stops pinging (a partition) is taken
   * for lost, and the agent registers again, as often as it must.
   */
  #awaitPing(): void {
    this.ctx.loop.cancel(this.#pingTimer);
    this.#pingTimer = this.ctx.loop.schedule(MASTER_PING_TIMEOUT_MS, 'agent:master-ping-timeout', () => {
      this.#pingTimer = undefined;
      if (this.#state !== 'active') return;
      this.ctx.trace.append('agent:master-lost', { agentId: this.id });
      this.#moveTo('registering');
      this.#reregisters = true;
      this.#register();
    });
  }

  /**
   * Whether a launch must not run: the agent is not registered, or it has
   * run the task already (a RUN_TASK the network repeated).
   */
  #refuseRun(frameworkId: string, taskIds: readonly string[]): boolean {
    if (this.#state !== 'active') {
      // A launch that crossed a restart: the master, on re-registration,
      // reconciles the task as lost, so running it would contradict that.
      this.ctx.trace.append('agent:run-dropped', { agentId: this.id, frameworkId, tasks: taskIds });
      return true;
    }
    const fw = this.#frameworks.get(frameworkId);
    const seen = taskIds.find((id) => fw?.tasks.has(id) === true || this.#finished.has(`${frameworkId}\u0000${id}`));
    if (seen !== undefined) this.ctx.trace.append('agent:run-repeated', { agentId: this.id, frameworkId, taskId: seen });
    return seen !== undefined;
  }

  #onRunTask(framework: FrameworkRef, task: TaskSpec): void {
    if (this.#refuseRun(framework.id, [task.taskId])) return;
    const kind: ExecutorKind = task.executor === undefined ? 'command' : 'custom';
    const executorId = task.executor?.executorId ?? task.taskId;
    const executor = this.#executorFor(framework, executorId, kind);
    this.#frameworks.get(framework.id)!.tasks.set(task.taskId, executor);
    this.ctx.network.send(this.id, executor.nodeId, { type: 'LAUNCH', task });
  }

  #onRunTaskGroup(framework: FrameworkRef, executorSpec: ExecutorSpec, tasks: readonly TaskSpec[]): void {
    if (this.#refuseRun(framework.id, tasks.map((t) => t.taskId))) return;
    const executor = this.#executorFor(framework, executorSpec.executorId, 'default');
    for (const task of tasks) this.#frameworks.get(framework.id)!.tasks.set(task.taskId, executor);
    this.ctx.network.send(this.id, executor.nodeId, { type: 'LAUNCH_GROUP', tasks });
  }

  #onKillTask(frameworkId: string, taskId: string): void {
    const executor = this.#executorOfTask(frameworkId, taskId);
    if (executor !== undefined) {
      this.ctx.network.send(this.id, executor.nodeId, { type: 'KILL', taskId });
      return;
    }
    // Unknown here: tell the master it is lost so the framework hears of it.
    const fw = this.#frameworks.get(frameworkId);
    if (fw !== undefined && !this.#updates.hasPending(frameworkId, taskId)) {
      this.#emit(frameworkId, taskId, undefined, 'TASK_LOST', 'Cannot find task to kill', 'REASON_TASK_UNKNOWN');
    }
  }

  #onShutdownExecutor(frameworkId: string, executorId: string): void {
    const executor = this.#frameworks.get(frameworkId)?.executors.get(executorId);
    if (executor === undefined || !executor.alive || this.#shutdownTimers.has(executor)) return;
    this.ctx.trace.append('executor:shutdown', { agentId: this.id, frameworkId, executorId });
    // The grace period bounds how long a hung executor may take to exit.
    this.#shutdownTimers.set(
      executor,
      this.ctx.loop.schedule(EXECUTOR_SHUTDOWN_GRACE_MS, 'executor:shutdown-grace', () => this.#destroy(executor)),
    );
    this.ctx.network.send(this.id, executor.nodeId, { type: 'SHUTDOWN' });
  }

  #onShutdownFramework(frameworkId: string): void {
    const fw = this.#frameworks.get(frameworkId);
    if (fw === undefined) return;
    for (const executor of fw.executors.values()) {
      if (executor.alive) this.ctx.network.send(this.id, executor.nodeId, { type: 'SHUTDOWN' });
    }
    this.#updates.removeFramework(frameworkId);
    this.#frameworks.delete(frameworkId);
    for (const key of this.#latest.keys()) if (key.startsWith(`${frameworkId}\u0000`)) this.#latest.delete(key);
  }

  #onAcknowledge(frameworkId: string, taskId: string, uuid: string): void {
    const acked = this.#updates.acknowledge(frameworkId, taskId, uuid);
    if (acked === undefined) {
      this.ctx.trace.append('status-update:ack-ignored', { agentId: this.id, taskId, uuid });
      return;
    }
    if (!this.#updates.hasPending(frameworkId, taskId)) this.#latest.delete(`${frameworkId}\u0000${taskId}`);
    const executor = acked.executorId === undefined ? undefined : this.#frameworks.get(frameworkId)?.executors.get(acked.executorId);
    if (executor?.alive === true) this.ctx.network.send(this.id, executor.nodeId, { type: 'ACKNOWLEDGED', taskId, uuid });
  }

  #onFrameworkMessage(frameworkId: string, executorId: string, data: Uint8Array): void {
    const executor = this.#frameworks.get(frameworkId)?.executors.get(executorId);
    const delivered = executor?.alive ?? false;
    this.ctx.trace.append('executor:message', { agentId: this.id, executorId, bytes: data.length, delivered });
    if (delivered) this.ctx.network.send(this.id, executor!.nodeId, { type: 'FRAMEWORK_MESSAGE', data });
  }

  // ---- ExecutorHost ----

  exited(executor: SimExecutor, waitStatus: number): void {
    this.ctx.network.detach(executor.nodeId);
    if (this.#state === 'crashed') return;
    this.ctx.loop.cancel(this.#shutdownTimers.get(executor));
    this.#shutdownTimers.delete(executor);
    this.ctx.trace.append('executor:exit', { agentId: this.id, executorId: executor.executorId, waitStatus });
    const fw = this.#frameworks.get(executor.frameworkId);
    if (fw?.executors.get(executor.executorId) === executor) fw.executors.delete(executor.executorId);
    fw?.completed.push(executor);
    if (fw !== undefined && fw.completed.length > MAX_COMPLETED_EXECUTORS_PER_FRAMEWORK) fw.completed.shift();
    for (const [taskId, runner] of fw?.tasks ?? []) {
      if (runner !== executor) continue;
      fw!.tasks.delete(taskId);
      this.#finished.add(`${executor.frameworkId}\u0000${taskId}`);
    }
    // Oldest first: a Set iterates in insertion order.
    for (const key of this.#finished) {
      if (this.#finished.size <= MAX_FINISHED_TASKS) break;
      this.#finished.delete(key);
    }
    // The command executor is an implementation detail; upstream reports only the others.
    if (executor.kind === 'command') return;
    this.#toMaster({ type: 'EXITED_EXECUTOR', agentId: this.id, frameworkId: executor.frameworkId, executorId: executor.executorId, waitStatus });
  }

  // ---- internals ----

  #executorFor(framework: FrameworkRef, executorId: string, kind: ExecutorKind): SimExecutor {
    let fw = this.#frameworks.get(framework.id);
    if (fw === undefined) {
      fw = { info: framework, executors: new Map(), tasks: new Map(), completed: [] };
      this.#frameworks.set(framework.id, fw);
    }
    let executor = fw.executors.get(executorId);
    if (executor === undefined || !executor.alive) {
      const killingCapable = framework.capabilities.includes('TASK_KILLING_STATE');
      const identity = { agentId: this.id, executorId, frameworkId: framework.id, kind, containerId: this.#rng.uuid(), killingCapable };
      executor = new SimExecutor(this.ctx, this, identity);
      this.ctx.network.attach(executor, this.id);
      fw.executors.set(executorId, executor);
      this.ctx.trace.append('executor:launch', { agentId: this.id, frameworkId: framework.id, executorId, kind });
    }
    return executor;
  }

  #executorOfTask(frameworkId: string, taskId: string): SimExecutor | undefined {
    const executor = this.#frameworks.get(frameworkId)?.tasks.get(taskId);
    return executor?.alive === true ? executor : undefined;
  }

  /** A hung executor outlived its grace period: destroy its container. */
  #destroy(executor: SimExecutor): void {
    for (const task of executor.liveTasks()) {
      task.state = 'TASK_LOST';
      const message = 'Executor did not exit within its grace period';
      this.#emit(executor.frameworkId, task.spec.taskId, executor, 'TASK_LOST', message, 'REASON_EXECUTOR_TERMINATED');
    }
    executor.destroy();
    this.exited(executor, 9);
  }

  /** An update the agent makes itself (not its executors'). */
  #emit(frameworkId: string, taskId: string, executor: SimExecutor | undefined, state: TaskState, message: string, reason: StatusReason): void {
    this.#take(frameworkId, {
      taskId,
      state,
      source: 'SOURCE_AGENT',
      reason,
      message,
      agentId: this.id,
      ...(executor === undefined ? {} : { executorId: executor.executorId, containerId: executor.containerId }),
      timestampMs: wallTimeMs(this.ctx),
      uuid: toHex(this.#rng.bytes(16)),
    });
  }

  /** Takes an update into the status update manager, unless it has it already. */
  #take(frameworkId: string, status: TaskStatus): void {
    if (!this.#frameworks.has(frameworkId)) return;
    const key = `${frameworkId}\u0000${status.taskId}`;
    // Set before queueing: the manager may forward at once, with the latest state.
    const before = this.#latest.get(key);
    this.#latest.set(key, status.state);
    if (this.#updates.update(frameworkId, status)) return;
    if (before === undefined) this.#latest.delete(key);
    else this.#latest.set(key, before);
  }

  #newUpdateManager(): StatusUpdateManager {
    return new StatusUpdateManager(this.ctx, (frameworkId, status) => {
      const latestState = this.#latest.get(`${frameworkId}\u0000${status.taskId}`) ?? status.state;
      this.#toMaster({ type: 'STATUS_UPDATE', agentId: this.id, frameworkId, status, latestState });
    });
  }

  #newOperationUpdates(): OperationUpdates {
    return new OperationUpdates(this.ctx, (update) => this.#toMaster({ type: 'UPDATE_OPERATION_STATUS', agentId: this.id, ...update }));
  }

  #toMaster(message: AgentToMaster): void {
    this.ctx.network.send(this.id, MASTER_NODE, message);
  }

  #description(): AgentDescription {
    const { id: agentId, hostname, ip, port, attributes } = this.config;
    return { agentId, hostname, ip, port, resources: this.#resources.total, attributes };
  }

  /** Tasks of live executors, and tasks whose updates the agent still holds (their executor may be gone). */
  #reportedTasks(): ReportedTask[] {
    const reported = this.executors().flatMap((e) =>
      [...e.tasks.values()].map((t) => ({ frameworkId: e.frameworkId, taskId: t.spec.taskId, executorId: e.executorId, state: t.state })),
    );
    const listed = new Set(reported.map((t) => `${t.frameworkId}\u0000${t.taskId}`));
    for (const { frameworkId, status } of this.#updates.heads()) {
      const key = `${frameworkId}\u0000${status.taskId}`;
      if (listed.has(key)) continue;
      const state = this.#latest.get(key) ?? status.state;
      reported.push({ frameworkId, taskId: status.taskId, executorId: status.executorId ?? status.taskId, state });
    }
    return reported;
  }

  #reportedExecutors(): { frameworkId: string; executorId: string }[] {
    return this.executors()
      .filter((e) => e.alive && e.kind !== 'command')
      .map((e) => ({ frameworkId: e.frameworkId, executorId: e.executorId }));
  }
}
