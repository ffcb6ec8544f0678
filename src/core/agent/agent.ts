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
import { wallTimeMs, type SimContext } from '../network/context.js';
import type { TimerId } from '../kernel/event-loop.js';
import { MASTER_NODE, type AgentDescription, type AgentToMaster, type ExecutorToAgent } from '../model/messages.js';
import type { FrameworkRef, MasterToAgent, Message, SimNode } from '../model/messages.js';
import type { Outbox } from '../network/outbox.js';
import type { Rng } from '../kernel/rng.js';
import type { Resources } from '../model/resources.js';
import type { ExecutorAuthorizer, ExecutorCallEnvelope, RecoverMode } from '../model/executor-api.js';
import type { Outcome } from '../model/errors.js';
import type { ExecutorSpec, StatusReason, TaskSpec, TaskState, TaskStatus } from '../model/types.js';
import { AgentCgroups } from './cgroups.js';
import { Containerizer } from './containerizer.js';
import { SimTask, type ExecutorHost, type ExecutorKind } from './executor.js';
import { HttpExecutor } from './http-executor.js';
import { HttpExecutors } from './http-executors.js';
import type { NestedContainers } from './nested-containers.js';
import { PingWatch } from './ping-watch.js';
import { MASTER_PING_TIMEOUT_MS, REGISTRATION_RETRY_MS, type AgentConfig } from './flags.js';
import { forgetIfDone, frameworkEntry, recordExit, remember, type AgentExecutor, type AgentFramework } from './frameworks.js';
import { applyOperation, OperationUpdates, type CheckpointedResources, type OperationUpdate } from './operation-updates.js';
import { reregistration } from './reports.js';
import { StatusUpdateManager, streamKey, type StreamCheckpoint } from './status-update-manager.js';

export type AgentState = 'registering' | 'active' | 'crashed';

const AGENT_PROCESS_NEXT: Readonly<Record<AgentState, readonly AgentState[]>> = {
  registering: ['active', 'crashed'],
  active: ['active', 'crashed', 'registering'],
  crashed: ['registering'],
};

/** What the agent keeps on disk. */
interface Checkpoint {
  readonly frameworks: readonly FrameworkRef[];
  readonly updates: readonly StreamCheckpoint[];
  readonly latest: ReadonlyMap<string, TaskState>;
  readonly resources: CheckpointedResources;
  readonly operationUpdates: readonly OperationUpdate[];
}

export class Agent implements SimNode, ExecutorHost {
  #state: AgentState = 'registering';
  #frameworks = new Map<string, AgentFramework>();
  #updates: StatusUpdateManager;
  readonly #rng: Rng;
  #registrationTimer: TimerId | undefined;
  /** Fires when the master has not pinged for too long. */
  readonly #pingWatch: PingWatch;
  /** The newest state of every task with updates still in flight. */
  #latest = new Map<string, TaskState>();
  /** Executor processes that outlived a crash, until the agent is back. */
  #orphans: AgentExecutor[] = [];
  /** `--recover=cleanup`: the agent kills what it finds, then exits once its executors have. */
  #cleaningUp = false;
  /** Launch messages taken (their ids), the newest kept: a repeat the network made is dropped, a task launched again is not. */
  readonly #launches = new Set<string>();
  /** The checkpoint, read back on restart. */
  #disk: Checkpoint | undefined;
  /** Registered before (it restarted, or lost its master): it re-registers with what it runs. */
  #reregisters = false;
  /** Kept on disk at once: a real agent checkpoints its resources before it acknowledges an operation. */
  #resources: CheckpointedResources;
  #operationUpdates: OperationUpdates;
  /** The hand for executors that run outside the core. */
  #httpExecutors: HttpExecutors | undefined;
  /** Containers launched inside its executors' (task exec sessions); set on first use, by the cluster. */
  nested: NestedContainers | undefined;
  /** Its containers' memory cgroups. */
  readonly cgroups: AgentCgroups;
  readonly #containerizer: Containerizer;

  constructor(
    private readonly ctx: SimContext,
    readonly config: AgentConfig,
    readonly outbox: Outbox,
  ) {
    this.#rng = ctx.rng.fork(`agent/${config.id}`);
    this.#pingWatch = new PingWatch(ctx.loop, ctx.network, config.id, MASTER_PING_TIMEOUT_MS, () => this.#masterLost());
    this.#updates = this.#newUpdateManager();
    this.#resources = { total: config.resources, version: 0 };
    this.#operationUpdates = this.#newOperationUpdates();
    const executorOf = (frameworkId: string, taskId: string) => this.executorOfTask(frameworkId, taskId);
    this.cgroups = new AgentCgroups(ctx, config, () => this.executors(), executorOf, (executor, message, limitation) =>
      this.#http.terminate(executor, 'TASK_FAILED', message, 'REASON_CONTAINER_LIMITATION_MEMORY', limitation),
    );
    const all = () => [...this.executors(), ...this.#orphans];
    this.#containerizer = new Containerizer({ ctx, config, host: this, http: () => this.#http, all, containerId: () => this.#rng.uuid() });
  }

  /** Made on first use: most agents never run an executor outside the core, and a large cluster has many agents. */
  get #http(): HttpExecutors {
    this.#httpExecutors ??= new HttpExecutors({
      ctx: this.ctx,
      config: this.config,
      outbox: this.outbox,
      up: () => this.#state !== 'crashed',
      resources: () => this.#resources.total,
      framework: (frameworkId) => this.#frameworks.get(frameworkId),
      emit: (frameworkId, taskId, executor, state, message, reason, limitation) => this.#emit(frameworkId, taskId, executor, state, message, reason, limitation),
      take: (frameworkId, status) => this.#take(frameworkId, status),
      exited: (executor, waitStatus) => this.exited(executor, waitStatus),
      toMaster: (message) => this.#toMaster(message),
    });
    return this.#httpExecutors;
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

  executors(): AgentExecutor[] {
    return [...this.#frameworks.values()].flatMap((f) => [...f.executors.values()]);
  }

  /** Executors that exited while the agent ran, oldest first, the newest kept per framework. */
  completedExecutors(): AgentExecutor[] {
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
    // A framework being shut down is not recovered: its executors end with the process.
    const checkpointing = new Set([...this.#frameworks.values()].filter((f) => f.info.checkpoint && !f.terminating).map((f) => f.info.id));
    const disk: Checkpoint = {
      frameworks: [...this.#frameworks.values()].filter((f) => checkpointing.has(f.info.id)).map((f) => f.info),
      updates: this.#updates.checkpoint((id) => checkpointing.has(id)),
      latest: new Map([...this.#latest].filter(([key]) => checkpointing.has(key.split('\u0000')[0]!))),
      resources: this.#resources,
      operationUpdates: this.#operationUpdates.checkpoint(),
    };
    this.#moveTo('crashed');
    this.nested?.clear();
    this.#httpExecutors?.agentLost();
    this.ctx.trace.append('agent:crash', { agentId: this.id, checkpointed: disk.frameworks.length });
    this.#updates.pause();
    this.#operationUpdates.pause();
    this.ctx.loop.cancel(this.#registrationTimer);
    this.#pingWatch.stop();
    this.#containerizer.cancelShutdowns();
    for (const executor of this.executors()) {
      if (!executor.alive) continue;
      executor.agentLost();
      // A framework's executors outlive the agent only if it checkpoints.
      if (checkpointing.has(executor.frameworkId)) this.#orphans.push(executor);
      else this.#http.destroyWithAgent(executor);
    }
    this.cgroups.suspend();
    this.#disk = disk;
    this.#launches.clear();
    this.#frameworks = new Map();
    this.#latest = new Map();
    this.#updates = this.#newUpdateManager();
    this.#operationUpdates = this.#newOperationUpdates();
  }

  /**
   * Starts the process again from its checkpoint. `reconnect` (upstream's
   * default): the executors that outlived it subscribe again, and those
   * that have not within `--executor_reregistration_timeout` are destroyed;
   * then the agent re-registers, so no task reaches an executor still away. `cleanup`: it shuts down every executor it
   * finds (one that subscribes again gets SHUTDOWN at once; one still
   * there after the grace period is destroyed), then exits without
   * registering.
   */
  restart(recover: RecoverMode = 'reconnect'): void {
    const disk = this.#disk ?? { frameworks: [], updates: [], latest: new Map(), resources: this.#resources, operationUpdates: [] };
    this.#disk = undefined;
    this.#moveTo('registering');
    this.#reregisters = true;
    for (const info of disk.frameworks) this.#frameworks.set(info.id, { info, executors: new Map(), tasks: new Map(), completed: [], terminating: false });
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
    this.ctx.trace.append('agent:restart', { agentId: this.id, executors: this.#orphans.length, recover });
    const orphans = this.#orphans.filter((e) => e.alive);
    this.#orphans = [];
    this.cgroups.recover();
    // Simulated executors find the new process by themselves (their library retries), in either mode.
    for (const executor of orphans) this.ctx.network.send(this.id, executor.nodeId, { type: 'AGENT_RECONNECTED' });
    // A shutdown the crash cut short goes on: the grace period starts again.
    for (const executor of orphans) if (executor.state === 'terminating') this.#onShutdownExecutor(executor.frameworkId, executor.executorId);
    if (recover === 'cleanup') return this.#cleanup(orphans);
    // As upstream's: it registers once its executors have subscribed again, or the timeout has passed.
    const waiting = orphans.filter((e): e is HttpExecutor => e instanceof HttpExecutor);
    if (waiting.length > 0) this.#http.awaitReregistration(waiting, () => this.#register());
    else this.#register();
  }

  /** `--recover=cleanup`: every executor found is shut down; the agent exits when none is left. */
  #cleanup(orphans: readonly AgentExecutor[]): void {
    this.#cleaningUp = true;
    this.ctx.loop.cancel(this.#registrationTimer);
    for (const executor of orphans) this.#onShutdownExecutor(executor.frameworkId, executor.executorId);
    this.#exitIfCleanedUp();
  }

  #exitIfCleanedUp(): void {
    if (!this.#cleaningUp || this.executors().some((e) => e.alive)) return;
    this.#cleaningUp = false;
    this.ctx.trace.append('agent:cleanup-done', { agentId: this.id });
    this.crash();
  }

  #register(): void {
    if (this.#cleaningUp) return;
    const agent = this.#description();
    const held = { heads: this.#updates.heads(), latest: this.#latest, resourceVersion: this.#resources.version, frameworks: this.frameworks() };
    this.#toMaster(this.#reregisters ? reregistration(agent, this.executors(), held) : { type: 'REGISTER_AGENT', agent });
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
    else this.#fromExecutor(from, message as ExecutorToAgent);
  }

  #fromMaster(m: MasterToAgent): void {
    switch (m.type) {
      case 'AGENT_REGISTERED':
      case 'AGENT_REREGISTERED':
        return this.#onRegistered();
      case 'RUN_TASK':
        return this.#onRunTask(m.launchId, m.framework, m.task);
      case 'RUN_TASK_GROUP':
        return this.#onRunTaskGroup(m.launchId, m.framework, m.executor, m.tasks);
      case 'KILL_TASK':
        return this.#onKillTask(m.frameworkId, m.taskId, m.gracePeriodMs);
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
        this.#pingWatch.heard();
        if (!this.ctx.network.sendNow(this.id, MASTER_NODE, { type: 'PONG' })) this.#toMaster({ type: 'PONG' });
        return;
      case 'APPLY_OPERATION':
        this.#resources = applyOperation(this.ctx, this.id, this.#resources, m, this.#operationUpdates, this.#rng.hex(16));
        return;
      case 'OPERATION_STATUS_ACK':
        if (!this.#operationUpdates.acknowledge(m.operationUuid, m.statusUuid)) {
          this.ctx.trace.append('operation-update:ack-ignored', { agentId: this.id, operationUuid: m.operationUuid });
        }
        return;
    }
  }

  #fromExecutor(from: string, m: ExecutorToAgent): void {
    // A call that arrives after the agent has reaped its executor (delayed on the way) finds no executor, as
    // upstream's executor API answers 400 "Executor cannot be found": the agent has already ended its tasks.
    const executor = this.#frameworks.get(m.frameworkId)?.executors.get(m.executorId);
    if (executor?.nodeId !== from) {
      this.ctx.trace.append('executor:call-refused', { agentId: this.id, executorId: m.executorId, call: m.type, reason: 'Executor cannot be found' });
      return;
    }
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
    this.#pingWatch.heard();
    if (this.#state === 'active') return;
    this.#moveTo('active');
    this.cgroups.recover();
    this.#updates.resume();
    this.#operationUpdates.resume();
  }

  /**
   * As upstream's agent: a master that stops pinging (a partition) is taken
   * for lost, and the agent registers again, as often as it must.
   */
  #masterLost(): void {
    if (this.#state === 'active') this.#reregister('agent:master-lost');
  }

  /** The master detector names a new leader (upstream's ZooKeeper watch): a registered agent re-registers with it at once. */
  masterDetected(): void {
    if (this.#state === 'active') this.#reregister('agent:master-detected');
  }

  #reregister(event: string): void {
    this.ctx.trace.append(event, { agentId: this.id });
    this.#moveTo('registering');
    // As upstream's agent on detecting a master: nothing is sent until it has re-registered.
    this.#updates.pause();
    this.#operationUpdates.pause();
    this.#reregisters = true;
    this.#register();
  }

  /**
   * Whether a launch must not run: the agent is not registered, or it has
   * run the task already (a RUN_TASK the network repeated).
   */
  #refuseRun(frameworkId: string, taskIds: readonly string[], launchId: string): boolean {
    if (this.#state !== 'active') {
      // A launch that crossed a restart: the master, on re-registration,
      // reconciles the task as lost, so running it would contradict that.
      this.ctx.trace.append('agent:run-dropped', { agentId: this.id, frameworkId, tasks: taskIds });
      return true;
    }
    const fw = this.#frameworks.get(frameworkId);
    const seen = this.#launches.has(launchId) ? taskIds[0] : taskIds.find((id) => fw?.tasks.has(id) === true);
    if (seen !== undefined) this.ctx.trace.append('agent:run-repeated', { agentId: this.id, frameworkId, taskId: seen });
    else remember(this.#launches, launchId);
    return seen !== undefined;
  }

  #onRunTask(launchId: string, framework: FrameworkRef, task: TaskSpec): void {
    if (this.#refuseRun(framework.id, [task.taskId], launchId)) return;
    const kind: ExecutorKind = task.executor === undefined ? 'command' : 'custom';
    const executorId = task.executor?.executorId ?? task.taskId;
    const executor = this.#executorFor(framework, executorId, kind, task.executor);
    this.#frameworks.get(framework.id)!.tasks.set(task.taskId, executor);
    this.ctx.network.send(this.id, executor.nodeId, { type: 'LAUNCH', task });
  }

  #onRunTaskGroup(launchId: string, framework: FrameworkRef, executorSpec: ExecutorSpec, tasks: readonly TaskSpec[]): void {
    if (this.#refuseRun(framework.id, tasks.map((t) => t.taskId), launchId)) return;
    const executor = this.#executorFor(framework, executorSpec.executorId, 'default');
    for (const task of tasks) this.#frameworks.get(framework.id)!.tasks.set(task.taskId, executor);
    this.ctx.network.send(this.id, executor.nodeId, { type: 'LAUNCH_GROUP', tasks });
  }

  /** Forwards a kill to the task's executor, with the kill policy's grace period: the call's, else the task's. */
  #onKillTask(frameworkId: string, taskId: string, callGracePeriodMs: number | undefined): void {
    const executor = this.executorOfTask(frameworkId, taskId);
    if (executor !== undefined) {
      const gracePeriodMs = callGracePeriodMs ?? executor.tasks.get(taskId)?.spec.killGracePeriodMs;
      this.ctx.network.send(this.id, executor.nodeId, { type: 'KILL', taskId, ...(gracePeriodMs === undefined ? {} : { gracePeriodMs }) });
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
    if (executor !== undefined) this.#containerizer.shutdown(executor);
  }

  #onShutdownFramework(frameworkId: string): void {
    const fw = this.#frameworks.get(frameworkId);
    if (fw === undefined || fw.terminating) return;
    fw.terminating = true;
    for (const executor of fw.executors.values()) this.#onShutdownExecutor(frameworkId, executor.executorId);
    this.#updates.removeFramework(frameworkId);
    forgetIfDone(this.#frameworks, fw);
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

  exited(executor: AgentExecutor, waitStatus: number): void {
    this.ctx.network.detach(executor.nodeId);
    this.cgroups.remove(executor);
    if (this.#state === 'crashed') {
      this.#orphans = this.#orphans.filter((e) => e !== executor);
      return;
    }
    executor.exitStatus = waitStatus;
    this.nested?.parentEnded(executor.containerId, waitStatus);
    // Tasks its process left running end with it, as upstream's agent reports them: as far as the agent
    // knows (an update of the executor's still on the way is refused when it arrives).
    for (const task of executor.unended()) {
      this.#emit(executor.frameworkId, task.spec.taskId, executor, 'TASK_FAILED', 'Executor terminated', 'REASON_EXECUTOR_TERMINATED');
      task.state = 'TASK_FAILED';
    }
    this.#containerizer.cancelShutdown(executor);
    this.ctx.trace.append('executor:exit', { agentId: this.id, executorId: executor.executorId, waitStatus });
    const fw = this.#frameworks.get(executor.frameworkId);
    if (fw !== undefined) recordExit(fw, executor);
    const command = executor.kind === 'command';
    for (const task of executor.tasks.values()) this.#updates.keepEnded(executor.frameworkId, { spec: task.spec, executorId: executor.executorId, command });
    if (fw !== undefined) forgetIfDone(this.#frameworks, fw);
    // The command executor is an implementation detail; upstream reports only the others.
    if (executor.kind !== 'command') {
      this.#toMaster({ type: 'EXITED_EXECUTOR', agentId: this.id, frameworkId: executor.frameworkId, executorId: executor.executorId, waitStatus });
    }
    this.#exitIfCleanedUp();
  }

  // ---- internals ----

  #executorFor(framework: FrameworkRef, executorId: string, kind: ExecutorKind, spec?: ExecutorSpec): AgentExecutor {
    const fw = frameworkEntry(this.#frameworks, framework);
    // A task for a framework shut down here (on an agent back from a partition): the master still runs it, so it runs again.
    fw.terminating = false;
    let executor = fw.executors.get(executorId);
    if (executor === undefined || !executor.alive) fw.executors.set(executorId, (executor = this.#containerizer.launch(framework, executorId, kind, spec)));
    return executor;
  }

  // ---- inputs from executor processes ----

  /** SUBSCRIBE on a new stream. */
  executorSubscribe(connectionId: string, envelope: ExecutorCallEnvelope, authorize?: ExecutorAuthorizer): Outcome {
    return this.#http.subscribe(connectionId, envelope, authorize);
  }

  /** UPDATE or MESSAGE. */
  executorCall(envelope: ExecutorCallEnvelope, authorize?: ExecutorAuthorizer): Outcome {
    return this.#http.call(envelope, authorize);
  }

  /** An executor's stream closed; true if it was one of this agent's. */
  executorDisconnected(connectionId: string): boolean {
    const executor = this.#containerizer.byConnection(connectionId);
    executor?.disconnected(connectionId);
    return executor !== undefined;
  }

  /** The process of an executor's container exited (spawn mode), with its wait(2) status. */
  containerExited(containerId: string, waitStatus: number): void {
    this.#containerizer.exited(containerId, waitStatus);
  }

  /** The host could not start the process of an executor's container (spawn mode), for the reason given. */
  containerLaunchFailed(containerId: string, message: string): void {
    this.#containerizer.launchFailed(containerId, message);
  }

  /** The executor's process dies (SIGKILL); its live tasks fail as an executor's termination. */
  killExecutor(executor: AgentExecutor): void {
    this.#containerizer.kill(executor);
  }

  /** The process of the executor running a task, if the agent runs it. */
  executorOfTask(frameworkId: string, taskId: string): AgentExecutor | undefined {
    const executor = this.#frameworks.get(frameworkId)?.tasks.get(taskId);
    return executor?.alive === true ? executor : undefined;
  }

  /** An update the agent makes itself (not its executors'). */
  #emit(frameworkId: string, taskId: string, executor: AgentExecutor | undefined, state: TaskState, message: string, reason: StatusReason, limitation?: Resources): void {
    this.#take(frameworkId, {
      ...(limitation === undefined ? {} : { limitation }),
      taskId,
      state,
      source: 'SOURCE_AGENT',
      reason,
      message,
      agentId: this.id,
      ...(executor === undefined ? {} : { executorId: executor.executorId, containerId: executor.containerId }),
      timestampMs: wallTimeMs(this.ctx),
      uuid: this.#rng.hex(16),
    });
  }

  /** Takes an update into the status update manager, unless it has it already (then false). */
  #take(frameworkId: string, status: TaskStatus): boolean {
    if (this.#frameworks.get(frameworkId)?.terminating !== false) return false;
    const key = streamKey(frameworkId, status.taskId);
    // Set before queueing: the manager may forward at once, with the latest state.
    const before = this.#latest.get(key);
    this.#latest.set(key, status.state);
    if (this.#updates.update(frameworkId, status, key)) {
      const task = this.#frameworks.get(frameworkId)?.tasks.get(status.taskId)?.tasks.get(status.taskId);
      if (task instanceof SimTask) task.reported = status.state;
      this.cgroups.observe(frameworkId, status);
      return true;
    }
    if (before === undefined) this.#latest.delete(key);
    else this.#latest.set(key, before);
    return false;
  }

  #newUpdateManager(): StatusUpdateManager {
    return new StatusUpdateManager(this.ctx, (frameworkId, status, key) => {
      const latestState = this.#latest.get(key) ?? status.state;
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
}
