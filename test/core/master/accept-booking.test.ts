/**
 * An ACCEPT books its launches in the ledger in one step (each distinct bag
 * once, times the tasks holding it); a resource operation between launches
 * reads the ledger, so what came before it is booked first. The books must
 * say exactly what task by task would.
 */
import { describe, expect, it } from 'vitest';
import { add, format, type Resources } from '../../../src/core/model/resources.js';
import type { Operation, TaskSpec } from '../../../src/core/model/types.js';
import { commandTask, connect, resources } from '../helpers.js';
import { acceptWith, clusterWith, op, reserved } from './operations-helpers.js';

const FLAG = 'cpus:8;mem:4096;disk:1024;ports:[31000-31010]';

function launch(tasks: TaskSpec[]): Operation {
  return { type: 'LAUNCH', tasks };
}

describe('the books of an ACCEPT', () => {
  it('hold the sum of its tasks, shared bags and their own alike, with a RESERVE between launches', () => {
    const cluster = clusterWith(FLAG);
    const s = connect(cluster, { roles: ['r1'], capabilities: ['MULTI_ROLE'] });
    const agentId = s.firstOffer().agentId;
    const shared = resources('cpus:0.5;mem:64');
    const first = Array.from({ length: 5 }, (_, i) => ({
      ...commandTask(`a${i}`, agentId, 'sleep 100'),
      resources: shared,
    }));
    const withPorts = [0, 1].map((i) => ({
      ...commandTask(`p${i}`, agentId, 'sleep 100'),
      resources: resources(`cpus:0.25;mem:32;ports:[${31000 + i}-${31000 + i}]`),
    }));
    const after = Array.from({ length: 3 }, (_, i) => ({
      ...commandTask(`b${i}`, agentId, 'sleep 100'),
      resources: shared,
    }));
    const ops: Operation[] = [launch([...first, ...withPorts]), op('RESERVE', reserved('cpus:1', 'r1')), launch(after)];
    expect(acceptWith(s, ops).ok).toBe(true);
    expect(s.framework?.tasks.size).toBe(10);
    let expected: Resources = [];
    for (const task of s.framework!.tasks.values()) expected = add(expected, task.resources);
    expect(format(cluster.view.agentBooks(agentId).used)).toBe(format(expected));
    expect(format(expected)).toContain('ports');
    cluster.checkAllInvariants();
  });
});
