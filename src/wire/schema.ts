// The runtime schema: one protobufjs Root built from the generated descriptor,
// so start-up reads no .proto files and works from the compiled dist/ tree.
import protobuf from 'protobufjs/light.js';
import { descriptor } from './generated/descriptor.js';

export const root: protobuf.Root = buildRoot();

const typeCache = new Map<string, protobuf.Type>();

// Looks up a message type by full name without a leading dot, e.g.
// 'mesos.v1.scheduler.Call'. An unknown name is a programming error.
export function messageType(fullName: string): protobuf.Type {
  const cached = typeCache.get(fullName);
  if (cached !== undefined) return cached;
  const found = root.lookup(fullName);
  if (!(found instanceof protobuf.Type) || found.fullName !== `.${fullName}`) {
    throw new Error(`Unknown message type '${fullName}'`);
  }
  typeCache.set(fullName, found);
  return found;
}

function buildRoot(): protobuf.Root {
  const built = protobuf.Root.fromJSON(descriptor);
  built.resolveAll();
  canonicalizeAliases(built);
  return built;
}

// Root.fromJSON maps an aliased number to the last name declared for it;
// upstream writes the first (ContainerInfo.Type 2 is MESOS, not its alias
// CLUSTER). Rewrite the reverse maps so binary decoding agrees with JSON.
function canonicalizeAliases(ns: protobuf.NamespaceBase): void {
  for (const child of ns.nestedArray) {
    if (child instanceof protobuf.Enum) {
      if (child.options?.['allow_alias'] !== true) continue;
      const seen = new Set<number>();
      for (const [name, id] of Object.entries(child.values)) {
        if (seen.has(id)) continue;
        seen.add(id);
        child.valuesById[id] = name;
      }
    } else if (child instanceof protobuf.Namespace || child instanceof protobuf.Type) {
      canonicalizeAliases(child);
    }
  }
}
