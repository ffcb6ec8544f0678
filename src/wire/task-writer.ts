/**
 * The operator API's Task (GET_STATE, GET_TASKS) written straight to JSON
 * text and to protobuf bytes, for the reads that write hundreds of
 * thousands of them: the same text as `encodeJson` and the same bytes as
 * `encodeProto` of `taskToWire`, without the message objects in between.
 * A task's resources are encoded once per kind of bag (bag-memo.ts). The rare cases go through the generic encoders: a task whose
 * TaskInfo carried labels, discovery, a container, checks or limits, a
 * status with a message, reason, data, limitation or unreachable time, and
 * any text that is not ASCII.
 */
import protobuf from 'protobufjs/light.js';
import type { Task } from '../core/model/records.js';
import type { TaskStatus } from '../core/model/types.js';
import { BagMemo } from './bag-memo.js';
import { resourcesToWire } from './convert-common.js';
import type { mesos } from './generated/types.js';
import { encodeJson, formatDouble, quote } from './json-encode.js';
import { taskToWire } from './operator-state.js';
import { encodeProto } from './proto-codec.js';
import { isAscii, ProtoWriter, varintLength } from './proto-writer.js';
import { messageType } from './schema.js';
import { taskStatusToWire } from './scheduler-out.js';

function enumValues(typeName: string, field: string): Readonly<Record<string, number>> {
  const resolved = messageType(typeName).fields[field]?.resolvedType;
  if (!(resolved instanceof protobuf.Enum)) throw new Error(`'${typeName}.${field}' is no enum`);
  return resolved.values;
}

const TASK_STATES = enumValues('mesos.v1.Task', 'state');
const SOURCES = enumValues('mesos.v1.TaskStatus', 'source');

/** Field numbers of mesos.v1.Task and mesos.v1.TaskStatus (mesos.proto). */
const TASK = {
  name: 1,
  taskId: 2,
  frameworkId: 3,
  executorId: 4,
  agentId: 5,
  state: 6,
  resources: 7,
  statuses: 8,
  updateState: 9,
  updateUuid: 10,
  user: 14,
};
const STATUS = {
  taskId: 1,
  state: 2,
  agentId: 5,
  timestamp: 6,
  executorId: 7,
  source: 9,
  uuid: 11,
  containerStatus: 13,
};
/** ContainerStatus.container_id. */
const CONTAINER_ID = 4;

/** A uuid as the core keeps it: hex digits, two a byte. */
const HEX = /^(?:[0-9a-f]{2})*$/;

/** Whether the task goes through the writers here (else through the generic encoders). */
function direct(task: Task, user: string): boolean {
  const { spec } = task;
  const raw = spec.raw as mesos.v1.TaskInfo | undefined;
  if (
    raw !== undefined &&
    (raw.discovery ?? raw.container ?? raw.health_check ?? raw.kill_policy ?? raw.limits) !== undefined
  )
    return false;
  if (spec.labels.length > 0 || !(task.state in TASK_STATES)) return false;
  if (task.statusUpdateState !== undefined && !(task.statusUpdateState in TASK_STATES)) return false;
  if (task.statusUpdateUuid !== undefined && !HEX.test(task.statusUpdateUuid)) return false;
  return (
    isAscii(spec.name) &&
    isAscii(spec.taskId) &&
    isAscii(task.frameworkId) &&
    isAscii(task.agentId) &&
    isAscii(user) &&
    isAscii(task.executorId ?? '')
  );
}

function directStatus(s: TaskStatus): boolean {
  if ((s.message ?? s.reason ?? s.data ?? s.unreachableTimeMs ?? s.limitation) !== undefined) return false;
  if (!(s.state in TASK_STATES) || !(s.source in SOURCES)) return false;
  if (s.uuid !== undefined && !HEX.test(s.uuid)) return false;
  return isAscii(s.taskId) && isAscii(s.agentId ?? '') && isAscii(s.executorId ?? '') && isAscii(s.containerId ?? '');
}

/** A list of resources as JSON text (its entries, comma-separated, without the brackets). */
export const resourcesJson = new BagMemo((bag) =>
  resourcesToWire(bag)
    .map((r) => encodeJson('mesos.v1.Resource', r))
    .join(','),
);

/** The `resources` field entries of a Task as bytes. */
const resourcesProto = new BagMemo((bag) => {
  const out = new ProtoWriter(256);
  for (const r of resourcesToWire(bag)) out.bytes(TASK.resources, encodeProto('mesos.v1.Resource', r));
  return out.take(true);
});

const base64 = (hex: string): string => `"${Buffer.from(hex, 'hex').toString('base64')}"`;

/** `encodeJson('mesos.v1.Task', taskToWire(task, user))`. */
export function taskWireJson(task: Task, user: string): string {
  if (!direct(task, user)) return encodeJson('mesos.v1.Task', taskToWire(task, user));
  const { spec } = task;
  let out = `{"name":${quote(spec.name)},"task_id":{"value":${quote(spec.taskId)}},"framework_id":{"value":${quote(task.frameworkId)}}`;
  if (task.executorId !== undefined) out += `,"executor_id":{"value":${quote(task.executorId)}}`;
  out += `,"agent_id":{"value":${quote(task.agentId)}},"state":"${task.state}"`;
  if (task.resources.length > 0) out += `,"resources":[${resourcesJson.of(task.resources)}]`;
  const { statuses } = task;
  if (statuses.length > 0) {
    out += ',"statuses":[';
    for (let i = 0; i < statuses.length; i++) out += (i === 0 ? '' : ',') + statusJson(statuses[i]!);
    out += ']';
  }
  if (task.statusUpdateState !== undefined) out += `,"status_update_state":"${task.statusUpdateState}"`;
  if (task.statusUpdateUuid !== undefined) out += `,"status_update_uuid":${base64(task.statusUpdateUuid)}`;
  return `${out},"user":${quote(user)}}`;
}

function statusJson(s: TaskStatus): string {
  if (!directStatus(s)) return encodeJson('mesos.v1.TaskStatus', taskStatusToWire(s));
  let out = `{"task_id":{"value":${quote(s.taskId)}},"state":"${s.state}","source":"${s.source}"`;
  if (s.agentId !== undefined) out += `,"agent_id":{"value":${quote(s.agentId)}}`;
  if (s.executorId !== undefined) out += `,"executor_id":{"value":${quote(s.executorId)}}`;
  out += `,"timestamp":${formatDouble(s.timestampMs / 1000)}`;
  if (s.uuid !== undefined) out += `,"uuid":${base64(s.uuid)}`;
  if (s.containerId !== undefined) out += `,"container_status":{"container_id":{"value":${quote(s.containerId)}}}`;
  return `${out}}`;
}

/** Writes the task as field `field` of the enclosing message: the bytes of `encodeProto('mesos.v1.Task', taskToWire(task, user))` with their tag and length. */
export function writeTaskProto(out: ProtoWriter, field: number, task: Task, user: string): void {
  if (!direct(task, user)) return out.bytes(field, encodeProto('mesos.v1.Task', taskToWire(task, user)));
  const at = out.begin(field);
  const { spec } = task;
  out.string(TASK.name, spec.name);
  out.idMessage(TASK.taskId, spec.taskId);
  out.idMessage(TASK.frameworkId, task.frameworkId);
  if (task.executorId !== undefined) out.idMessage(TASK.executorId, task.executorId);
  out.idMessage(TASK.agentId, task.agentId);
  out.uint(TASK.state, TASK_STATES[task.state]!);
  out.raw(resourcesProto.of(task.resources));
  for (const status of task.statuses) writeStatusProto(out, status);
  if (task.statusUpdateState !== undefined) out.uint(TASK.updateState, TASK_STATES[task.statusUpdateState]!);
  if (task.statusUpdateUuid !== undefined) out.hexBytes(TASK.updateUuid, task.statusUpdateUuid);
  out.string(TASK.user, user);
  out.end(at);
}

function writeStatusProto(out: ProtoWriter, s: TaskStatus): void {
  if (!directStatus(s)) return out.bytes(TASK.statuses, encodeProto('mesos.v1.TaskStatus', taskStatusToWire(s)));
  const at = out.begin(TASK.statuses);
  out.idMessage(STATUS.taskId, s.taskId);
  out.uint(STATUS.state, TASK_STATES[s.state]!);
  if (s.agentId !== undefined) out.idMessage(STATUS.agentId, s.agentId);
  out.double(STATUS.timestamp, s.timestampMs / 1000);
  if (s.executorId !== undefined) out.idMessage(STATUS.executorId, s.executorId);
  out.uint(STATUS.source, SOURCES[s.source]!);
  if (s.uuid !== undefined) out.hexBytes(STATUS.uuid, s.uuid);
  if (s.containerId !== undefined) {
    const container = out.begin(STATUS.containerStatus);
    out.idMessage(CONTAINER_ID, s.containerId);
    out.end(container);
  }
  out.end(at);
}

/** Bytes of a length-delimited field numbered below 16 (a one-byte tag) whose content takes `length` bytes. */
export const delimitedLength = (length: number): number => 1 + varintLength(length) + length;

/** Bytes of a message holding one ASCII string field 1 (`ProtoWriter.idMessage`), with its tag and length. */
const idLength = (value: string): number => delimitedLength(delimitedLength(value.length));

/** Bytes of a varint field numbered below 16. */
const uintLength = (value: number): number => 1 + varintLength(value);

/** The length of the Task message `writeTaskProto` writes (without the tag and length before it), measured, not written. */
export function taskProtoLength(task: Task, user: string): number {
  if (!direct(task, user)) return encodeProto('mesos.v1.Task', taskToWire(task, user)).length;
  const { spec } = task;
  let n = delimitedLength(spec.name.length) + idLength(spec.taskId) + idLength(task.frameworkId);
  if (task.executorId !== undefined) n += idLength(task.executorId);
  n += idLength(task.agentId) + uintLength(TASK_STATES[task.state]!) + resourcesProto.of(task.resources).length;
  for (const status of task.statuses) n += delimitedLength(statusProtoLength(status));
  if (task.statusUpdateState !== undefined) n += uintLength(TASK_STATES[task.statusUpdateState]!);
  if (task.statusUpdateUuid !== undefined) n += delimitedLength(task.statusUpdateUuid.length >> 1);
  return n + delimitedLength(user.length);
}

function statusProtoLength(s: TaskStatus): number {
  if (!directStatus(s)) return encodeProto('mesos.v1.TaskStatus', taskStatusToWire(s)).length;
  let n = idLength(s.taskId) + uintLength(TASK_STATES[s.state]!);
  if (s.agentId !== undefined) n += idLength(s.agentId);
  n += 9;
  if (s.executorId !== undefined) n += idLength(s.executorId);
  n += uintLength(SOURCES[s.source]!);
  if (s.uuid !== undefined) n += delimitedLength(s.uuid.length >> 1);
  if (s.containerId !== undefined) n += delimitedLength(idLength(s.containerId));
  return n;
}
