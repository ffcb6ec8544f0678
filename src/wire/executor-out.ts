/**
 * `mesos.v1.executor.Event` out: the core's executor events as wire
 * messages, JSON text or protobuf bytes. Tasks and the ExecutorInfo travel
 * as the framework sent them (their `raw` wire message), as upstream's
 * agent hands them on; the ExecutorInfo carries its framework's id.
 */
import type { ExecutorEvent } from '../core/model/executor-api.js';
import type { ExecutorSpec, TaskSpec } from '../core/model/types.js';
import { hexToBytes } from './bytes.js';
import { agentDescriptionToWire } from './agent-state.js';
import { resourcesToWire } from './convert-common.js';
import type { mesos } from './generated/types.js';
import { encodeJson } from './json-encode.js';
import { frameworkInfoToWire } from './operator-state.js';
import { encodeProto } from './proto-codec.js';
import { taskInfoOf } from './scheduler-in.js';

type Event = mesos.v1.executor.Event;

export function executorEventToWire(event: ExecutorEvent): Event {
  switch (event.type) {
    case 'SUBSCRIBED':
      return {
        type: 'SUBSCRIBED',
        subscribed: {
          executor_info: executorInfoToWire(event.executor, event.framework.id),
          framework_info: frameworkInfoToWire(event.framework),
          agent_info: agentDescriptionToWire(event.agent),
          container_id: { value: event.containerId },
        },
      };
    case 'LAUNCH':
      return { type: 'LAUNCH', launch: { task: taskInfoToWire(event.task) } };
    case 'LAUNCH_GROUP':
      return { type: 'LAUNCH_GROUP', launch_group: { task_group: { tasks: event.tasks.map(taskInfoToWire) } } };
    case 'KILL':
      return {
        type: 'KILL',
        kill: {
          task_id: { value: event.taskId },
          ...(event.gracePeriodMs === undefined
            ? {}
            : { kill_policy: { grace_period: { nanoseconds: Math.round(event.gracePeriodMs * 1e6) } } }),
        },
      };
    case 'ACKNOWLEDGED':
      return { type: 'ACKNOWLEDGED', acknowledged: { task_id: { value: event.taskId }, uuid: hexToBytes(event.uuid) } };
    case 'MESSAGE':
      return { type: 'MESSAGE', message: { data: event.data } };
    case 'ERROR':
      return { type: 'ERROR', error: { message: event.message } };
    case 'SHUTDOWN':
    case 'HEARTBEAT':
      return { type: event.type };
  }
}

export function executorEventToJson(event: ExecutorEvent): string {
  return encodeJson('mesos.v1.executor.Event', executorEventToWire(event));
}

export function executorEventToProto(event: ExecutorEvent): Uint8Array {
  return encodeProto('mesos.v1.executor.Event', executorEventToWire(event));
}

function executorInfoToWire(spec: ExecutorSpec, frameworkId: string): mesos.v1.ExecutorInfo {
  const raw = spec.raw as mesos.v1.ExecutorInfo | undefined;
  return {
    ...(raw ?? {
      executor_id: { value: spec.executorId },
      type: spec.type,
      resources: resourcesToWire(spec.resources),
    }),
    framework_id: { value: frameworkId },
  };
}

function taskInfoToWire(task: TaskSpec): mesos.v1.TaskInfo {
  return (
    taskInfoOf(task) ?? {
      name: task.name,
      task_id: { value: task.taskId },
      agent_id: { value: task.agentId },
      resources: resourcesToWire(task.resources),
    }
  );
}
