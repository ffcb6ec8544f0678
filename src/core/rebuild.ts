/**
 * A cluster built again from another's options and the first of its
 * recorded inputs (input-record.ts), applied exactly as they were given:
 * same options, same seed, same inputs, so the same trace. Snapshot and
 * restore, reset and the replay of a trace file rest on it.
 */
import { Cluster, type ClusterOptions } from './cluster.js';
import type { InputRecord } from './input-record.js';

/**
 * A new cluster from `options` (with `overrides`: a reset's new seed) and
 * the first `count` of `inputs`; what they sent to subscribers is dropped,
 * for nobody listens to the new cluster yet. It records its own inputs.
 */
export function rebuildCluster(
  options: ClusterOptions,
  inputs: readonly InputRecord[],
  count: number,
  overrides: Partial<ClusterOptions> = {},
): Cluster {
  const cluster = new Cluster({ ...options, ...overrides, recordInputs: true });
  for (let i = 0; i < count && i < inputs.length; i++) {
    const input = inputs[i]!;
    try {
      applyInput(cluster, input.name, input.args);
    } finally {
      cluster.drainOutbox();
      cluster.drainContainers();
    }
  }
  return cluster;
}

/**
 * Applies a recorded input again: the cluster's method of that name with
 * those arguments. A name that is not an input of the port throws.
 */
export function applyInput(cluster: Cluster, name: string, args: readonly unknown[]): unknown {
  const method: unknown = name === 'constructor' ? undefined : (cluster as unknown as Record<string, unknown>)[name];
  if (typeof method !== 'function' || !cluster.tracesInputs)
    throw new Error(`cluster: '${name}' is not an input (or inputs are not recorded)`);
  const before = cluster.inputCount;
  const result: unknown = method.apply(cluster, args);
  if (cluster.inputCount === before) throw new Error(`cluster: '${name}' is not an input`);
  return result;
}

/** Which argument of an input opens a connection (a stream, a session's output, a waiter). */
const OPENS_CONNECTION: Readonly<Record<string, number>> = {
  subscribe: 0,
  subscribeOperator: 0,
  executorSubscribe: 0,
  launchNestedContainer: 2,
  attachContainerOutput: 2,
  waitContainer: 0,
};

/**
 * The connections the first `count` inputs opened and did not close, in
 * the order they were opened: a rebuilt cluster believes them open, but
 * the streams they were are gone, so a restore disconnects them.
 */
export function connectionsLeftOpen(inputs: readonly InputRecord[], count: number): string[] {
  const open = new Set<string>();
  for (let i = 0; i < count && i < inputs.length; i++) {
    const { name, args } = inputs[i]!;
    if (name === 'disconnect') open.delete(args[0] as string);
    const at = OPENS_CONNECTION[name];
    if (at !== undefined && typeof args[at] === 'string') open.add(args[at] as string);
  }
  return [...open];
}
