/**
 * `mesos.v1.executor.Call` in: upstream's validation of the call (the
 * agent's `validation::executor::call::validate`, in its order and words),
 * then the call as the core's `ExecutorCallEnvelope`.
 */
import type { ExecutorCall, ExecutorCallEnvelope, ExecutorStatus } from '../core/model/executor-api.js';
import type { StatusReason, TaskState } from '../core/model/types.js';
import { bytesToHex } from './bytes.js';
import type { mesos } from './generated/types.js';

type Call = mesos.v1.executor.Call;

/** Why a decoded call is invalid, or undefined; the route prefixes `Failed to validate executor::Call: `. */
export function executorCallError(call: Call): string | undefined {
  if (call.type === undefined) return "Expecting 'type' to be present";
  const who = `executor ${call.executor_id.value} of framework ${call.framework_id.value}`;
  switch (call.type) {
    case 'SUBSCRIBE':
      return call.subscribe === undefined ? "Expecting 'subscribe' to be present" : undefined;
    case 'UPDATE': {
      if (call.update === undefined) return "Expecting 'update' to be present";
      const status = call.update.status;
      if (status.uuid === undefined) return "Expecting 'uuid' to be present";
      // Upstream reads the uuid as a UUID; 16 bytes is what one is.
      if (status.uuid.length !== 16) return "'uuid' must be a 16-byte UUID";
      const statusExecutor = status.executor_id?.value;
      if (statusExecutor !== undefined && statusExecutor !== call.executor_id.value) {
        return `ExecutorID in Call: ${call.executor_id.value} does not match ExecutorID in TaskStatus: ${statusExecutor}`;
      }
      if (status.source !== 'SOURCE_EXECUTOR')
        return `Received Call from ${who} with invalid source, expecting 'SOURCE_EXECUTOR'`;
      if (status.state === 'TASK_STAGING') return `Received TASK_STAGING from ${who} which is not allowed`;
      return undefined;
    }
    case 'MESSAGE':
      return call.message === undefined ? "Expecting 'message' to be present" : undefined;
    case 'HEARTBEAT':
    case 'UNKNOWN':
      return undefined;
  }
}

/** A valid SUBSCRIBE, UPDATE or MESSAGE as the core's input. */
export function executorCallFromWire(call: Call): ExecutorCallEnvelope {
  return { frameworkId: call.framework_id.value, executorId: call.executor_id.value, call: payloadOf(call) };
}

function payloadOf(call: Call): ExecutorCall {
  switch (call.type) {
    case 'SUBSCRIBE': {
      const subscribe = call.subscribe!;
      return {
        type: 'SUBSCRIBE',
        unacknowledgedTaskIds: (subscribe.unacknowledged_tasks ?? []).map((t) => t.task_id.value),
        unacknowledgedUpdates: (subscribe.unacknowledged_updates ?? [])
          .filter((u) => u.status.uuid?.length === 16)
          .map((u) => statusFromWire(u.status)),
      };
    }
    case 'UPDATE':
      return { type: 'UPDATE', status: statusFromWire(call.update!.status) };
    case 'MESSAGE':
      return { type: 'MESSAGE', data: call.message!.data };
    default:
      throw new Error(`executorCallFromWire: a ${call.type ?? 'typeless'} call has no core input`);
  }
}

function statusFromWire(status: mesos.v1.TaskStatus): ExecutorStatus {
  return {
    taskId: status.task_id.value,
    state: status.state as TaskState,
    source: 'SOURCE_EXECUTOR',
    uuid: bytesToHex(status.uuid!),
    ...(status.message === undefined ? {} : { message: status.message }),
    ...(status.reason === undefined ? {} : { reason: status.reason as StatusReason }),
    ...(status.data === undefined ? {} : { data: status.data }),
    ...(status.timestamp === undefined ? {} : { timestampMs: Math.round(status.timestamp * 1000) }),
  };
}
