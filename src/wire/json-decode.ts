// JSON -> in-memory message, following the upstream master's parser rules:
// fields matched by exact proto name, unknown keys ignored, null = unset,
// enums by value name, numbers also from numeric strings, bytes as base64, and
// proto2 required fields checked after parsing; stricter than upstream on the
// shape of repeated fields (see applyValue).
import type protobuf from 'protobufjs/light.js';
import { Kind, assertStringKeyed, enumNames, enumOf, fieldKind, messageTypeOf } from './json-fields.js';
import { messageType } from './schema.js';

export type DecodeResult<T> = { ok: true; value: T } | { ok: false; error: string };

type JsonObject = Record<string, unknown>;
type Message = Record<string, unknown>;

interface DecodeField {
  readonly name: string;
  readonly number: number;
  readonly kind: Kind;
  readonly repeated: boolean; // maps too: upstream treats them as repeated entries
  readonly map: boolean;
  readonly required: boolean;
  readonly enumNames: ReadonlyMap<string, string> | undefined;
  readonly messageType: protobuf.Type | undefined;
  readonly oneofSiblings: readonly string[];
}

interface DecodePlan {
  readonly byName: ReadonlyMap<string, DecodeField>;
  readonly required: readonly string[]; // declaration order
  readonly messageFields: readonly DecodeField[]; // field-number order
}

// A conversion problem; caught once at the top and turned into a value.
class ConversionError extends Error {}

// Returned by a conversion whose value is dropped (unknown enum name).
const skip = Symbol('skip');

export function decodeJson<T>(typeName: string, text: string, label = 'Call'): DecodeResult<T> {
  const type = messageType(typeName);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `Failed to parse body into JSON: ${(err as Error).message}` };
  }
  if (!isObject(parsed)) return callFailure(label, 'Expecting a JSON object');
  let value: Message;
  lacking = false;
  try {
    value = parseMessage(planFor(type), parsed);
  } catch (err) {
    if (err instanceof ConversionError) return callFailure(label, err.message);
    throw err;
  }
  // Only a message that lacked a required field is walked again, to name them all in order.
  if (lacking) {
    const missing: string[] = [];
    collectMissing(planFor(type), value, '', missing);
    if (missing.length > 0) return callFailure(label, `Missing required fields: ${missing.join(', ')}`);
  }
  return { ok: true, value: value as T };
}

function callFailure<T>(label: string, detail: string): DecodeResult<T> {
  return { ok: false, error: `Failed to convert JSON into ${label} protobuf: ${detail}` };
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// Keys are visited in sorted order, as upstream's JSON object (a sorted map)
// does, so that the first error reported is the same one.
function parseMessage(plan: DecodePlan, json: JsonObject): Message {
  const out: Message = {};
  for (const key of sortedKeys(json)) {
    const field = plan.byName.get(key);
    if (field !== undefined) applyValue(field, out, json[key]);
  }
  for (const name of plan.required) if (out[name] === undefined) lacking = true;
  return out;
}

/** Up to this many keys are sorted by insertion: a call's objects have a handful, and a hostile one thousands. */
const INSERTION_SORT_MAX = 16;

/**
 * An object's keys in sorted order, as `sort()` orders them (keys are
 * distinct). A handful are sorted in place by insertion: V8's sort takes a
 * work array of its own, and a call decodes several objects.
 */
function sortedKeys(json: JsonObject): string[] {
  const keys = Object.keys(json);
  if (keys.length > INSERTION_SORT_MAX) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
  return keys;
}

/**
 * Set when a message parsed since the decode began lacks a required field
 * (one a later oneof member dropped counts too: the full walk then finds
 * nothing). Decoding is synchronous, so one flag serves every call.
 */
let lacking = false;

// The JSON must have the schema's shape: an array exactly where a field is
// repeated, an object where it is a map, no array or null inside an array.
// Upstream's visitor is looser (a lone value on a repeated field is one
// element, nested arrays flatten, null elements are skipped), which turns a
// malformed call into a different one instead of refusing it, and lets a
// body drive the recursion as deep as it nests. Every message level follows
// a field of the schema, which has no cycle, so decoding depth is bounded.
function applyValue(field: DecodeField, out: Message, v: unknown): void {
  if (v === null) return;
  if (field.map) {
    applyMapObject(field, out, v);
    return;
  }
  if (field.repeated) {
    applyArray(field, out, v);
    return;
  }
  if (Array.isArray(v)) throw notExpecting('array', field);
  const converted = convertSingle(field, v);
  if (converted === skip) return;
  // Setting one member of a oneof clears the others, as protobuf does.
  for (const sibling of field.oneofSiblings) delete out[sibling];
  out[field.name] = converted;
}

function applyArray(field: DecodeField, out: Message, v: unknown): void {
  if (!Array.isArray(v)) {
    throw new ConversionError(`Expecting a JSON array for field '${field.name}', not a JSON ${jsonKind(v)}`);
  }
  for (const element of v as unknown[]) {
    if (element === null || Array.isArray(element)) {
      throw new ConversionError(`Not expecting a JSON ${jsonKind(element)} in the array of field '${field.name}'`);
    }
    const converted = convertSingle(field, element);
    if (converted === skip) continue;
    const list = out[field.name] as unknown[] | undefined;
    if (list === undefined) out[field.name] = [converted];
    else list.push(converted);
  }
}

function applyMapObject(field: DecodeField, out: Message, v: unknown): void {
  if (!isObject(v)) throw notExpecting(jsonKind(v), field);
  const valueField = mapValueField(field);
  let record = out[field.name] as Record<string, unknown> | undefined;
  for (const key of sortedKeys(v)) {
    const raw = v[key];
    if (raw === null) continue;
    const converted = convertSingle(valueField, raw);
    if (converted === skip) continue;
    if (record === undefined) {
      record = {};
      out[field.name] = record;
    }
    setOwn(record, key, converted);
  }
}

// A map entry's value is an ordinary optional field named 'value'.
const mapValueFields = new WeakMap<DecodeField, DecodeField>();
function mapValueField(field: DecodeField): DecodeField {
  let valueField = mapValueFields.get(field);
  if (valueField === undefined) {
    valueField = { ...field, name: 'value', repeated: false, map: false, required: false };
    mapValueFields.set(field, valueField);
  }
  return valueField;
}

// '__proto__' must become an own key, never the prototype.
function setOwn(record: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    record[key] = value;
  }
}

/**
 * Where the spec writes a message as its bare value, that form is read as
 * `{"value": v}` too: an OperationID is "a plain string" in
 * ACKNOWLEDGE_OPERATION_STATUS, and task limits map a resource name "to a
 * number or the string Infinity" (a Value.Scalar upstream). Upstream's own
 * form, the object, is read as before; other ids stay objects only.
 */
const BARE_VALUE_TYPES = new Set(['.mesos.v1.OperationID', '.mesos.v1.Value.Scalar']);

function isWrapper(field: DecodeField): boolean {
  return field.messageType !== undefined && BARE_VALUE_TYPES.has(field.messageType.fullName);
}

function convertSingle(field: DecodeField, v: unknown): unknown {
  if (v !== null && typeof v !== 'object' && isWrapper(field)) {
    return parseMessage(planFor(field.messageType!), { value: v });
  }
  switch (typeof v) {
    case 'string':
      return convertString(field, v);
    case 'number':
      if (field.kind <= Kind.Uint64) return checkNumber(field, v, String(v));
      throw notExpecting('number', field);
    case 'boolean':
      if (field.kind === Kind.Bool) return v;
      throw notExpecting('boolean', field);
    default:
      if (!isObject(v)) throw notExpecting(jsonKind(v), field);
      if (field.messageType === undefined) throw notExpecting('object', field);
      return parseMessage(planFor(field.messageType), v);
  }
}

function convertString(field: DecodeField, v: string): unknown {
  switch (field.kind) {
    case Kind.String:
      return v;
    case Kind.Bytes:
      return decodeBase64(field, v);
    case Kind.Enum: {
      const name = field.enumNames?.get(v);
      if (name !== undefined) return name;
      // Upstream drops an unknown name unless the field is required.
      if (field.required) throw new ConversionError(`Failed to find enum for '${v}'`);
      return skip;
    }
    case Kind.Bool:
      if (v === 'true') return true;
      if (v === 'false') return false;
      throw new ConversionError(`Failed to convert '${v}' to bool for field '${field.name}'`);
    case Kind.Message:
      throw notExpecting('string', field);
    default:
      return checkNumber(field, parseNumericString(field, v), v);
  }
}

const numericText = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

function parseNumericString(field: DecodeField, v: string): number {
  if (numericText.test(v)) return Number(v);
  if (field.kind === Kind.Double) {
    // "NaN" is accepted too, so that every value the encoder writes reads back.
    if (v === 'Infinity') return Infinity;
    if (v === '-Infinity') return -Infinity;
    if (v === 'NaN') return NaN;
  }
  throw conversionFailure(field, v);
}

// Integer ranges per kind; 64-bit bounds are as close as a double gets.
const integerRanges: Record<number, readonly [number, number]> = {
  [Kind.Int32]: [-2147483648, 2147483647],
  [Kind.Uint32]: [0, 4294967295],
  // As doubles, which is how JSON numbers arrive: 2^63 - 1 and 2^64 - 1 round to these.
  [Kind.Int64]: [-(2 ** 63), 2 ** 63],
  [Kind.Uint64]: [0, 2 ** 64],
};

function checkNumber(field: DecodeField, n: number, text: string): number {
  if (field.kind === Kind.Double) return n;
  const range = integerRanges[field.kind];
  if (range === undefined || !Number.isInteger(n) || n < range[0] || n > range[1]) {
    throw conversionFailure(field, text);
  }
  return n;
}

const kindNames: Record<number, string> = {
  [Kind.Double]: 'double',
  [Kind.Int32]: 'int32',
  [Kind.Uint32]: 'uint32',
  [Kind.Int64]: 'int64',
  [Kind.Uint64]: 'uint64',
};

function conversionFailure(field: DecodeField, text: string): ConversionError {
  const target = kindNames[field.kind] ?? 'number';
  return new ConversionError(`Failed to convert '${text}' to ${target} for field '${field.name}'`);
}

const base64Alphabet = /[^A-Za-z0-9+/]/;

// Upstream's decoder skips whitespace and stops at the first '='.
function decodeBase64(field: DecodeField, v: string): Uint8Array {
  const stop = v.indexOf('=');
  const body = (stop < 0 ? v : v.slice(0, stop)).replace(/\s+/g, '');
  const bad = base64Alphabet.exec(body);
  let problem: string | undefined;
  if (bad !== null) problem = `Invalid character '${bad[0]}'`;
  else if (body.length % 4 === 1) problem = 'Invalid length';
  if (problem !== undefined) {
    throw new ConversionError(`Failed to base64 decode bytes field '${field.name}': ${problem}`);
  }
  return new Uint8Array(Buffer.from(body, 'base64'));
}

function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'object' : typeof v;
}

function notExpecting(kind: string, field: DecodeField): ConversionError {
  return new ConversionError(`Not expecting a JSON ${kind} for field '${field.name}'`);
}

// Paths as protobuf's initialization check writes them: this message's
// missing required fields in declaration order, then those of its
// sub-messages in field-number order, repeated elements as `name[i]`.
function collectMissing(plan: DecodePlan, msg: Message, prefix: string, out: string[]): void {
  for (const name of plan.required) {
    if (msg[name] === undefined) out.push(prefix + name);
  }
  for (const field of plan.messageFields) {
    const v = msg[field.name];
    if (v === undefined || field.messageType === undefined) continue;
    const sub = planFor(field.messageType);
    if (field.map) {
      Object.values(v as Message).forEach((entry, i) => {
        collectMissing(sub, entry as Message, `${prefix}${field.name}[${i}].value.`, out);
      });
    } else if (field.repeated) {
      (v as Message[]).forEach((element, i) => {
        collectMissing(sub, element, `${prefix}${field.name}[${i}].`, out);
      });
    } else {
      collectMissing(sub, v as Message, `${prefix}${field.name}.`, out);
    }
  }
}

const plans = new Map<protobuf.Type, DecodePlan>();

function planFor(type: protobuf.Type): DecodePlan {
  const cached = plans.get(type);
  if (cached !== undefined) return cached;
  const fields = type.fieldsArray.map(toDecodeField);
  const plan: DecodePlan = {
    byName: new Map(fields.map((f) => [f.name, f])),
    required: fields.filter((f) => f.required).map((f) => f.name),
    messageFields: fields.filter((f) => f.kind === Kind.Message).sort((a, b) => a.number - b.number),
  };
  plans.set(type, plan);
  return plan;
}

function toDecodeField(field: protobuf.Field): DecodeField {
  assertStringKeyed(field);
  const e = enumOf(field);
  const oneof = field.partOf;
  return {
    name: field.name,
    number: field.id,
    kind: fieldKind(field),
    repeated: field.repeated || field.map,
    map: field.map,
    required: field.required,
    enumNames: e === undefined ? undefined : enumNames(e),
    messageType: messageTypeOf(field),
    oneofSiblings: oneof === null ? [] : oneof.oneof.filter((n) => n !== field.name),
  };
}
