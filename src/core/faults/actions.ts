/**
 * The faults of frameworks' streams, executors, tasks and the wall clock,
 * applied to the nodes (`Cluster.inject` hands them here). Each one first
 * finds what it names, so that an unknown id changes nothing (NOT_FOUND),
 * then appears in the trace as `fault:<type>` with its parameters, then acts:
 *
 *   drop_framework_connection  the stream closes as a dead TCP connection does: the
 *                              master takes the framework for disconnected and starts
 *                              its failover timeout; the framework must subscribe again
 *   stall_heartbeats           the stream stays open and nothing reaches the framework.
 *                              The master does not know: it goes on sending (heartbeats,
 *                              offers, updates), and what it sends waits, in order, as
 *                              bytes on a connection that is slow but not lost, to arrive
 *                              together when the stall ends (after `durationMs`, or at
 *                              resume_heartbeats). A framework that gives up on the silent
 *                              stream and closes it loses them
 *   crash_executor             the executor's process dies (SIGKILL, wait status 9): as
 *                              upstream's agent reports a container's termination, each
 *                              live task goes TASK_FAILED (SOURCE_AGENT,
 *                              REASON_EXECUTOR_TERMINATED, "Executor terminated"), and
 *                              for an executor other than a command executor the master
 *                              hears of the exit and sends FAILURE
 *   fail_task                  the task's process exits with the code (TASK_FAILED from
 *                              its executor)
 *   hang_task                  the task no longer progresses: it never ends by itself,
 *                              and a kill ends it only when its grace period is over
 *                              (health checks are not modelled)
 *   memory_spike               the task's memory use rises; past its container's hard
 *                              limit the agent's memory enforcement kills the container
 *                              (TASK_FAILED, REASON_CONTAINER_LIMITATION_MEMORY)
 *   set_memory_limit           UPDATE_CONTAINER_MEMORY_LIMIT, with its answers
 *   clock_jump                 an NTP step forward of every node's wall clock: what
 *                              nodes report as the time (status timestamps, registration
 *                              and unregistration times, the master's uptime) jumps;
 *                              durations still run on the event loop, which never moves
 *                              back or skips, so no timer fires early. (Upstream's
 *                              libprocess keys its timers on the wall clock, so a real
 *                              step can make pending timers fire early; that is not
 *                              modelled.)
 *
 * Faults on tasks act on the executors the agents play; a task of an
 * executor that runs outside the core can be failed or hung only by that
 * process (CONFLICT). Its executor can be crashed: a spawned process is
 * killed by the host.
 */
import type { Agent } from '../agent/agent.js';
import type { AgentExecutor } from '../agent/frameworks.js';
import { SimExecutor } from '../agent/executor.js';
import type { SimContext, WallClock } from '../network/context.js';
import { fail, ok, type Outcome } from '../model/errors.js';
import type { TimerId } from '../kernel/event-loop.js';
import type { Fault, FaultResult, ProcessFault, SubscriberFault, TaskTarget } from './vocabulary.js';
import type { Master } from '../master/master.js';
import type { Outbox } from '../network/outbox.js';
import { isTerminal } from '../model/task-state.js';

/** The faults this module applies. */
export type NodeFault = SubscriberFault | ProcessFault | { readonly type: 'clock_jump'; readonly ms: number };

export interface FaultPort {
  readonly ctx: SimContext;
  readonly wallClock: WallClock;
  readonly master: Master;
  readonly agents: ReadonlyMap<string, Agent>;
  readonly outbox: Outbox;
}

type Action = () => void;

/** The close reason of a stream whose connection a fault broke. */
export const CONNECTION_LOST = 'Connection lost';

export class FaultActions {
  /** Stalled subscription streams, by framework: the connection and the timer that ends the stall. */
  readonly #stalls = new Map<string, { readonly connectionId: string; readonly timer: TimerId | undefined }>();

  constructor(private readonly port: FaultPort) {}

  /** Applies the fault, or says why it cannot (and then changes nothing). */
  apply(fault: NodeFault): Outcome<FaultResult> {
    const action = this.#resolve(fault);
    if (!action.ok) return action;
    const { type, ...parameters } = fault;
    this.port.ctx.trace.append(`fault:${type}`, parameters);
    action.value();
    return ok({});
  }

  /** A connection closed: a stall of it has nothing left to hold. */
  connectionClosed(connectionId: string): void {
    this.port.outbox.discard(connectionId);
  }

  #resolve(fault: NodeFault): Outcome<Action> {
    switch (fault.type) {
      case 'drop_framework_connection':
      case 'stall_heartbeats':
      case 'resume_heartbeats':
        return this.#subscriber(fault);
      case 'crash_executor':
        return this.#crashExecutor(fault);
      case 'fail_task':
      case 'hang_task':
      case 'memory_spike':
        return this.#task(fault);
      case 'set_memory_limit':
        return this.#memoryLimit(fault);
      case 'clock_jump':
        return ok(() => {
          this.port.wallClock.stepMs += fault.ms;
        });
    }
  }

  #subscriber(fault: SubscriberFault): Outcome<Action> {
    const fw = this.port.master.frameworks.get(fault.frameworkId);
    if (fw === undefined) return fail('NOT_FOUND', `Framework '${fault.frameworkId}' not found`);
    if (fault.type === 'resume_heartbeats') return ok(() => this.#release(fault.frameworkId));
    const connectionId = fw.connectionId;
    if (fw.state !== 'subscribed' || connectionId === undefined)
      return fail('CONFLICT', `Framework '${fw.id}' has no subscription stream open`);
    if (fault.type === 'stall_heartbeats') return ok(() => this.#stall(fw.id, connectionId, fault.durationMs));
    return ok(() => {
      // What a stall held dies with the connection.
      this.port.outbox.discard(connectionId);
      this.#release(fw.id);
      this.port.outbox.close(connectionId, CONNECTION_LOST, true);
      this.port.master.disconnected(connectionId);
    });
  }

  /** Whether a framework's stream is stalled now (its events held back). */
  stalled(frameworkId: string): boolean {
    const stall = this.#stalls.get(frameworkId);
    return stall !== undefined && this.port.outbox.stalled(stall.connectionId);
  }

  #stall(frameworkId: string, connectionId: string, durationMs: number | undefined): void {
    const { ctx, outbox } = this.port;
    const previous = this.#stalls.get(frameworkId);
    // A stall of the framework's earlier stream (it subscribed again since) ends; one of this stream starts over.
    if (previous?.connectionId !== connectionId) this.#release(frameworkId);
    else ctx.loop.cancel(previous.timer);
    outbox.stall(connectionId);
    const timer =
      durationMs === undefined
        ? undefined
        : ctx.loop.schedule(durationMs, 'fault:stall-end', () => this.#release(frameworkId));
    this.#stalls.set(frameworkId, { connectionId, timer });
  }

  #release(frameworkId: string): void {
    const stall = this.#stalls.get(frameworkId);
    if (stall === undefined) return;
    this.#stalls.delete(frameworkId);
    this.port.ctx.loop.cancel(stall.timer);
    if (this.port.outbox.stalled(stall.connectionId)) {
      this.port.ctx.trace.append('fault:stall-released', { frameworkId, connectionId: stall.connectionId });
      this.port.outbox.release(stall.connectionId);
    }
  }

  #crashExecutor(fault: Extract<ProcessFault, { type: 'crash_executor' }>): Outcome<Action> {
    if (fault.executorId === undefined) {
      const found = this.#findTask(fault);
      return found.ok ? ok(() => found.value.agent.killExecutor(found.value.executor)) : found;
    }
    const { executorId, agentId, frameworkId } = fault;
    if (agentId !== undefined && !this.port.agents.has(agentId))
      return fail('NOT_FOUND', `Agent '${agentId}' not found`);
    const matches = [...this.port.agents.values()]
      .filter((agent) => agentId === undefined || agent.id === agentId)
      .flatMap((agent) =>
        agent
          .executors()
          .filter(
            (e) =>
              e.alive && e.executorId === executorId && (frameworkId === undefined || e.frameworkId === frameworkId),
          )
          .map((executor) => ({ agent, executor })),
      );
    if (matches.length === 0) return fail('NOT_FOUND', `Executor '${executorId}' not found`);
    if (matches.length > 1)
      return fail(
        'INVALID',
        `Executor id '${executorId}' names executors of several frameworks or agents: name 'framework_id' and 'agent_id'`,
      );
    const { agent, executor } = matches[0]!;
    return ok(() => agent.killExecutor(executor));
  }

  #task(fault: Extract<ProcessFault, { type: 'fail_task' | 'hang_task' | 'memory_spike' }>): Outcome<Action> {
    const found = this.#findTask(fault);
    if (!found.ok) return found;
    const { agent, executor } = found.value;
    if (fault.type === 'memory_spike') {
      if (!agent.cgroups.counts(executor, fault.taskId)) return notRunning(fault.taskId);
      return ok(() => agent.cgroups.spike(executor, fault.taskId, fault.mib, fault.durationMs));
    }
    if (!(executor instanceof SimExecutor))
      return fail(
        'CONFLICT',
        `Task '${fault.taskId}' runs in an executor outside the simulation: only its process can make it fail or hang`,
      );
    if (!executor.runs(fault.taskId)) return notRunning(fault.taskId);
    if (fault.type === 'hang_task') return ok(() => executor.hangTask(fault.taskId));
    return ok(() => executor.failTask(fault.taskId, fault.exitCode, fault.message));
  }

  #memoryLimit(fault: Extract<ProcessFault, { type: 'set_memory_limit' }>): Outcome<Action> {
    const agent = this.port.agents.get(fault.agentId);
    if (agent === undefined) return fail('NOT_FOUND', `Agent '${fault.agentId}' not found`);
    if (agent.state === 'crashed') return fail('CONFLICT', 'Agent has not finished recovery');
    let containerId = fault.containerId;
    if (containerId === undefined) {
      const found = this.#findTask({ taskId: fault.taskId ?? '' });
      if (!found.ok) return found;
      if (found.value.agent !== agent)
        return fail('NOT_FOUND', `Task '${fault.taskId}' does not run on agent '${agent.id}'`);
      containerId = found.value.executor.containerId;
    }
    const id = containerId;
    return agent.cgroups.memoryLimitRefusal(id) ?? ok(() => void agent.cgroups.updateMemoryLimit(id, fault.mib));
  }

  /** The live task a fault names, its agent and the executor running it. */
  #findTask(target: TaskTarget): Outcome<{ agent: Agent; executor: AgentExecutor }> {
    const { taskId, frameworkId } = target;
    const { master, agents } = this.port;
    if (frameworkId !== undefined && !master.frameworks.has(frameworkId))
      return fail('NOT_FOUND', `Framework '${frameworkId}' not found`);
    const tasks = [...master.frameworks.values()]
      .filter((fw) => frameworkId === undefined || fw.id === frameworkId)
      .flatMap((fw) => {
        const task = fw.tasks.get(taskId);
        return task === undefined || isTerminal(task.state) ? [] : [task];
      });
    if (tasks.length === 0) return fail('NOT_FOUND', `Task '${taskId}' not found; ${liveTaskIds(master, frameworkId)}`);
    if (tasks.length > 1)
      return fail('INVALID', `Task id '${taskId}' names tasks of several frameworks: name 'framework_id'`);
    const task = tasks[0]!;
    const agent = agents.get(task.agentId);
    const executor = agent?.state === 'crashed' ? undefined : agent?.executorOfTask(task.frameworkId, taskId);
    if (agent === undefined || executor === undefined) return notRunning(taskId);
    return ok({ agent, executor });
  }
}

/** The most task ids a refusal lists. */
const LISTED_TASKS = 10;

/** `the live tasks: a, b (and 3 more)`, of one framework or all, in id order: what a fault could have named. */
function liveTaskIds(master: FaultPort['master'], frameworkId: string | undefined): string {
  const ids: string[] = [];
  for (const fw of master.frameworks.values()) {
    if (frameworkId !== undefined && fw.id !== frameworkId) continue;
    for (const task of fw.tasks.values()) if (!isTerminal(task.state)) ids.push(task.spec.taskId);
  }
  if (ids.length === 0) return 'no task is live now';
  ids.sort();
  const more = ids.length > LISTED_TASKS ? ` (and ${ids.length - LISTED_TASKS} more)` : '';
  return `the live tasks: ${ids.slice(0, LISTED_TASKS).join(', ')}${more}`;
}

function notRunning(taskId: string): ReturnType<typeof fail> {
  return fail('CONFLICT', `Task '${taskId}' is not running on its agent now`);
}

/** Whether a fault is one `FaultActions` applies. */
export function isNodeFault(fault: Fault): fault is NodeFault {
  return ![
    'crash_agent',
    'restart_agent',
    'partition',
    'heal',
    'network_rule',
    'remove_network_rule',
    'add_agent',
    'remove_agent',
  ].includes(fault.type);
}
