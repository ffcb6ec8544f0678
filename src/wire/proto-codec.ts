/**
 * The protobuf codec of the wire layer, on the same in-memory representation
 * as the JSON codec (proto field names, enums by name, bytes as Uint8Array,
 * 64-bit integers as numbers), so a message decoded from either encoding is
 * the same value. protobufjs writes proto2 required fields even at their
 * zero value (`Resource.type` SCALAR, `TaskStatus.state` TASK_STARTING),
 * which strict clients need.
 */
import type { DecodeResult } from './json-decode.js';
import { normalise, scanWireTypes } from './proto-check.js';
import { messageType } from './schema.js';

const TO_OBJECT = { enums: String, longs: Number, defaults: false, arrays: false, objects: false } as const;

export function decodeProto<T>(typeName: string, bytes: Uint8Array, label = 'Call'): DecodeResult<T> {
  const type = messageType(typeName);
  const failed: DecodeResult<T> = { ok: false, error: `Failed to parse body into ${label} protobuf` };
  if (scanWireTypes(type, bytes) !== undefined) return failed;
  let value: Record<string, unknown>;
  try {
    value = type.toObject(type.decode(bytes), TO_OBJECT);
  } catch {
    return failed;
  }
  return normalise(type, value) === undefined ? { ok: true, value: value as T } : failed;
}

export function encodeProto(typeName: string, value: object): Uint8Array {
  const type = messageType(typeName);
  return type.encode(type.fromObject(value as Record<string, unknown>)).finish();
}
