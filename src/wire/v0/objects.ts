/**
 * The task, status, offer and executor objects shared by `/state`,
 * `/frameworks` and `/tasks`. Keys are written in the order the endpoints
 * print them.
 */
import type { ExecutorRecord, Offer, Task } from '../../core/model/records.js';
import type { CommandSpec, ExecutorSpec, TaskStatus } from '../../core/model/types.js';
import type { FrameworkView } from '../../core/view.js';
import { Double } from './json.js';
import { labelsJson, resourcesSummary, secondsOf, type JsonObject } from './summary.js';

/** `state, timestamp`, then the container status when the agent reported one. */
export function statusObject(status: TaskStatus): JsonObject {
  return {
    state: status.state,
    timestamp: secondsOf(status.timestampMs),
    ...(status.containerId === undefined ? {} : { container_status: { container_id: { value: status.containerId } } }),
  };
}

/**
 * The task object. `user` is the framework's user: the core keeps no
 * per-command user, so that is the user every task runs as. Discovery,
 * container and health check live only in the opaque wire TaskInfo and are
 * left out.
 */
export function taskObject(task: Task, user: string): JsonObject {
  const { spec } = task;
  return {
    id: spec.taskId,
    name: spec.name,
    framework_id: task.frameworkId,
    executor_id: task.executorId ?? '',
    slave_id: task.agentId,
    state: task.state,
    resources: resourcesSummary(task.resources),
    ...(spec.limits === undefined || Object.keys(spec.limits).length === 0 ? {} : { limits: limitsJson(spec.limits) }),
    role: task.role,
    statuses: task.statuses.map(statusObject),
    user,
    ...(spec.labels.length === 0 ? {} : { labels: labelsJson(spec.labels) }),
  };
}

/** Limits are doubles; an unlimited resource is the string `Infinity`, which JSON cannot write as a number. */
function limitsJson(limits: Readonly<Record<string, number>>): JsonObject {
  const out: JsonObject = {};
  for (const [name, value] of Object.entries(limits))
    out[name] = Number.isFinite(value) ? new Double(value) : 'Infinity';
  return out;
}

/** The master's offers always carry their allocation role, whatever the framework was sent. */
export function offerObject(offer: Offer): JsonObject {
  return {
    id: offer.id,
    framework_id: offer.frameworkId,
    allocation_info: { role: offer.role },
    slave_id: offer.agentId,
    resources: resourcesSummary(offer.resources),
  };
}

/**
 * The executor object. Its resources are the ones the master accounts for
 * it; `role` is their allocation role, absent when it holds none.
 */
export function executorObject(fw: FrameworkView, record: ExecutorRecord, spec: ExecutorSpec): JsonObject {
  const role = record.resources.find((r) => r.allocationRole !== undefined)?.allocationRole;
  return {
    executor_id: record.executorId,
    name: spec.name ?? '',
    framework_id: fw.id,
    command: commandJson(spec.command),
    resources: resourcesSummary(record.resources),
    ...(role === undefined ? {} : { role }),
    ...(spec.type === 'UNKNOWN' ? {} : { type: spec.type }),
    slave_id: record.agentId,
  };
}

/** `argv` and `uris` are always written, even for an executor without a command. */
function commandJson(command: CommandSpec | undefined): JsonObject {
  if (command === undefined) return { argv: [], uris: [] };
  return {
    shell: command.shell,
    ...(command.value === undefined ? {} : { value: command.value }),
    argv: [...command.arguments],
    uris: [],
  };
}
