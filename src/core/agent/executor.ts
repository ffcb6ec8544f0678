/**
 * Simulated executors: nodes of their own, on their agent's host, that talk
 * to the agent only through messages. Three kinds, as on a real agent:
 *
 *   command  one per command task (TaskInfo.command); exits when its task ends
 *   default  runs task groups (LAUNCH_GROUP); killing one task of a group
 *            kills the whole group; exits when it has no live task left
 *   custom   the framework's own ExecutorInfo; stays up until shut down
 *
 * Each task follows its plan (see behaviour.ts). Every update carries a
 * uuid of the executor's own and stays unacknowledged until the agent says
 * ACKNOWLEDGED; after an agent restart the executor subscribes again with
 * them, as the executor library does. A simulated process dies on SIGTERM
 * at once, so a kill ends in TASK_KILLED right away, after TASK_KILLING for
 * frameworks with the TASK_KILLING_STATE capability.
 *
 * Lifecycle:  running --SHUTDOWN--> terminating --exit--> terminated
 *             running --exit (tasks done, or destroyed)--> terminated
 */
import { planFor, type TaskPlan } from '../process/behaviour.js';
import { applyWrites, type Sandbox } from '../process/sandbox.js';
import { wallTimeMs, type SimContext } from '../network/context.js';
import type { TimerId } from '../kernel/event-loop.js';
import type { AgentToExecutor, Message, SimNode } from '../model/messages.js';
import type { RngStream } from '../kernel/rng.js';
import { pushed, SmallMap } from '../kernel/small-map.js';
import { isTerminal, transition } from '../model/task-state.js';
import type { StatusReason, TaskSpec, TaskState, TaskStatus } from '../model/types.js';

export type ExecutorKind = 'command' | 'default' | 'custom';

/** Why a DOCKER task cannot start on an agent without the container engine. */
const NO_ENGINE_MESSAGE =
  "Failed to launch container: no containerizer of this agent supports ContainerInfo type 'DOCKER' (--containerizers)";

/** The grace period of a kill without a kill policy, as upstream's command and default executors use. */
export const DEFAULT_KILL_GRACE_MS = 3_000;
export type ExecutorState = 'running' | 'terminating' | 'terminated';

const EXECUTOR_NEXT: Readonly<Record<ExecutorState, readonly ExecutorState[]>> = {
  running: ['terminating', 'terminated'],
  terminating: ['terminated'],
  terminated: [],
};

/** What the executor's host (the agent's containerizer) learns without a message: its exit. */
export interface ExecutorHost {
  exited(executor: SimExecutor, waitStatus: number): void;
  /**
   * Runs a command task launched with a TTY as a process of the small
   * shell in the executor's container, which ATTACH_CONTAINER_OUTPUT and
   * ATTACH_CONTAINER_INPUT reach; false where it cannot (the plan runs it).
   */
  runTty?(executor: SimExecutor, task: SimTask): boolean;
}

/**
 * A task the executor runs. It is its own run timer's action: when the
 * plan's time is up, its process exits with the plan's code (a record
 * rather than a closure per task).
 */
export class SimTask {
  state: TaskState = 'TASK_STAGING';
  /**
   * The newest state its agent has taken: behind `state` while the
   * executor's updates are on the way (a delayed link, a dropped message).
   */
  reported: TaskState = 'TASK_STAGING';
  /** The end of its run, when its plan ends by itself. */
  timer: TimerId | undefined = undefined;
  /** Running out the grace period of a kill it ignored. */
  killTimer: TimerId | undefined = undefined;
  /** It stopped progressing (a fault): it never ends by itself, and a kill waits out its grace period. */
  hung: boolean | undefined = undefined;
  /** The updates its agent took, oldest first (counters.ts, appendStatus). */
  statuses: TaskStatus[] = [];

  constructor(
    readonly spec: TaskSpec,
    readonly groupId: number,
    readonly plan: TaskPlan,
    private readonly executor: SimExecutor,
  ) {}

  onTimer(): void {
    if (this.plan.kind === 'exits') this.executor.taskRanOut(this, this.plan.exitCode);
  }
}

export interface ExecutorIdentity {
  readonly agentId: string;
  readonly executorId: string;
  readonly frameworkId: string;
  readonly kind: ExecutorKind;
  readonly containerId: string;
  readonly killingCapable: boolean;
  /** Whether its agent runs the container engine (`--containerizers` with docker): DOCKER tasks need it. */
  readonly engine?: boolean;
}

/** What every executor record has: who it is, its node id on the network (`executor:<containerId>`) and its sandbox. */
export abstract class ExecutorIdentified<T extends { readonly state: TaskState }> {
  readonly nodeId: string;
  /** Its tasks by id, in launch order (mostly one: a small map). */
  readonly tasks = new SmallMap<string, T>();
  /** Its wait(2) status, once its agent has seen it exit. */
  exitStatus: number | undefined;

  constructor(
    readonly id: ExecutorIdentity,
    /** Its container's sandbox: what its tasks write, and what the files API reads. */
    readonly sandbox: Sandbox,
  ) {
    this.nodeId = `executor:${id.containerId}`;
  }

  get executorId(): string {
    return this.id.executorId;
  }

  get frameworkId(): string {
    return this.id.frameworkId;
  }

  get kind(): ExecutorKind {
    return this.id.kind;
  }

  get containerId(): string {
    return this.id.containerId;
  }

  liveTasks(): T[] {
    return [...this.tasks.values()].filter((t) => !isTerminal(t.state));
  }

  /** The tasks its agent has not seen end: those it ends itself when the executor exits. */
  abstract unended(): T[];
}

export class SimExecutor extends ExecutorIdentified<SimTask> implements SimNode {
  #state: ExecutorState = 'running';
  #lastExitCode = 0;
  #groups = 0;
  /** Updates sent and not acknowledged yet, oldest first; none kept while there are none. */
  #unacknowledged: TaskStatus[] | undefined;
  readonly #rng: RngStream;
  /** An exit waiting for the agent to come back and take the updates. */
  #exitDeferred = false;
  #agentUp = true;

  constructor(
    private readonly ctx: SimContext,
    private readonly host: ExecutorHost,
    id: ExecutorIdentity,
    sandbox: Sandbox,
  ) {
    super(id, sandbox);
    this.#rng = ctx.rng.stream(`executor/${id.containerId}`);
  }

  get alive(): boolean {
    return this.#state !== 'terminated';
  }

  unended(): SimTask[] {
    return [...this.tasks.values()].filter((t) => !isTerminal(t.reported));
  }

  get state(): ExecutorState {
    return this.#state;
  }

  receive(_from: string, message: Message): void {
    if (!this.alive) return;
    const m = message as AgentToExecutor;
    switch (m.type) {
      case 'LAUNCH':
        return this.#launch([m.task]);
      case 'LAUNCH_GROUP':
        return this.#launch(m.tasks);
      case 'KILL':
        return this.#killTask(m.taskId, m.gracePeriodMs);
      case 'SHUTDOWN':
        return this.#shutdown();
      case 'ACKNOWLEDGED':
        return this.#acknowledged(m.uuid);
      case 'FRAMEWORK_MESSAGE':
        this.ctx.trace.append('executor:message', { executorId: this.executorId, bytes: m.data.length });
        return;
      case 'AGENT_RECONNECTED':
        return this.#resubscribe();
    }
  }

  /** The agent's process went away; the executor keeps running (it checkpoints). */
  agentLost(): void {
    this.#agentUp = false;
  }

  /** Killed with its container (agent crash without checkpointing, grace expiry): no more updates. */
  destroy(): void {
    if (!this.alive) return;
    for (const task of this.tasks.values()) {
      this.ctx.loop.cancel(task.timer);
      this.ctx.loop.cancel(task.killTimer);
    }
    this.#moveTo('terminated');
  }

  /** Whether the task runs here and has not ended. */
  runs(taskId: string): boolean {
    const task = this.tasks.get(taskId);
    return task !== undefined && !isTerminal(task.state);
  }

  /** The task's process exits now with `exitCode` (a fault), if it `runs`. */
  failTask(taskId: string, exitCode: number, message?: string): void {
    const task = this.tasks.get(taskId);
    if (task === undefined) return;
    this.ctx.loop.cancel(task.timer);
    this.ctx.loop.cancel(task.killTimer);
    this.#finish(task, exitCode, message);
  }

  /** The task stops progressing (a fault), if it `runs`. */
  hangTask(taskId: string): void {
    const task = this.tasks.get(taskId);
    if (task === undefined) return;
    this.ctx.loop.cancel(task.timer);
    task.hung = true;
  }

  /** Starts a group of tasks (a single task for LAUNCH); a task it already runs is ignored. */
  #launch(specs: readonly TaskSpec[]): void {
    const fresh = specs.filter((s) => !this.tasks.has(s.taskId));
    if (fresh.length === 0) return;
    const groupId = ++this.#groups;
    for (const spec of fresh) {
      const plan = planFor(spec.command ?? (this.kind === 'custom' ? undefined : spec.executor?.command));
      const task = new SimTask(spec, groupId, plan, this);
      this.tasks.set(spec.taskId, task);
      if (spec.engine !== undefined && this.id.engine === false) {
        // No containerizer of the agent's can launch a DOCKER container: its launch fails, as upstream's does.
        this.#set(task, 'TASK_FAILED', NO_ENGINE_MESSAGE, 'REASON_CONTAINER_LAUNCH_FAILED', 'SOURCE_AGENT');
        this.#maybeExit();
        continue;
      }
      this.#set(task, 'TASK_STARTING');
      this.#set(task, 'TASK_RUNNING');
      const tty = spec.tty === true && this.kind === 'command' && this.host.runTty?.(this, task) === true;
      // A TTY task's process writes as it runs, in the shell; a planned one leaves its writes as it starts.
      if (!tty) applyWrites(this.sandbox, plan.writes, wallTimeMs(this.ctx));
      if (!tty && plan.kind === 'exits') task.timer = this.ctx.loop.schedule(plan.runMs, 'task:exit', task);
    }
  }

  /** The task's run timer: its plan's time is up, and its process exits with `exitCode`. */
  taskRanOut(task: SimTask, exitCode: number): void {
    this.#finish(task, exitCode);
  }

  /**
   * Kills a task; for the default executor, its whole group. SIGTERM ends
   * a simulated task at once, unless it ignores SIGTERM: then it is
   * killing until the kill policy's grace period (the KILL's, else the
   * task's, else 3 s as upstream's executors) is over, and SIGKILL ends it.
   */
  #killTask(taskId: string, gracePeriodMs: number | undefined): void {
    const task = this.tasks.get(taskId);
    if (task === undefined || isTerminal(task.state)) return;
    const victims = this.kind === 'default' ? this.liveTasks().filter((t) => t.groupId === task.groupId) : [task];
    for (const victim of victims) {
      if (victim.plan.ignoresTerm !== true && victim.hung !== true) this.#kill(victim);
      else if (victim.state !== 'TASK_KILLING' || !this.id.killingCapable)
        this.#killAfterGrace(victim, gracePeriodMs ?? victim.spec.killGracePeriodMs ?? DEFAULT_KILL_GRACE_MS);
    }
    this.#maybeExit();
  }

  #killAfterGrace(task: SimTask, graceMs: number): void {
    if (task.killTimer !== undefined) return;
    if (this.id.killingCapable) this.#set(task, 'TASK_KILLING');
    task.killTimer = this.ctx.loop.schedule(graceMs, 'task:kill-grace', () => {
      if (isTerminal(task.state)) return;
      this.ctx.loop.cancel(task.timer);
      this.#set(task, 'TASK_KILLED', 'Command terminated with signal Killed');
      this.#maybeExit();
    });
  }

  /** Kills every task, then exits. */
  #shutdown(): void {
    if (this.#state !== 'running') return;
    this.#moveTo('terminating');
    for (const task of this.liveTasks()) this.#kill(task);
    this.#lastExitCode = 15;
    this.#exit();
  }

  #kill(task: SimTask): void {
    this.ctx.loop.cancel(task.timer);
    this.ctx.loop.cancel(task.killTimer);
    if (this.id.killingCapable && task.state !== 'TASK_KILLING') this.#set(task, 'TASK_KILLING');
    this.#set(task, 'TASK_KILLED', 'Command terminated with signal Terminated');
  }

  #finish(task: SimTask, exitCode: number, message = `Command exited with status ${exitCode}`): void {
    if (isTerminal(task.state)) return;
    this.#lastExitCode = exitCode;
    if (exitCode === 0) this.#set(task, 'TASK_FINISHED', message);
    else this.#set(task, 'TASK_FAILED', message);
    this.#maybeExit();
  }

  #set(
    task: SimTask,
    state: TaskState,
    message?: string,
    reason?: StatusReason,
    source: TaskStatus['source'] = 'SOURCE_EXECUTOR',
  ): void {
    const { taskId } = task.spec;
    task.state = transition(taskId, task.state, state);
    const { agentId, executorId, containerId } = this.id;
    const timestampMs = wallTimeMs(this.ctx);
    const uuid = this.#rng.hex(16);
    // One literal per shape, fields in the one order (a reason comes only with a message): no spreads, no out-of-object fields.
    const status: TaskStatus =
      message === undefined
        ? { taskId, state, source, agentId, executorId, containerId, timestampMs, uuid }
        : reason === undefined
          ? { taskId, state, source, message, agentId, executorId, containerId, timestampMs, uuid }
          : { taskId, state, source, reason, message, agentId, executorId, containerId, timestampMs, uuid };
    this.#unacknowledged = pushed(this.#unacknowledged ?? [], status);
    this.ctx.network.send(this.nodeId, this.id.agentId, {
      type: 'EXECUTOR_UPDATE',
      frameworkId: this.frameworkId,
      executorId: this.executorId,
      status,
    });
  }

  /** The agent took the update: it is no longer the executor's to hand over (acknowledgements come mostly oldest first). */
  #acknowledged(uuid: string): void {
    const pending = this.#unacknowledged;
    const i = pending?.findIndex((s) => s.uuid === uuid) ?? -1;
    if (i < 0) return;
    pending!.splice(i, 1);
    if (pending!.length === 0) this.#unacknowledged = undefined;
  }

  #resubscribe(): void {
    this.#agentUp = true;
    this.ctx.network.send(this.nodeId, this.id.agentId, {
      type: 'EXECUTOR_SUBSCRIBE',
      frameworkId: this.frameworkId,
      executorId: this.executorId,
      unacknowledged: [...(this.#unacknowledged ?? [])],
    });
    if (this.#exitDeferred) this.#exit();
  }

  #maybeExit(): void {
    if (this.kind !== 'custom' && this.liveTasks().length === 0) this.#exit();
  }

  /**
   * Ends the process. While its agent is down, an executor with updates
   * not yet acknowledged waits for the agent (the executor library does
   * not give up on them), and exits once it has handed them over.
   */
  #exit(): void {
    if (!this.alive) return;
    if (!this.#agentUp && this.#unacknowledged !== undefined) {
      this.#exitDeferred = true;
      return;
    }
    this.#moveTo('terminated');
    // A wait(2) status: the exit code in the high byte, or the signal number.
    const status = this.#lastExitCode === 15 ? 15 : (this.#lastExitCode & 0xff) << 8;
    // The containerizer reaps the process after its last writes have left.
    this.ctx.loop.schedule(0, 'executor:reap', () => this.host.exited(this, status));
  }

  #moveTo(next: ExecutorState): void {
    if (!EXECUTOR_NEXT[this.#state].includes(next)) {
      throw new Error(`executor '${this.executorId}': illegal transition ${this.#state} -> ${next}`);
    }
    this.#state = next;
  }
}
