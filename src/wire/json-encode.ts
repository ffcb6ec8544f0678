// In-memory message -> JSON text, as upstream renders protobuf: proto field
// names in declaration order, set fields only, repeated and map fields only
// when non-empty, unset fields with an explicit non-deprecated default written
// with that default, enums by name, bytes as padded base64, integers bare and
// doubles with a decimal point.
//
// This runs for every event sent to every subscriber, so each message type
// gets a precomputed plan (keys pre-quoted, defaults pre-rendered) and the
// text is built by plain concatenation.
//
// Output is pure ASCII: clients read each RecordIO record as one line, so
// every non-ASCII character is written as a \uXXXX escape.
//
// Non-finite doubles: upstream's writer emits bare NaN/Infinity tokens, which
// no JSON parser accepts and would break the whole event stream. They are
// written as the strings "NaN", "Infinity" and "-Infinity" instead, which the
// decoder (like upstream's) accepts for double fields.
import type protobuf from 'protobufjs/light.js';
import {
  Kind,
  assertStringKeyed,
  enumNames,
  enumOf,
  explicitDefault,
  fieldKind,
  isDeprecated,
  messageTypeOf,
} from './json-fields.js';
import { messageType } from './schema.js';

type Message = Record<string, unknown>;

interface EncodeField {
  readonly name: string;
  readonly firstKey: string; // '"name":'
  readonly nextKey: string; // ',"name":'
  readonly kind: Kind;
  readonly repeated: boolean;
  readonly map: boolean;
  // name (aliases included) -> quoted canonical name
  readonly quotedEnum: ReadonlyMap<string, string> | undefined;
  readonly messageType: protobuf.Type | undefined;
  readonly defaultJson: string | undefined;
  plan: EncodePlan | undefined; // nested plan, filled on first use
}

interface EncodePlan {
  readonly typeName: string;
  readonly fields: readonly EncodeField[];
}

export function encodeJson(typeName: string, value: object): string {
  return writeMessage(planFor(messageType(typeName)), value as Message);
}

/** An enum value of a message's field as the encoder writes it (quoted, canonical), or undefined if it is none. */
export function enumJson(typeName: string, fieldName: string, value: string): string | undefined {
  return planFor(messageType(typeName))
    .fields.find((f) => f.name === fieldName)
    ?.quotedEnum?.get(value);
}

function writeMessage(plan: EncodePlan, msg: Message): string {
  let out = '{';
  let first = true;
  for (const field of plan.fields) {
    const v = msg[field.name];
    let json: string;
    if (v === undefined || v === null) {
      if (field.defaultJson === undefined) continue;
      json = field.defaultJson;
    } else if (field.map) {
      json = writeMap(plan, field, v);
      if (json === '') continue;
    } else if (field.repeated) {
      if (!Array.isArray(v)) throw badValue(plan, field, v);
      if (v.length === 0) continue;
      json = writeArray(plan, field, v);
    } else {
      json = writeSingle(plan, field, v);
    }
    out += (first ? field.firstKey : field.nextKey) + json;
    first = false;
  }
  return `${out}}`;
}

function writeArray(plan: EncodePlan, field: EncodeField, list: readonly unknown[]): string {
  let out = '[';
  for (let i = 0; i < list.length; i++) {
    if (i > 0) out += ',';
    out += writeSingle(plan, field, list[i]);
  }
  return `${out}]`;
}

// Returns '' for an empty map, which is then left out.
function writeMap(plan: EncodePlan, field: EncodeField, record: unknown): string {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    throw badValue(plan, field, record);
  }
  let out = '';
  for (const key of Object.keys(record)) {
    out += `${(out === '' ? '{' : ',') + quote(key)}:`;
    out += writeSingle(plan, field, (record as Message)[key]);
  }
  return out === '' ? '' : `${out}}`;
}

function writeSingle(plan: EncodePlan, field: EncodeField, v: unknown): string {
  switch (field.kind) {
    case Kind.String:
      if (typeof v !== 'string') throw badValue(plan, field, v);
      return quote(v);
    case Kind.Bool:
      if (typeof v !== 'boolean') throw badValue(plan, field, v);
      return v ? 'true' : 'false';
    case Kind.Double:
      if (typeof v !== 'number') throw badValue(plan, field, v);
      return formatDouble(v);
    case Kind.Enum: {
      const quoted = typeof v === 'string' ? field.quotedEnum?.get(v) : undefined;
      if (quoted === undefined) throw badValue(plan, field, v);
      return quoted;
    }
    case Kind.Bytes:
      if (!(v instanceof Uint8Array)) throw badValue(plan, field, v);
      return `"${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')}"`;
    case Kind.Message:
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw badValue(plan, field, v);
      field.plan ??= planFor(field.messageType as protobuf.Type);
      return writeMessage(field.plan, v as Message);
    default:
      if (typeof v !== 'number' || !Number.isInteger(v)) throw badValue(plan, field, v);
      return String(v);
  }
}

// Writing a value of the wrong shape is a bug in the caller, not a rejection.
function badValue(plan: EncodePlan, field: EncodeField, v: unknown): Error {
  const shown = typeof v === 'string' ? `'${v}'` : Array.isArray(v) ? 'an array' : typeof v;
  return new Error(`Cannot encode ${shown} as field '${field.name}' of '${plan.typeName}'`);
}

// Shortest round-trip digits, with upstream's spelling: whole numbers keep
// '.0' (15 -> 15.0), exponents have no '+' (1e21, not 1e+21), -0 is -0.0.
export function formatDouble(v: number): string {
  if (Number.isInteger(v) && Math.abs(v) < 1e21) {
    return Object.is(v, -0) ? '-0.0' : `${v}.0`;
  }
  if (!Number.isFinite(v)) {
    if (Number.isNaN(v)) return '"NaN"';
    return v > 0 ? '"Infinity"' : '"-Infinity"';
  }
  const s = String(v);
  return s.includes('e+') ? s.replace('e+', 'e') : s;
}

const plainAscii = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const nonAscii = /[\u007f-\uffff]/;
const nonAsciiAll = /[\u007f-\uffff]/g;

function escapeUnit(ch: string): string {
  return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

// JSON.stringify escapes quotes, backslashes, control characters and lone
// surrogates; DEL and everything above it are escaped here.
export function quote(s: string): string {
  // Most strings (ids, names, states) need no escaping at all.
  if (plainAscii.test(s)) return `"${s}"`;
  const json = JSON.stringify(s);
  return nonAscii.test(json) ? json.replace(nonAsciiAll, escapeUnit) : json;
}

const plans = new Map<protobuf.Type, EncodePlan>();

function planFor(type: protobuf.Type): EncodePlan {
  const cached = plans.get(type);
  if (cached !== undefined) return cached;
  const plan: EncodePlan = {
    typeName: type.fullName.slice(1),
    fields: type.fieldsArray.map(toEncodeField),
  };
  plans.set(type, plan);
  return plan;
}

function toEncodeField(field: protobuf.Field): EncodeField {
  assertStringKeyed(field);
  const kind = fieldKind(field);
  const e = enumOf(field);
  const quotedEnum =
    e === undefined ? undefined : new Map([...enumNames(e)].map(([name, canonical]) => [name, `"${canonical}"`]));
  const encodeField: EncodeField = {
    name: field.name,
    firstKey: `${quote(field.name)}:`,
    nextKey: `,${quote(field.name)}:`,
    kind,
    repeated: field.repeated,
    map: field.map,
    quotedEnum,
    messageType: messageTypeOf(field),
    defaultJson: undefined,
    plan: undefined,
  };
  const def = explicitDefault(field);
  if (def === undefined || isDeprecated(field)) return encodeField;
  const owner = `${field.parent?.fullName.slice(1) ?? ''}`;
  return {
    ...encodeField,
    defaultJson: writeSingle({ typeName: owner, fields: [] }, encodeField, def),
  };
}
