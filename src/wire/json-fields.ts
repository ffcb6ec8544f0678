// Field classification shared by the JSON decoder and encoder: what kind of
// value a protobuf field holds in memory, and the names of enum values.
import protobuf from 'protobufjs/light.js';

export const Kind = {
  Double: 0,
  Int32: 1,
  Uint32: 2,
  Int64: 3,
  Uint64: 4,
  Bool: 5,
  String: 6,
  Bytes: 7,
  Enum: 8,
  Message: 9,
} as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

const scalarKinds: Record<string, Kind> = {
  double: Kind.Double,
  float: Kind.Double,
  int32: Kind.Int32,
  sint32: Kind.Int32,
  sfixed32: Kind.Int32,
  uint32: Kind.Uint32,
  fixed32: Kind.Uint32,
  int64: Kind.Int64,
  sint64: Kind.Int64,
  sfixed64: Kind.Int64,
  uint64: Kind.Uint64,
  fixed64: Kind.Uint64,
  bool: Kind.Bool,
  string: Kind.String,
  bytes: Kind.Bytes,
};

// For a map field this classifies the value type.
export function fieldKind(field: protobuf.Field): Kind {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Enum) return Kind.Enum;
  if (resolved instanceof protobuf.Type) return Kind.Message;
  const kind = scalarKinds[field.type];
  if (kind === undefined) {
    throw new Error(`Unsupported field type '${field.type}' of '${field.fullName}'`);
  }
  return kind;
}

export function messageTypeOf(field: protobuf.Field): protobuf.Type | undefined {
  const resolved = field.resolvedType;
  return resolved instanceof protobuf.Type ? resolved : undefined;
}

export function enumOf(field: protobuf.Field): protobuf.Enum | undefined {
  const resolved = field.resolvedType;
  return resolved instanceof protobuf.Enum ? resolved : undefined;
}

// Every map in the schema is keyed by string; other key types would need
// key conversion that nothing uses.
export function assertStringKeyed(field: protobuf.Field): void {
  if (field instanceof protobuf.MapField && field.keyType !== 'string') {
    throw new Error(`Map field '${field.fullName}' must have string keys`);
  }
}

const enumNameCache = new Map<protobuf.Enum, ReadonlyMap<string, string>>();

// Maps every accepted value name, aliases included, to the name kept in
// memory: the first one declared for its number.
export function enumNames(e: protobuf.Enum): ReadonlyMap<string, string> {
  const cached = enumNameCache.get(e);
  if (cached !== undefined) return cached;
  const firstById = new Map<number, string>();
  const names = new Map<string, string>();
  for (const [name, id] of Object.entries(e.values)) {
    const first = firstById.get(id) ?? name;
    firstById.set(id, first);
    names.set(name, first);
  }
  enumNameCache.set(e, names);
  return names;
}

export function isDeprecated(field: protobuf.Field): boolean {
  return field.options?.['deprecated'] === true;
}

// The explicit `[default = ...]` of a field, or undefined when it has none.
export function explicitDefault(field: protobuf.Field): unknown {
  return field.options?.['default'];
}
