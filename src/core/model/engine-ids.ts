/**
 * The container engine's own ids, as the core and the engine's API share
 * them: an engine container is named `cluster-<ContainerID>`, and its id
 * is 64 hex digits derived from the ContainerID (four 64-bit FNV-1a
 * rounds), stable and distinct from it, as an engine's container ids are.
 */

export function engineContainerName(containerId: string): string {
  return `cluster-${containerId}`;
}

export function engineContainerId(containerId: string): string {
  let out = '';
  for (let round = 0; round < 4; round++) out += fnv1a64(`${round}:${containerId}`);
  return out;
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK = (1n << 64n) - 1n;

function fnv1a64(text: string): string {
  let hash = FNV_OFFSET;
  for (let i = 0; i < text.length; i++) hash = ((hash ^ BigInt(text.charCodeAt(i))) * FNV_PRIME) & MASK;
  return hash.toString(16).padStart(16, '0');
}
