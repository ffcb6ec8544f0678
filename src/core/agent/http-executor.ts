/**
 * A custom executor that runs outside the core, in `spawn` or `await`
 * mode: a real process (or a test harness) that subscribes on the agent's
 * `/api/v1/executor` and sends calls over HTTP. This is the agent's record
 * of it, a node on the simulated network like the simulated executors: the
 * agent's messages to it become events on its stream, and its calls reach
 * the agent through `Cluster.executorCall`.
 *
 * Lifecycle (the spec's executor state table):
 *
 *   launched     --SUBSCRIBE-->                      subscribed
 *   launched     --no SUBSCRIBE within the registration timeout--> terminated (destroyed)
 *   subscribed   --stream breaks-->                  disconnected
 *   disconnected --SUBSCRIBE (with what it has not seen acknowledged)--> subscribed
 *   any live     --SHUTDOWN-->                       terminating --exit, or grace period over--> terminated
 *   any live     --process exit, container destroyed--> terminated
 *
 * Events for an executor with no open stream are lost, as upstream's agent
 * cannot send them either; tasks launched before the first SUBSCRIBE wait
 * for it. An executor without checkpointing exits when its stream breaks
 * (its process does so by itself; in `await` mode the stream is all there
 * is of it, so the agent takes it for exited).
 */
import type { SimContext } from '../network/context.js';
import type { TimerId } from '../kernel/event-loop.js';
import type { ExecutorAgentInfo, ExecutorEvent } from '../model/executor-api.js';
import type { AgentToExecutor, FrameworkRef, Message, SimNode } from '../model/messages.js';
import type { Outbox } from '../network/outbox.js';
import type { Sandbox } from '../process/sandbox.js';
import { isTerminal } from '../model/task-state.js';
import type { ExecutorSpec, TaskSpec, TaskState, TaskStatus } from '../model/types.js';
import { ExecutorIdentified, type ExecutorIdentity } from './executor.js';

export type HttpExecutorState = 'launched' | 'subscribed' | 'disconnected' | 'terminating' | 'terminated';

const HTTP_EXECUTOR_NEXT: Readonly<Record<HttpExecutorState, readonly HttpExecutorState[]>> = {
  launched: ['subscribed', 'terminating', 'terminated'],
  subscribed: ['subscribed', 'disconnected', 'terminating', 'terminated'],
  disconnected: ['subscribed', 'terminating', 'terminated'],
  terminating: ['terminated'],
  terminated: [],
};

/** Upstream's `DEFAULT_EXECUTOR_HEARTBEAT_INTERVAL`: HEARTBEAT events every 30 minutes, the first after 30. */
export const EXECUTOR_HEARTBEAT_INTERVAL_MS = 30 * 60_000;

/** How many acknowledged update uuids an executor remembers, to answer one it sends again. */
const MAX_REMEMBERED_ACKS = 1_000;

export interface HttpTask {
  readonly spec: TaskSpec;
  state: TaskState;
  /** Handed to the executor on its stream (not still waiting for its first SUBSCRIBE). */
  delivered: boolean;
  /** The updates its agent took, oldest first (counters.ts, appendStatus). */
  statuses: TaskStatus[];
}

export interface HttpExecutorHost {
  readonly outbox: Outbox;
  agentInfo(): ExecutorAgentInfo;
  /** No SUBSCRIBE came within the registration timeout. */
  registrationTimedOut(executor: HttpExecutor): void;
  /** A KILL for a task the executor has not been given yet: the agent ends it itself. */
  killedBeforeDelivery(executor: HttpExecutor, taskId: string): void;
  /** The stream of an executor that has no process of its own broke: it is gone. */
  connectionLost(executor: HttpExecutor): void;
}

export class HttpExecutor extends ExecutorIdentified<HttpTask> implements SimNode {
  #state: HttpExecutorState = 'launched';
  #connectionId: string | undefined;
  /** Events waiting for the first SUBSCRIBE: the launches of its tasks. */
  #queued: ExecutorEvent[] = [];
  /** Uuids the framework acknowledged, newest last, so that one sent again is answered at once. */
  readonly #acknowledged = new Set<string>();
  #registrationTimer: TimerId | undefined;
  #heartbeatTimer: TimerId | undefined;

  constructor(
    private readonly ctx: SimContext,
    private readonly host: HttpExecutorHost,
    id: ExecutorIdentity,
    sandbox: Sandbox,
    readonly spec: ExecutorSpec,
    readonly framework: FrameworkRef,
    registrationTimeoutMs: number,
    /** Whether a process of its own runs it (`spawn`), rather than whoever subscribes (`await`). */
    readonly spawned: boolean,
  ) {
    super(id, sandbox);
    this.#registrationTimer = ctx.loop.schedule(registrationTimeoutMs, 'executor:registration-timeout', () => {
      this.#registrationTimer = undefined;
      if (this.#state === 'launched') host.registrationTimedOut(this);
    });
  }

  get alive(): boolean {
    return this.#state !== 'terminated';
  }

  /** Its tasks' states are the agent's own view (set from the calls it took). */
  unended(): HttpTask[] {
    return this.liveTasks();
  }

  get state(): HttpExecutorState {
    return this.#state;
  }

  get connectionId(): string | undefined {
    return this.#connectionId;
  }

  /** Whether it has not subscribed yet: upstream's REGISTERING, where only SUBSCRIBE is allowed. */
  get registering(): boolean {
    return this.#state === 'launched';
  }

  receive(_from: string, message: Message): void {
    if (!this.alive) return;
    const m = message as AgentToExecutor;
    switch (m.type) {
      case 'LAUNCH':
        return this.#launch([m.task], { type: 'LAUNCH', framework: this.framework, task: m.task });
      case 'LAUNCH_GROUP':
        return this.#launch(m.tasks, { type: 'LAUNCH_GROUP', tasks: m.tasks });
      case 'KILL':
        return this.#kill(m.taskId, m.gracePeriodMs);
      case 'SHUTDOWN':
        return this.shutdown();
      case 'ACKNOWLEDGED':
        this.#remember(m.uuid);
        return this.#send({ type: 'ACKNOWLEDGED', taskId: m.taskId, uuid: m.uuid });
      case 'FRAMEWORK_MESSAGE':
        return this.#send({ type: 'MESSAGE', data: m.data });
      case 'AGENT_RECONNECTED':
        // Its process finds the agent again by itself.
        return;
    }
  }

  /**
   * A SUBSCRIBE on a new stream. The first one gets SUBSCRIBED and the
   * launches that waited for it; a later one (after a disconnection)
   * replaces the stream. An executor being shut down gets SHUTDOWN at once.
   */
  subscribe(connectionId: string): 'first' | 'again' | 'shutdown' {
    const previous = this.#connectionId;
    if (previous !== undefined && previous !== connectionId)
      this.host.outbox.close(previous, 'the executor subscribed again');
    this.#connectionId = connectionId;
    if (this.#state === 'terminating') {
      this.#send({ type: 'SHUTDOWN' });
      return 'shutdown';
    }
    const first = this.#state === 'launched';
    this.#moveTo('subscribed');
    this.ctx.loop.cancel(this.#registrationTimer);
    const { executorId, frameworkId, containerId } = this;
    this.ctx.trace.append('executor:subscribe', { agentId: this.id.agentId, frameworkId, executorId, first });
    this.#send({
      type: 'SUBSCRIBED',
      executor: this.spec,
      framework: this.framework,
      agent: this.host.agentInfo(),
      containerId,
    });
    if (first) {
      for (const event of this.#queued) this.#send(event);
      this.#queued = [];
      for (const task of this.tasks.values()) task.delivered = true;
    }
    this.#armHeartbeat();
    return first ? 'first' : 'again';
  }

  /** The executor's stream closed (its connection broke, or the agent process went away). */
  disconnected(connectionId: string): void {
    if (connectionId !== this.#connectionId) return;
    this.#connectionId = undefined;
    this.ctx.loop.cancel(this.#heartbeatTimer);
    if (this.#state === 'subscribed') this.#moveTo('disconnected');
    this.ctx.trace.append('executor:disconnected', { agentId: this.id.agentId, executorId: this.executorId });
    if (!this.spawned && !this.framework.checkpoint && this.alive) this.host.connectionLost(this);
  }

  /** The agent process died: its end of the stream is gone. */
  agentLost(): void {
    const connectionId = this.#connectionId;
    if (connectionId === undefined) return;
    this.host.outbox.close(connectionId, 'the agent process exited');
    this.disconnected(connectionId);
  }

  /** Asks the executor to shut down; the agent's grace period bounds how long it may take. */
  shutdown(): void {
    if (this.#state === 'terminating' || !this.alive) return;
    this.#moveTo('terminating');
    this.ctx.loop.cancel(this.#registrationTimer);
    this.#send({ type: 'SHUTDOWN' });
  }

  /** Was the framework's acknowledgement of `uuid` seen already? */
  wasAcknowledged(uuid: string): boolean {
    return this.#acknowledged.has(uuid);
  }

  /** The executor answered a task with an update: its state as the agent knows it. */
  setTaskState(taskId: string, state: TaskState): void {
    const task = this.tasks.get(taskId);
    if (task !== undefined) task.state = state;
  }

  /** An ACKNOWLEDGED for an update the executor sent again after it was acknowledged. */
  acknowledgeAgain(taskId: string, uuid: string): void {
    this.#send({ type: 'ACKNOWLEDGED', taskId, uuid });
  }

  /** Its container is gone (destroyed, or its process exited): no more events. */
  destroy(): void {
    if (!this.alive) return;
    this.ctx.loop.cancel(this.#registrationTimer);
    this.ctx.loop.cancel(this.#heartbeatTimer);
    this.#state = 'terminated';
    const connectionId = this.#connectionId;
    this.#connectionId = undefined;
    if (connectionId !== undefined) this.host.outbox.close(connectionId, 'the executor terminated');
  }

  #launch(specs: readonly TaskSpec[], event: ExecutorEvent): void {
    if (this.#state === 'terminating') return;
    for (const spec of specs)
      this.tasks.set(spec.taskId, { spec, state: 'TASK_STAGING', delivered: this.#state !== 'launched', statuses: [] });
    if (this.#state === 'launched') this.#queued.push(event);
    else this.#send(event);
  }

  #kill(taskId: string, gracePeriodMs: number | undefined): void {
    const task = this.tasks.get(taskId);
    if (task === undefined || isTerminal(task.state)) return;
    if (!task.delivered) {
      this.#queued = this.#queued.filter((e) => !(e.type === 'LAUNCH' && e.task.taskId === taskId));
      this.host.killedBeforeDelivery(this, taskId);
      return;
    }
    this.#send({ type: 'KILL', taskId, ...(gracePeriodMs === undefined ? {} : { gracePeriodMs }) });
  }

  #send(event: ExecutorEvent): void {
    if (this.#connectionId === undefined) {
      this.ctx.trace.append('executor:event-lost', { executorId: this.executorId, type: event.type });
      return;
    }
    this.host.outbox.executor(this.#connectionId, event);
  }

  #armHeartbeat(): void {
    this.ctx.loop.cancel(this.#heartbeatTimer);
    this.#heartbeatTimer = this.ctx.loop.schedule(EXECUTOR_HEARTBEAT_INTERVAL_MS, 'executor:heartbeat', () => {
      this.#send({ type: 'HEARTBEAT' });
      this.#armHeartbeat();
    });
  }

  #remember(uuid: string): void {
    this.#acknowledged.add(uuid);
    if (this.#acknowledged.size > MAX_REMEMBERED_ACKS)
      this.#acknowledged.delete(this.#acknowledged.values().next().value!);
  }

  #moveTo(next: HttpExecutorState): void {
    if (!HTTP_EXECUTOR_NEXT[this.#state].includes(next)) {
      throw new Error(`executor '${this.executorId}': illegal transition ${this.#state} -> ${next}`);
    }
    this.#state = next;
  }
}
