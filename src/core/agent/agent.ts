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
 * survives (checkpoint.ts): its checkpointed resources (reservations and
 * volumes made by operations, and the unacknowledged status updates of
 * those operations), the checkpoint of its checkpointing frameworks
 * (their info and their unacknowledged status updates); their executors keep running
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
import type { TaskStatus } from '../model/types.js';
import { AgentCgroups } from './cgroups.js';
import { AgentCounters, appendStatus } from './counters.js';
import { Containerizer } from './containerizer.js';
import { SimTask, type ExecutorHost, type SimExecutor } from './executor.js';
import { HttpExecutor } from './http-executor.js';
import { HttpExecutors } from './http-executors.js';
import { NestedContainers } from './nested-containers.js';
import { launchTtyTask } from './tty-tasks.js';
import { PingWatch } from './ping-watch.js';
import { collectLater, type SandboxSettings } from './sandboxes.js';
import { MASTER_PING_TIMEOUT_MS, REGISTRATION_RETRY_MS, type AgentConfig } from './flags.js';
import { forgetIfDone, recordExit, type AgentExecutor, type AgentFramework } from './frameworks.js';
import { ResourceOperations } from './operation-updates.js';
import { reregistration } from './reports.js';
import { MasterOrders } from './master-orders.js';
import { TaskUpdates } from './task-updates.js';
import { adoptOrphans, emptyCheckpoint, frameworksOf, writeCheckpoint, type Checkpoint } from './checkpoint.js';

export type AgentState = 'registering' | 'active' | 'crashed';

const AGENT_PROCESS_NEXT: Readonly<Record<AgentState, readonly AgentState[]>> = {
  registering: ['active', 'crashed'],
  active: ['active', 'crashed', 'registering'],
  crashed: ['registering'],
};

export class Agent implements SimNode, ExecutorHost {
  #state: AgentState = 'registering';
  #frameworks = new Map<string, AgentFramework>();
  /** Frameworks shut down and gone, the newest kept, for its endpoints (in memory only, as upstream's). */
  #completedFrameworks: AgentFramework[] = [];
  readonly #updates: TaskUpdates;
  readonly #orders: MasterOrders;
  readonly #rng: Rng;
  #registrationTimer: TimerId | undefined;
  /** Fires when the master has not pinged for too long. */
  readonly #pingWatch: PingWatch;
  /** Executor processes that outlived a crash, until the agent is back. */
  #orphans: AgentExecutor[] = [];
  /** `--recover=cleanup`: the agent kills what it finds, then exits once its executors have. */
  #cleaningUp = false;
  /** The checkpoint, read back on restart. */
  #disk: Checkpoint | undefined;
  /** Registered before (it restarted, or lost its master): it re-registers with what it runs. */
  #reregisters = false;
  /** Its resources as operations changed them, and the operations' status updates. */
  readonly #operations: ResourceOperations;
  /** The hand for executors that run outside the core. */
  #httpExecutors: HttpExecutors | undefined;
  /** Containers launched inside its executors' (task exec sessions); set on first use, by the cluster. */
  nested: NestedContainers | undefined;
  /** Its containers' memory cgroups. */
  readonly cgroups: AgentCgroups;
  readonly #containerizer: Containerizer;
  /** What the process counted since it started, for its metrics. */
  readonly counters = new AgentCounters();

  constructor(
    private readonly ctx: SimContext,
    readonly config: AgentConfig,
    readonly outbox: Outbox,
    /** Where its executors' sandboxes are, their bounds, and how long they outlive their executors. */
    readonly sandboxes: SandboxSettings,
  ) {
    this.#rng = ctx.rng.fork(`agent/${config.id}`);
    this.counters.reset(wallTimeMs(ctx));
    this.#pingWatch = new PingWatch(ctx.loop, ctx.network, config.id, MASTER_PING_TIMEOUT_MS, () => this.#masterLost());
    this.#updates = new TaskUpdates({
      ctx,
      agentId: config.id,
      rng: this.#rng,
      accepts: (frameworkId) => this.#frameworks.get(frameworkId)?.terminating === false,
      executor: (frameworkId, executorId) => this.#frameworks.get(frameworkId)?.executors.get(executorId),
      taken: (frameworkId, status) => this.#taken(frameworkId, status),
      refused: () => this.counters.invalidStatusUpdates++,
      toMaster: (message) => this.#toMaster(message),
    });
    this.#operations = new ResourceOperations(ctx, config.id, config.resources, (message) => this.#toMaster(message));
    const executorOf = (frameworkId: string, taskId: string) => this.executorOfTask(frameworkId, taskId);
    this.cgroups = new AgentCgroups(
      ctx,
      config,
      () => this.executors(),
      executorOf,
      (executor, message, limitation) =>
        this.#http.terminate(executor, 'TASK_FAILED', message, 'REASON_CONTAINER_LIMITATION_MEMORY', limitation),
    );
    const all = () => [...this.executors(), ...this.#orphans];
    this.#containerizer = new Containerizer({
      ctx,
      config,
      host: this,
      http: () => this.#http,
      all,
      containerId: () => this.#rng.uuid(),
      sandboxes,
    });
    this.#orders = new MasterOrders({
      ctx,
      agentId: config.id,
      updates: this.#updates,
      containerizer: this.#containerizer,
      active: () => this.#state === 'active',
      frameworks: () => this.#frameworks,
      completedFrameworks: () => this.#completedFrameworks,
      executorOfTask: (frameworkId, taskId) => this.executorOfTask(frameworkId, taskId),
    });
  }

  /** Made on first use: most agents never run an executor outside the core, and a large cluster has many agents. */
  get #http(): HttpExecutors {
    this.#httpExecutors ??= new HttpExecutors({
      ctx: this.ctx,
      config: this.config,
      outbox: this.outbox,
      up: () => this.#state !== 'crashed',
      resources: () => this.#operations.resources.total,
      framework: (frameworkId) => this.#frameworks.get(frameworkId),
      emit: (frameworkId, taskId, executor, state, message, reason, limitation) =>
        this.#updates.emit(frameworkId, taskId, executor, state, message, reason, limitation),
      take: (frameworkId, status) => this.#updates.take(frameworkId, status),
      exited: (executor, waitStatus) => this.exited(executor, waitStatus),
      toMaster: (message) => this.#toMaster(message),
    });
    return this.#httpExecutors;
  }

  /** The agent's total: its resources flag, changed by the operations applied since. */
  get resources(): Resources {
    return this.#operations.resources.total;
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

  /** The frameworks it shut down and forgot, oldest first, each with its exited executors. */
  completedFrameworks(): readonly AgentFramework[] {
    return this.#completedFrameworks;
  }

  /** The frameworks the agent knows, in the order it learnt of them. */
  frameworks(): FrameworkRef[] {
    return [...this.#frameworks.values()].map((f) => f.info);
  }

  pendingUpdates(): number {
    return this.#updates.size;
  }

  pendingOperationUpdates(): number {
    return this.#operations.pending;
  }

  /** Starts the agent process: it registers with the master. */
  start(): void {
    this.#register();
  }

  // ---- lifecycle ----

  crash(): void {
    const { disk, checkpointing } = writeCheckpoint(this.#frameworks, this.#updates, this.#operations);
    this.#moveTo('crashed');
    this.nested?.clear();
    this.#httpExecutors?.agentLost();
    this.ctx.trace.append('agent:crash', { agentId: this.id, checkpointed: disk.frameworks.length });
    this.#updates.pause();
    this.#operations.pause();
    this.ctx.loop.cancel(this.#registrationTimer);
    this.#pingWatch.stop();
    this.#containerizer.cancelShutdowns();
    for (const executor of this.executors()) {
      if (!executor.alive) continue;
      executor.agentLost();
      // A framework's executors outlive the agent only if it checkpoints.
      if (checkpointing.has(executor.frameworkId)) this.#orphans.push(executor);
      else {
        this.#http.destroyWithAgent(executor);
        this.#collectLater(executor);
      }
    }
    this.cgroups.suspend();
    this.#disk = disk;
    this.#orders.lost();
    this.#frameworks = new Map();
    this.#completedFrameworks = [];
    this.#updates.lost();
    this.#operations.lost();
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
    const disk = this.#disk ?? emptyCheckpoint(this.#operations);
    this.#disk = undefined;
    this.#moveTo('registering');
    this.counters.reset(wallTimeMs(this.ctx));
    this.#reregisters = true;
    this.#frameworks = frameworksOf(disk);
    this.#updates.recover(disk);
    this.#operations.recover(disk);
    adoptOrphans(this.#frameworks, this.#orphans);
    this.ctx.trace.append('agent:restart', { agentId: this.id, executors: this.#orphans.length, recover });
    const orphans = this.#orphans.filter((e) => e.alive);
    this.#orphans = [];
    this.cgroups.recover();
    // Simulated executors find the new process by themselves (their library retries), in either mode.
    for (const executor of orphans) this.ctx.network.send(this.id, executor.nodeId, { type: 'AGENT_RECONNECTED' });
    // A shutdown the crash cut short goes on: the grace period starts again.
    for (const executor of orphans)
      if (executor.state === 'terminating') this.#orders.shutdownExecutor(executor.frameworkId, executor.executorId);
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
    for (const executor of orphans) this.#orders.shutdownExecutor(executor.frameworkId, executor.executorId);
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
    const held = {
      heads: this.#updates.heads(),
      resourceVersion: this.#operations.resources.version,
      frameworks: this.frameworks(),
    };
    this.#toMaster(
      this.#reregisters ? reregistration(agent, this.executors(), held) : { type: 'REGISTER_AGENT', agent },
    );
    this.#registrationTimer = this.ctx.loop.schedule(REGISTRATION_RETRY_MS, 'agent:register-retry', () =>
      this.#register(),
    );
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
    else this.#updates.fromExecutor(from, message as ExecutorToAgent);
  }

  #fromMaster(m: MasterToAgent): void {
    switch (m.type) {
      case 'AGENT_REGISTERED':
      case 'AGENT_REREGISTERED':
        return this.#onRegistered();
      case 'RUN_TASK':
        return this.#orders.runTask(m.launchId, m.framework, m.task);
      case 'RUN_TASK_GROUP':
        return this.#orders.runTaskGroup(m.launchId, m.framework, m.executor, m.tasks);
      case 'KILL_TASK':
        return this.#orders.killTask(m.frameworkId, m.taskId, m.gracePeriodMs);
      case 'SHUTDOWN_EXECUTOR':
        return this.#orders.shutdownExecutor(m.frameworkId, m.executorId);
      case 'SHUTDOWN_FRAMEWORK':
        return this.#orders.shutdownFramework(m.frameworkId);
      case 'SHUTDOWN_AGENT':
        this.ctx.trace.append('agent:shutdown', { agentId: this.id, message: m.message });
        for (const frameworkId of [...this.#frameworks.keys()]) this.#orders.shutdownFramework(frameworkId);
        return;
      case 'STATUS_UPDATE_ACK':
        return this.#orders.acknowledge(m.frameworkId, m.taskId, m.uuid);
      case 'FRAMEWORK_TO_EXECUTOR':
        return this.counters.frameworkMessage(this.#orders.frameworkMessage(m.frameworkId, m.executorId, m.data));
      case 'PING':
        this.#pingWatch.heard();
        if (!this.ctx.network.sendNow(this.id, MASTER_NODE, { type: 'PONG' })) this.#toMaster({ type: 'PONG' });
        return;
      case 'APPLY_OPERATION':
        return this.#operations.apply(m, this.#rng.hex(16));
      case 'OPERATION_STATUS_ACK':
        return this.#operations.acknowledge(m.operationUuid, m.statusUuid);
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
    this.#operations.resume();
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
    this.#operations.pause();
    this.#reregisters = true;
    this.#register();
  }

  // ---- ExecutorHost ----

  /** A command task launched with a TTY: its process runs in the small shell in its executor's container, attachable. */
  runTty(executor: SimExecutor, task: SimTask): boolean {
    this.nested ??= new NestedContainers(this.ctx, this.outbox);
    return launchTtyTask(this, this.nested, executor, task);
  }

  exited(executor: AgentExecutor, waitStatus: number): void {
    this.#collectLater(executor);
    this.ctx.network.detach(executor.nodeId);
    this.cgroups.remove(executor);
    if (this.#state === 'crashed') {
      this.#orphans = this.#orphans.filter((e) => e !== executor);
      return;
    }
    executor.exitStatus = waitStatus;
    this.nested?.parentEnded(executor.containerId, waitStatus);
    this.#updates.failUnended(executor);
    this.#containerizer.cancelShutdown(executor);
    this.ctx.trace.append('executor:exit', { agentId: this.id, executorId: executor.executorId, waitStatus });
    this.counters.executorsTerminated++;
    const fw = this.#frameworks.get(executor.frameworkId);
    if (fw !== undefined) recordExit(fw, executor);
    this.#updates.keepAllEnded(executor);
    if (fw !== undefined) forgetIfDone(this.#frameworks, fw, this.#completedFrameworks);
    // The command executor is an implementation detail; upstream reports only the others.
    if (executor.kind !== 'command') {
      this.#toMaster({
        type: 'EXITED_EXECUTOR',
        agentId: this.id,
        frameworkId: executor.frameworkId,
        executorId: executor.executorId,
        waitStatus,
      });
    }
    this.#exitIfCleanedUp();
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
    this.counters.containerLaunchErrors++;
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

  /** An update was taken: its task and its container learn the state. */
  #taken(frameworkId: string, status: TaskStatus): void {
    const task = this.#frameworks.get(frameworkId)?.tasks.get(status.taskId)?.tasks.get(status.taskId);
    this.counters.statusTaken(status);
    if (task !== undefined) task.statuses = appendStatus(task.statuses, status);
    if (task instanceof SimTask) task.reported = status.state;
    this.cgroups.observe(frameworkId, status);
  }

  /** Its sandbox goes once the gc delay is over. */
  #collectLater(executor: AgentExecutor): void {
    const { sandbox, containerId } = executor;
    const spawned = executor instanceof HttpExecutor && executor.spawned;
    collectLater(this.ctx, this.outbox, this.sandboxes, { sandbox, containerId, spawned }, this.id);
  }

  #toMaster(message: AgentToMaster): void {
    this.ctx.network.send(this.id, MASTER_NODE, message);
  }

  #description(): AgentDescription {
    const { id: agentId, hostname, ip, port, attributes } = this.config;
    return { agentId, hostname, ip, port, resources: this.#operations.resources.total, attributes };
  }
}
