import type { Resource, Resources } from '../../../src/core/model/resources.js';
import type { Operation, OperationStatus, ResourceOperation } from '../../../src/core/model/types.js';
import { makeCluster, resources, type RecordingSink, type TestCluster, type TestScheduler } from '../helpers.js';

/** The resources, dynamically reserved (on top of any reservation they have) to `role` by `principal`. */
export function reserved(text: string | Resources, role: string, principal?: string): Resource[] {
  const bag = typeof text === 'string' ? resources(text) : text;
  return bag.map((r) => ({
    ...r,
    role,
    reservations: [
      ...(r.reservations ?? []),
      { type: 'DYNAMIC' as const, role, ...(principal === undefined ? {} : { principal }) },
    ],
  }));
}

/** The disk resources as a persistent volume `id` mounted at `path`. */
export function volume(disk: Resources, id: string, path = 'data', principal?: string): Resource[] {
  return disk.map((r) => ({
    ...r,
    disk: {
      persistence: { id, ...(principal === undefined ? {} : { principal }) },
      volume: { containerPath: path, mode: 'RW' as const },
    },
  }));
}

export function op(type: ResourceOperation['type'], bag: Resources, id?: string): ResourceOperation {
  return { type, resources: bag, ...(id === undefined ? {} : { id }) };
}

/** A cluster of one agent with the given resources flag. */
export function clusterWith(flag: string, seed = 1): TestCluster {
  const cluster = makeCluster({ agents: 0, seed });
  cluster.addAgent({ hostname: 'agent1', ip: '127.0.0.1', port: 5051, resources: resources(flag), attributes: [] });
  return cluster;
}

export function operationStatuses(sink: RecordingSink): OperationStatus[] {
  return sink.of('UPDATE_OPERATION_STATUS').map((e) => e.status);
}

/** ACCEPT of the first offer with the given operations, nothing refused afterwards. */
export function acceptWith(s: TestScheduler, operations: readonly Operation[]) {
  return s.call({ type: 'ACCEPT', offerIds: [s.firstOffer().id], operations, filters: { refuseMs: 0 } });
}
