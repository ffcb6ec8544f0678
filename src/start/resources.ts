/**
 * An agent's resources as the library's options give them (`agentResources`,
 * an agent group's `resources`), checked: the text parses, names at least
 * one resource, and gives the well-known ones their type. Custom names are
 * custom resources, as upstream's agent takes them, unless they are a slip
 * of a well-known name (`cpu`, `memory`).
 */
import { parseResources, type Resources, type ValueType } from '../core/model/resources.js';
import { nearest } from '../runtime/spelling.js';

/** The well-known resources and their types; any other name is a custom resource. */
export const KNOWN_RESOURCES: Readonly<Record<string, ValueType>> = {
  cpus: 'SCALAR',
  mem: 'SCALAR',
  disk: 'SCALAR',
  gpus: 'SCALAR',
  ports: 'RANGES',
};

const EXAMPLE: Readonly<Record<ValueType, string>> = {
  SCALAR: 'a number',
  RANGES: 'ranges such as [31000-32000]',
  SET: 'a set such as {a,b}',
};

/** Names that are slips of a well-known one but too far from it for the spelling check. */
const SLIPS: Readonly<Record<string, string>> = { memory: 'mem', cpu: 'cpus', port: 'ports', gpu: 'gpus' };

/** The resources `text` gives, or why it gives none an agent can have. */
export function agentResourcesOf(text: string): Resources | string {
  const resources = parseResources(text);
  if (typeof resources === 'string') return resources;
  if (resources.length === 0)
    return `${JSON.stringify(text)} names no resource; give at least one, e.g. cpus:4;mem:8192;disk:16384;ports:[31000-32000]`;
  for (const r of resources) {
    const known = KNOWN_RESOURCES[r.name];
    if (known !== undefined && r.type !== known) return `'${r.name}' takes ${EXAMPLE[known]}, not ${EXAMPLE[r.type]}`;
    if (known !== undefined) continue;
    const meant = SLIPS[r.name] ?? nearest(r.name, Object.keys(KNOWN_RESOURCES));
    if (meant !== undefined)
      return `unknown resource '${r.name}' (did you mean '${meant}'?); known: ${Object.keys(KNOWN_RESOURCES).join(', ')}, or a custom name`;
  }
  return resources;
}
