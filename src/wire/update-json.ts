/**
 * The JSON text of an UPDATE event, written straight from the core's
 * status: every launched task sends its framework a few, and the generic
 * encoder builds a wire message first and walks its schema. The text is
 * the generic encoder's, byte for byte (the fields in declaration order,
 * enums by their canonical names, bytes in base64, the timestamp as a
 * double); a status with a resource limitation, or a value the encoder
 * would refuse, goes the generic way.
 */
import type { TaskStatus } from '../core/model/types.js';
import { hexToBytes } from './bytes.js';
import { enumJson, formatDouble, quote } from './json-encode.js';

const STATUS = 'mesos.v1.TaskStatus';

/** Quoted enum values, by field, as the encoder writes them. */
const enums = new Map<string, Map<string, string | undefined>>();

function enumText(field: string, value: string): string | undefined {
  let byValue = enums.get(field);
  if (byValue === undefined) enums.set(field, (byValue = new Map()));
  if (!byValue.has(value)) byValue.set(value, enumJson(STATUS, field, value));
  return byValue.get(value);
}

function base64(bytes: Uint8Array): string {
  return `"${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}"`;
}

const HEX = /^(?:[0-9a-fA-F]{2})*$/;

/** The uuid's bytes in base64: hex read by Buffer when it is hex throughout (it stops at a bad digit, so others go the encoder's way). */
function uuidBase64(hex: string): string {
  return HEX.test(hex) ? `"${Buffer.from(hex, 'hex').toString('base64')}"` : base64(hexToBytes(hex));
}

/** `{"type":"UPDATE","update":{"status":...}}`, or undefined when the generic encoder must write it. */
export function updateJson(s: TaskStatus): string | undefined {
  if (s.limitation !== undefined) return undefined;
  const state = enumText('state', s.state);
  const source = enumText('source', s.source);
  const reason = s.reason === undefined ? '' : enumText('reason', s.reason);
  if (state === undefined || source === undefined || reason === undefined) return undefined;
  if (s.unreachableTimeMs !== undefined && !Number.isInteger(Math.round(s.unreachableTimeMs * 1e6))) return undefined;
  let out = `{"type":"UPDATE","update":{"status":{"task_id":{"value":${quote(s.taskId)}},"state":${state}`;
  if (s.message !== undefined) out += `,"message":${quote(s.message)}`;
  out += `,"source":${source}`;
  if (s.reason !== undefined) out += `,"reason":${reason}`;
  if (s.data !== undefined) out += `,"data":${base64(s.data)}`;
  if (s.agentId !== undefined) out += `,"agent_id":{"value":${quote(s.agentId)}}`;
  if (s.executorId !== undefined) out += `,"executor_id":{"value":${quote(s.executorId)}}`;
  out += `,"timestamp":${formatDouble(s.timestampMs / 1000)}`;
  if (s.uuid !== undefined) out += `,"uuid":${uuidBase64(s.uuid)}`;
  if (s.containerId !== undefined) out += `,"container_status":{"container_id":{"value":${quote(s.containerId)}}}`;
  if (s.unreachableTimeMs !== undefined)
    out += `,"unreachable_time":{"nanoseconds":${String(Math.round(s.unreachableTimeMs * 1e6))}}`;
  return `${out}}}}`;
}
