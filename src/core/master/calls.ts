/**
 * Handlers of the scheduler calls other than SUBSCRIBE, once the master has
 * matched the call to a subscribed framework and its stream. Each returns
 * an outcome for the HTTP status; results reach the framework as events.
 */
import { done, fail, type Outcome } from '../model/errors.js';
import { isTerminal } from '../model/task-state.js';
import type { SchedulerCall, TaskState } from '../model/types.js';
import { killDuringLaunch, onAccept, onDecline } from './accept.js';
import { refOf, type Framework } from './framework.js';
import type { Task } from '../model/records.js';
import { unreachableSince } from './agent-health.js';
import type { MasterOps } from './ops.js';
import { masterStatus } from './tasks.js';
import { onAcknowledgeOperation, onReconcileOperations } from './operations.js';
import { roleError } from './validation.js';
import { answerInverseOffers } from './inverse-offers.js';

type Call<T extends SchedulerCall['type']> = Extract<SchedulerCall, { type: T }>;

export function dispatch(m: MasterOps, fw: Framework, call: SchedulerCall): Outcome {
  m.ctx.trace.append(`call:${call.type.toLowerCase()}`, traceOf(call));
  switch (call.type) {
    case 'TEARDOWN':
      m.removeFramework(fw, 'Framework teardown');
      return done;
    case 'ACCEPT':
      return onAccept(m, fw, call.offerIds, call.operations, call.filters.refuseMs);
    case 'DECLINE':
      return onDecline(m, fw, call.offerIds, call.filters.refuseMs);
    case 'ACCEPT_INVERSE_OFFERS':
      return answerInverseOffers(m, fw, call.offerIds, 'ACCEPT', call.filters.refuseMs);
    case 'DECLINE_INVERSE_OFFERS':
      return answerInverseOffers(m, fw, call.offerIds, 'DECLINE', call.filters.refuseMs);
    case 'REVIVE':
      return onRevive(m, fw, call);
    case 'SUPPRESS':
      return onSuppress(m, fw, call);
    case 'KILL':
      return onKill(m, fw, call);
    case 'SHUTDOWN':
      m.toAgent(call.agentId, { type: 'SHUTDOWN_EXECUTOR', frameworkId: fw.id, executorId: call.executorId });
      return done;
    case 'ACKNOWLEDGE':
      return onAcknowledge(m, fw, call);
    case 'ACKNOWLEDGE_OPERATION_STATUS':
      return onAcknowledgeOperation(m, fw, call.agentId, call.operationId, call.uuid);
    case 'RECONCILE':
      return onReconcile(m, fw, call);
    case 'RECONCILE_OPERATIONS':
      return onReconcileOperations(m, fw, call.operations);
    case 'MESSAGE':
      m.toAgent(call.agentId, {
        type: 'FRAMEWORK_TO_EXECUTOR',
        frameworkId: fw.id,
        executorId: call.executorId,
        data: call.data,
      });
      return done;
    case 'REQUEST':
      // The built-in allocator ignores resource requests, as upstream's does.
      return done;
    case 'UPDATE_FRAMEWORK':
      return m.updateFramework(fw, call.subscription);
  }
}

function traceOf(call: SchedulerCall): Record<string, unknown> {
  switch (call.type) {
    case 'ACCEPT':
      return {
        offerIds: call.offerIds,
        operations: call.operations.map((o) => o.type),
        refuseMs: call.filters.refuseMs,
      };
    case 'DECLINE':
      return { offerIds: call.offerIds, refuseMs: call.filters.refuseMs };
    case 'UPDATE_FRAMEWORK':
      return { roles: call.subscription.info.roles, suppressed: call.subscription.suppressedRoles };
    case 'MESSAGE':
      return { agentId: call.agentId, executorId: call.executorId, bytes: call.data.length };
    default: {
      const { type: _type, ...rest } = call;
      return rest;
    }
  }
}

function rolesError(roles: readonly string[]): Outcome | undefined {
  for (const role of roles) {
    const error = roleError(role);
    if (error !== undefined) return fail('INVALID', error);
  }
  return undefined;
}

function onRevive(m: MasterOps, fw: Framework, call: Call<'REVIVE'>): Outcome {
  const invalid = rolesError(call.roles);
  if (invalid !== undefined) return invalid;
  const mine = fw.roles();
  const roles = call.roles.length === 0 ? mine : call.roles.filter((r) => mine.includes(r));
  for (const role of roles) fw.suppressedRoles.delete(role);
  if (roles.length > 0) m.allocator.revive(fw.id, roles);
  return done;
}

function onSuppress(m: MasterOps, fw: Framework, call: Call<'SUPPRESS'>): Outcome {
  const invalid = rolesError(call.roles);
  if (invalid !== undefined) return invalid;
  const mine = fw.roles();
  const roles = call.roles.length === 0 ? mine : call.roles.filter((r) => mine.includes(r));
  for (const role of roles) fw.suppressedRoles.add(role);
  if (roles.length > 0) m.allocator.suppress(fw.id, roles);
  return done;
}

/**
 * KILL, by the master's knowledge of the task:
 *   unknown               -> explicit reconciliation: TASK_LOST (or the partition-aware state)
 *   accepted, not yet sent -> TASK_KILLED from the master; the launch is never forwarded
 *                            (for a task group, the rest of the group follows at launch time)
 *   on an agent           -> forwarded; the executor answers (a group dies together)
 */
function onKill(m: MasterOps, fw: Framework, call: Call<'KILL'>): Outcome {
  const task = fw.tasks.get(call.taskId);
  if (task === undefined) {
    reconcileUnknown(m, fw, call.taskId, call.agentId);
    return done;
  }
  if (task.pending) {
    killDuringLaunch(m, fw, task);
    return done;
  }
  if (!isTerminal(task.state)) {
    const gracePeriodMs = call.gracePeriodMs;
    m.toAgent(task.agentId, {
      type: 'KILL_TASK',
      frameworkId: fw.id,
      taskId: task.spec.taskId,
      ...(gracePeriodMs === undefined ? {} : { gracePeriodMs }),
    });
  }
  return done;
}

function onAcknowledge(m: MasterOps, fw: Framework, call: Call<'ACKNOWLEDGE'>): Outcome {
  const task = fw.tasks.get(call.taskId);
  if (
    task !== undefined &&
    task.statusUpdateUuid === call.uuid &&
    task.statusUpdateState !== undefined &&
    isTerminal(task.statusUpdateState) &&
    isTerminal(task.state)
  ) {
    fw.completeTask(task);
  }
  const sent = m.toAgent(call.agentId, {
    type: 'STATUS_UPDATE_ACK',
    frameworkId: fw.id,
    taskId: call.taskId,
    uuid: call.uuid,
  });
  if (!sent) m.ctx.trace.append('status-update:ack-dropped', { agentId: call.agentId, taskId: call.taskId });
  return done;
}

/** RECONCILE: the latest state of each named task, or of all when none is named. */
function onReconcile(m: MasterOps, fw: Framework, call: Call<'RECONCILE'>): Outcome {
  if (call.tasks.length === 0) {
    for (const task of fw.tasks.values()) sendLatest(m, fw, task);
    return done;
  }
  for (const { taskId, agentId } of call.tasks) {
    const task = fw.tasks.get(taskId);
    if (task === undefined) reconcileUnknown(m, fw, taskId, agentId);
    else sendLatest(m, fw, task);
  }
  return done;
}

function sendLatest(m: MasterOps, fw: Framework, task: Task): void {
  const status = masterStatus(m, refOf(task), task.state, 'Reconciliation: Latest task state', 'REASON_RECONCILIATION');
  const unreachableTimeMs = task.state === 'TASK_UNREACHABLE' ? unreachableSince(m, task.agentId) : undefined;
  fw.send({ type: 'UPDATE', status: unreachableTimeMs === undefined ? status : { ...status, unreachableTimeMs } });
}

/**
 * An unknown task: TASK_LOST for frameworks without PARTITION_AWARE; for
 * those with it, TASK_UNREACHABLE (with `unreachable_time`) when the agent
 * is unreachable, TASK_GONE when it is registered, else TASK_UNKNOWN.
 */
function reconcileUnknown(m: MasterOps, fw: Framework, taskId: string, named: string | undefined): void {
  // A task that completed is unknown too, but its agent is known: the status names it.
  const agentId = named ?? lastAgentOf(fw, taskId);
  // An agent the new leader expects back may still report it: upstream answers nothing until it has.
  if (agentId !== undefined && m.recovery.recovered.has(agentId)) return;
  const unreachableTimeMs = unreachableSince(m, agentId);
  let state: TaskState = 'TASK_LOST';
  if (fw.has('PARTITION_AWARE')) {
    state =
      unreachableTimeMs !== undefined
        ? 'TASK_UNREACHABLE'
        : agentId !== undefined && m.agents.has(agentId)
          ? 'TASK_GONE'
          : 'TASK_UNKNOWN';
  }
  const message =
    unreachableTimeMs !== undefined
      ? 'Reconciliation: Task is unreachable'
      : agentId !== undefined && m.agents.has(agentId)
        ? 'Reconciliation: Task is unknown to the agent'
        : 'Reconciliation: Task is unknown';
  const status = masterStatus(m, { taskId, agentId }, state, message, 'REASON_RECONCILIATION');
  fw.send({ type: 'UPDATE', status: unreachableTimeMs === undefined ? status : { ...status, unreachableTimeMs } });
}

function lastAgentOf(fw: Framework, taskId: string): string | undefined {
  for (let i = fw.completedTasks.length - 1; i >= 0; i--) {
    const task = fw.completedTasks[i]!;
    if (task.spec.taskId === taskId) return task.agentId;
  }
  return undefined;
}
