// fast-check arbitraries of in-memory messages, built from the schema by
// reflection, plus the default-filling the JSON round trip implies.
import fc from 'fast-check';
import protobuf from 'protobufjs/light.js';
import { enumNames } from '../../src/wire/json-fields.js';

type Message = Record<string, unknown>;

const int32 = fc.integer({ min: -2147483648, max: 2147483647 });
const uint32 = fc.integer({ min: 0, max: 4294967295 });
const int64 = fc.maxSafeInteger();
const uint64 = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });

const scalars: Record<string, fc.Arbitrary<unknown>> = {
  double: fc.double(),
  float: fc.double(),
  int32,
  sint32: int32,
  sfixed32: int32,
  uint32,
  fixed32: uint32,
  int64,
  sint64: int64,
  sfixed64: int64,
  uint64,
  fixed64: uint64,
  bool: fc.boolean(),
  string: fc.oneof(fc.string(), fc.string({ unit: 'binary' })),
  bytes: fc.uint8Array({ maxLength: 24 }),
};

const cache = new Map<string, fc.Arbitrary<Message>>();

// Past `depth`, optional message fields are left out so generation ends.
export function messageArbitrary(type: protobuf.Type, depth: number): fc.Arbitrary<Message> {
  const key = `${type.fullName}@${depth}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const plain: Record<string, fc.Arbitrary<unknown>> = {};
  const required: string[] = [];
  for (const field of type.fieldsArray) {
    if (field.partOf !== null) continue;
    const arb = fieldArbitrary(field, depth);
    if (arb === undefined) continue;
    plain[field.name] = arb;
    if (field.required) required.push(field.name);
  }
  // At most one member of each oneof is set.
  const oneofs = type.oneofsArray.map((o) =>
    fc.option(
      fc.oneof(
        ...o.fieldsArray.flatMap((f) => {
          const arb = fieldArbitrary(f, depth);
          return arb === undefined ? [] : [arb.map((v) => [f.name, v] as const)];
        }),
      ),
      { nil: undefined },
    ),
  );
  const arb = fc.tuple(fc.record(plain, { requiredKeys: required }), ...oneofs).map(([base, ...chosen]) => {
    const out: Message = { ...base };
    for (const c of chosen) if (c !== undefined) out[c[0]] = c[1];
    return out;
  });
  cache.set(key, arb);
  return arb;
}

function fieldArbitrary(field: protobuf.Field, depth: number): fc.Arbitrary<unknown> | undefined {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type && depth <= 0 && !field.required) return undefined;
  const single = singleArbitrary(field, depth);
  // Empty lists and maps do not survive a round trip: they are never set.
  if (field.map) return fc.dictionary(fc.string({ maxLength: 6 }), single, { minKeys: 1, maxKeys: 2 });
  if (field.repeated) return fc.array(single, { minLength: 1, maxLength: 2 });
  return single;
}

function singleArbitrary(field: protobuf.Field, depth: number): fc.Arbitrary<unknown> {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return messageArbitrary(resolved, depth - 1);
  if (resolved instanceof protobuf.Enum) {
    return fc.constantFrom(...new Set(enumNames(resolved).values()));
  }
  const scalar = scalars[field.type];
  if (scalar === undefined) throw new Error(`no arbitrary for ${field.type}`);
  return scalar;
}

// What decoding the encoder's output yields: unset fields with an explicit,
// non-deprecated default come back set to it.
export function withDefaults(type: protobuf.Type, msg: Message): Message {
  const out: Message = { ...msg };
  for (const field of type.fieldsArray) {
    const v = out[field.name];
    const def: unknown = field.options?.['default'];
    if (v === undefined) {
      if (def !== undefined && field.options?.['deprecated'] !== true) out[field.name] = def;
      continue;
    }
    const sub = field.resolvedType;
    if (!(sub instanceof protobuf.Type)) continue;
    if (field.map) {
      const record = v as Record<string, Message>;
      out[field.name] = Object.fromEntries(Object.entries(record).map(([k, m]) => [k, withDefaults(sub, m)]));
    } else if (field.repeated) {
      out[field.name] = (v as Message[]).map((m) => withDefaults(sub, m));
    } else {
      out[field.name] = withDefaults(sub, v as Message);
    }
  }
  return out;
}
