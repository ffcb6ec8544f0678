/**
 * The agent's side of the executor HTTP API: SUBSCRIBE, UPDATE and MESSAGE
 * from an executor process, checked in upstream's order (wire-facts §3):
 * the agent must be up (503), the framework known (400 `Framework cannot be
 * found`), the executor known (400 `Executor cannot be found`), with
 * executor authentication the caller's token made for it (403), and every
 * call but SUBSCRIBE needs an executor that has subscribed once (403); one
 * whose stream broke may still send updates, as upstream's may. What the call
 * carries was validated on the wire already.
 *
 * A SUBSCRIBE after a disconnection is reconciled as upstream's agent does
 * it: the updates the executor has not seen acknowledged are taken again
 * (one the framework acknowledged already is answered with ACKNOWLEDGED at
 * once), and a task still staging that the executor does not know (its
 * LAUNCH was lost with the stream) is reported lost.
 */
import { wallTimeMs, type SimContext } from '../network/context.js';
import { done, fail, type Outcome } from '../model/errors.js';
import type { ExecutorAuthorizer, ExecutorCallEnvelope, ExecutorStatus } from '../model/executor-api.js';
import type { AgentToMaster, FrameworkRef } from '../model/messages.js';
import { canTransition, isTerminal } from '../model/task-state.js';
import type { StatusReason, TaskState, TaskStatus } from '../model/types.js';
import type { SimExecutor } from './executor.js';
import { HttpExecutor } from './http-executor.js';

export const AGENT_NOT_RECOVERED = 'Agent has not finished recovery';

/** What the endpoint needs of its agent. */
export interface ExecutorEndpointHost {
  readonly id: string;
  readonly ctx: SimContext;
  /** Whether the agent process runs (not crashed). */
  readonly up: boolean;
  framework(frameworkId: string): FrameworkRef | undefined;
  executor(frameworkId: string, executorId: string): SimExecutor | HttpExecutor | undefined;
  /** Takes an update into the status update manager; false for a duplicate. */
  takeUpdate(frameworkId: string, status: TaskStatus): boolean;
  /** An update the agent makes itself about a task of `executor`. */
  agentUpdate(executor: HttpExecutor, taskId: string, state: TaskState, message: string, reason: StatusReason): void;
  toMaster(message: AgentToMaster): void;
}

/** Who a call is from, found as upstream's agent finds it; an error answer otherwise. */
function findExecutor(
  host: ExecutorEndpointHost,
  envelope: ExecutorCallEnvelope,
  authorize: ExecutorAuthorizer | undefined,
): Outcome<HttpExecutor> {
  if (!host.up) return fail('UNAVAILABLE', AGENT_NOT_RECOVERED);
  if (host.framework(envelope.frameworkId) === undefined)
    return fail('FRAMEWORK_NOT_FOUND', 'Framework cannot be found');
  const executor = host.executor(envelope.frameworkId, envelope.executorId);
  // A simulated executor has no process to call in; to an outsider it does not exist.
  if (!(executor instanceof HttpExecutor) || !executor.alive) return fail('INVALID', 'Executor cannot be found');
  const refused = authorize?.(executor);
  if (refused !== undefined) return fail('FORBIDDEN', refused);
  return { ok: true, value: executor };
}

export function executorSubscribe(
  host: ExecutorEndpointHost,
  connectionId: string,
  envelope: ExecutorCallEnvelope,
  authorize?: ExecutorAuthorizer,
): Outcome {
  const { call } = envelope;
  if (call.type !== 'SUBSCRIBE') throw new Error(`executorSubscribe: a ${call.type} call`);
  const found = findExecutor(host, envelope, authorize);
  if (!found.ok) return found;
  const executor = found.value;
  if (executor.subscribe(connectionId) !== 'again') return done;
  for (const update of call.unacknowledgedUpdates) {
    const status = statusOf(host, executor, update);
    if (!host.takeUpdate(executor.frameworkId, status) && executor.wasAcknowledged(status.uuid!)) {
      executor.acknowledgeAgain(status.taskId, status.uuid!);
    }
    executor.setTaskState(status.taskId, status.state);
  }
  const known = new Set([...call.unacknowledgedTaskIds, ...call.unacknowledgedUpdates.map((u) => u.taskId)]);
  const partitionAware = host.framework(executor.frameworkId)?.capabilities.includes('PARTITION_AWARE') === true;
  for (const task of executor.liveTasks()) {
    if (task.state !== 'TASK_STAGING' || known.has(task.spec.taskId)) continue;
    const state = partitionAware ? 'TASK_DROPPED' : 'TASK_LOST';
    host.agentUpdate(executor, task.spec.taskId, state, 'Task launched during agent restart', 'REASON_AGENT_RESTARTED');
  }
  return done;
}

/** UPDATE and MESSAGE. */
export function executorCall(
  host: ExecutorEndpointHost,
  envelope: ExecutorCallEnvelope,
  authorize?: ExecutorAuthorizer,
): Outcome {
  const found = findExecutor(host, envelope, authorize);
  if (!found.ok) return found;
  const executor = found.value;
  if (executor.registering) return fail('FORBIDDEN', 'Executor is not subscribed');
  const { call } = envelope;
  switch (call.type) {
    case 'SUBSCRIBE':
      throw new Error('executorCall: SUBSCRIBE goes to executorSubscribe');
    case 'UPDATE':
      return update(host, executor, call.status);
    case 'MESSAGE': {
      const { frameworkId, executorId } = executor;
      host.toMaster({ type: 'EXECUTOR_TO_FRAMEWORK', agentId: host.id, frameworkId, executorId, data: call.data });
      return done;
    }
  }
}

function update(host: ExecutorEndpointHost, executor: HttpExecutor, reported: ExecutorStatus): Outcome {
  const task = executor.tasks.get(reported.taskId);
  // Upstream forwards it regardless; here a task of another executor cannot be touched through this one.
  if (task === undefined)
    return fail('INVALID', `Task '${reported.taskId}' is not a task of executor '${executor.executorId}'`);
  if (isTerminal(task.state)) {
    // Upstream's status update manager refuses a stream that has ended; the call was accepted all the same.
    host.ctx.trace.append('executor:update-after-terminal', {
      taskId: task.spec.taskId,
      state: reported.state,
      uuid: reported.uuid,
    });
    return done;
  }
  if (
    host.takeUpdate(executor.frameworkId, statusOf(host, executor, reported)) &&
    canTransition(task.state, reported.state)
  ) {
    task.state = reported.state;
  }
  return done;
}

/** The update as the agent forwards it: its agent, container and time filled in. */
function statusOf(host: ExecutorEndpointHost, executor: HttpExecutor, reported: ExecutorStatus): TaskStatus {
  return {
    ...reported,
    agentId: host.id,
    executorId: executor.executorId,
    containerId: executor.containerId,
    timestampMs: reported.timestampMs ?? wallTimeMs(host.ctx),
  };
}
