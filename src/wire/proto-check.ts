/**
 * What protobufjs does not check when it decodes, done here so that a
 * protobuf body is either read exactly or rejected, never misread:
 *
 *   - `scanWireTypes`: every tag has a field number above 0, and every known
 *     field arrives with a wire type its type allows (a packed encoding for
 *     repeated numbers included); nested messages and map entries are
 *     scanned too. Unknown fields are skipped by their wire type; groups
 *     (wire types 3 and 4, unused by the schema) are refused.
 *   - `normalise`: the decoded object gets the shape the JSON decoder gives:
 *     an unknown enum number is dropped from an optional or repeated field
 *     (upstream keeps it out of the known fields) and refuses the message
 *     when the field is required; bytes become plain Uint8Arrays that own
 *     their memory instead of slices of the request body.
 */
import protobuf from 'protobufjs/light.js';

const VARINT = 0;
const FIXED64 = 1;
const LENGTH = 2;
const FIXED32 = 5;

const VARINT_TYPES = new Set(['int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'bool']);
const FIXED64_TYPES = new Set(['double', 'fixed64', 'sfixed64']);
const FIXED32_TYPES = new Set(['float', 'fixed32', 'sfixed32']);

class Malformed extends Error {}

/** Undefined when the bytes are well-formed for `type`, else the reason. */
export function scanWireTypes(type: protobuf.Type, bytes: Uint8Array): string | undefined {
  try {
    scanMessage(type, bytes, 0, bytes.length);
    return undefined;
  } catch (error) {
    if (error instanceof Malformed) return error.message;
    throw error;
  }
}

/** A field's tag: its number (never 0) and wire type, and where its value starts. */
function readTag(bytes: Uint8Array, pos: number, end: number): [number: number, wireType: number, next: number] {
  const [tag, next] = readVarint(bytes, pos, end);
  const number = Math.floor(tag / 8);
  if (number === 0) throw new Malformed('field number 0');
  return [number, tag % 8, next];
}

function scanMessage(type: protobuf.Type, bytes: Uint8Array, start: number, end: number): void {
  let pos = start;
  while (pos < end) {
    const [number, wireType, next] = readTag(bytes, pos, end);
    pos = next;
    const field = type.fieldsById[number];
    if (field !== undefined && !allowedWireTypes(field).includes(wireType)) {
      throw new Malformed(`wire type ${wireType} for field '${field.name}'`);
    }
    pos = skipValue(bytes, pos, end, wireType, field);
  }
}

function allowedWireTypes(field: protobuf.Field): number[] {
  const resolved = field.resolve();
  if (resolved instanceof protobuf.MapField || resolved.map) return [LENGTH];
  if (resolved.resolvedType instanceof protobuf.Enum || VARINT_TYPES.has(resolved.type))
    return packable(resolved, VARINT);
  if (FIXED64_TYPES.has(resolved.type)) return packable(resolved, FIXED64);
  if (FIXED32_TYPES.has(resolved.type)) return packable(resolved, FIXED32);
  return [LENGTH];
}

function packable(field: protobuf.Field, wireType: number): number[] {
  return field.repeated ? [wireType, LENGTH] : [wireType];
}

/** Skips one value; scans into it when it is a known message or map entry. */
function skipValue(bytes: Uint8Array, pos: number, end: number, wireType: number, field?: protobuf.Field): number {
  switch (wireType) {
    case VARINT:
      return readVarint(bytes, pos, end)[1];
    case FIXED64:
      return within(pos + 8, end);
    case FIXED32:
      return within(pos + 4, end);
    case LENGTH: {
      const [length, start] = readVarint(bytes, pos, end);
      const stop = within(start + length, end);
      if (field instanceof protobuf.MapField) scanMapEntry(field, bytes, start, stop);
      else if (field?.resolvedType instanceof protobuf.Type) scanMessage(field.resolvedType, bytes, start, stop);
      return stop;
    }
    default:
      throw new Malformed(`wire type ${wireType}`);
  }
}

/** A map entry is a message with the key as field 1 and the value as field 2. */
function scanMapEntry(field: protobuf.MapField, bytes: Uint8Array, start: number, end: number): void {
  let pos = start;
  while (pos < end) {
    const [number, wireType, next] = readTag(bytes, pos, end);
    pos = next;
    if (number === 2 && field.resolvedType instanceof protobuf.Type) {
      if (wireType !== LENGTH) throw new Malformed(`wire type ${wireType} for a value of '${field.name}'`);
      const [length, valueStart] = readVarint(bytes, pos, end);
      pos = within(valueStart + length, end);
      scanMessage(field.resolvedType, bytes, valueStart, pos);
    } else {
      pos = skipValue(bytes, pos, end, wireType);
    }
  }
}

function readVarint(bytes: Uint8Array, pos: number, end: number): [value: number, next: number] {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= end) throw new Malformed('truncated varint');
    const b = bytes[pos++]!;
    value += (b & 0x7f) * scale;
    if ((b & 0x80) === 0) return [value, pos];
    scale *= 128;
  }
  throw new Malformed('varint longer than 10 bytes');
}

function within(pos: number, end: number): number {
  if (pos > end) throw new Malformed('truncated field');
  return pos;
}

interface Plan {
  readonly enums: readonly { name: string; required: boolean; repeated: boolean }[];
  readonly bytes: readonly { name: string; repeated: boolean }[];
  readonly messages: readonly { name: string; type: protobuf.Type; repeated: boolean; map: boolean }[];
}

const plans = new Map<protobuf.Type, Plan>();

function planOf(type: protobuf.Type): Plan {
  let plan = plans.get(type);
  if (plan !== undefined) return plan;
  const enums: Plan['enums'][number][] = [];
  const bytesFields: Plan['bytes'][number][] = [];
  const messages: Plan['messages'][number][] = [];
  for (const field of type.fieldsArray) {
    const f = field.resolve();
    const map = f instanceof protobuf.MapField || f.map;
    if (f.resolvedType instanceof protobuf.Enum && !map)
      enums.push({ name: f.name, required: f.required, repeated: f.repeated });
    else if (f.resolvedType instanceof protobuf.Type)
      messages.push({ name: f.name, type: f.resolvedType, repeated: f.repeated, map });
    else if (f.type === 'bytes' && !map) bytesFields.push({ name: f.name, repeated: f.repeated });
  }
  plan = { enums, bytes: bytesFields, messages };
  plans.set(type, plan);
  return plan;
}

/** Reshapes a decoded object in place; a reason when it must be refused. */
export function normalise(type: protobuf.Type, value: Record<string, unknown>): string | undefined {
  const plan = planOf(type);
  for (const e of plan.enums) {
    const v = value[e.name];
    if (v === undefined) continue;
    if (e.repeated && Array.isArray(v)) {
      const known = v.filter((x) => typeof x === 'string');
      if (known.length === 0) delete value[e.name];
      else value[e.name] = known;
    } else if (typeof v === 'number') {
      if (e.required) return `unknown value ${v} of enum field '${e.name}'`;
      delete value[e.name];
    }
  }
  for (const b of plan.bytes) {
    const v = value[b.name];
    if (v instanceof Uint8Array) value[b.name] = new Uint8Array(v);
    else if (b.repeated && Array.isArray(v)) value[b.name] = v.map((x: Uint8Array) => new Uint8Array(x));
  }
  for (const m of plan.messages) {
    const v = value[m.name];
    if (v === undefined) continue;
    const children = m.map ? Object.values(v as object) : m.repeated ? (v as unknown[]) : [v];
    for (const child of children) {
      const error = normalise(m.type, child as Record<string, unknown>);
      if (error !== undefined) return error;
    }
  }
  return undefined;
}
