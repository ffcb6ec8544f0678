/**
 * What validating an operation costs, counted in reads of the agent's
 * resources rather than timed: a DESTROY_VOLUMES naming every volume of
 * an agent that has many read each of them once, not once per volume
 * named (20,000 volumes held the master for 19 s).
 */
import { describe, expect, it } from 'vitest';
import { operationError } from '../../../src/core/master/operation-validation.js';
import type { Resources } from '../../../src/core/model/resources.js';
import { resources } from '../helpers.js';
import { op, reserved, volume } from './operations-helpers.js';

/** `items` behind a proxy that counts the reads of its elements. */
function counted(items: Resources): { list: Resources; reads: () => number } {
  let reads = 0;
  const list = new Proxy(items as object[], {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  }) as unknown as Resources;
  return { list, reads: () => reads };
}

describe('operation validation cost', () => {
  it('reads the agent resources a bounded number of times per resource for a DESTROY of all its volumes', () => {
    const disk = reserved('disk:1', 'r1', 'p');
    const volumes = Array.from({ length: 2_000 }, (_, i) => volume(disk, `v${i}`, 'data', 'p')[0]!);
    const total = counted([...resources('cpus:4;mem:1024'), ...volumes]);
    const used = counted([]);
    expect(operationError(op('DESTROY', volumes), { total: total.list, used: used.list })).toBeUndefined();
    expect(total.reads()).toBeLessThan(10 * (volumes.length + 2));
    // And the answer when one is missing stays the same.
    const missing = volume(disk, 'nowhere', 'data', 'p');
    expect(operationError(op('DESTROY', [...volumes, ...missing]), { total: total.list, used: used.list })).toBe(
      'Persistent volumes not found',
    );
  });
});
