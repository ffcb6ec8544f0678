import { describe, expect, it } from 'vitest';
import {
  add,
  allocate,
  contains,
  format,
  fromMilli,
  isEmpty,
  normalise,
  parseResources,
  ranges,
  scalar,
  scalarMilli,
  set,
  subtract,
  toMilli,
} from '../../../src/core/model/resources.js';
import { rangesSize } from '../../../src/core/model/ranges.js';
import { resources } from '../helpers.js';

describe('resources', () => {
  it('keeps scalars in exact thousandths', () => {
    expect(toMilli(0.1) + toMilli(0.2)).toBe(toMilli(0.3));
    expect(fromMilli(1500)).toBe(1.5);
    const sum = add([scalar('cpus', 0.1)], [scalar('cpus', 0.2)]);
    expect(sum).toEqual([{ name: 'cpus', type: 'SCALAR', milli: 300, role: '*' }]);
    expect(subtract(sum, [scalar('cpus', 0.3)])).toEqual([]);
  });

  it('adds, subtracts and compares scalars by name and role', () => {
    const a = resources('cpus:2;mem:1024');
    const b = resources('cpus:0.5;mem:24');
    expect(format(add(a, b))).toBe('cpus(*):2.5; mem(*):1048');
    expect(format(subtract(a, b))).toBe('cpus(*):1.5; mem(*):1000');
    expect(contains(a, b)).toBe(true);
    expect(contains(b, a)).toBe(false);
    expect(contains(a, resources('cpus(role1):1'))).toBe(false);
    expect(contains(a, [])).toBe(true);
    expect(contains(a, resources('gpus:1'))).toBe(false);
  });

  it('merges adjacent and overlapping ranges, and splits them on subtraction', () => {
    expect(
      ranges('ports', [
        [31005, 31010],
        [31000, 31004],
        [31020, 31030],
        [31025, 31040],
      ]).ranges,
    ).toEqual([
      [31000, 31010],
      [31020, 31040],
    ]);
    const all = [ranges('ports', [[31000, 32000]])];
    const some = [
      ranges('ports', [
        [31000, 31000],
        [31500, 31509],
      ]),
    ];
    const left = subtract(all, some);
    expect(format(left)).toBe('ports(*):[31001-31499, 31510-32000]');
    expect(rangesSize(left[0]!.ranges!)).toBe(1001 - 11);
    expect(format(add(left, some))).toBe('ports(*):[31000-32000]');
    expect(contains(all, some)).toBe(true);
    expect(contains(left, some)).toBe(false);
    expect(contains(left, [ranges('ports', [[31499, 31510]])])).toBe(false);
    expect(contains(all, [ranges('ports', [[32000, 32001]])])).toBe(false);
  });

  it('adds, subtracts and compares sets', () => {
    const zones = [set('zones', ['b', 'a', 'a'])];
    expect(zones[0]!.set).toEqual(['a', 'b']);
    const more = add(zones, [set('zones', ['c', 'b'])]);
    expect(format(more)).toBe('zones(*):{a, b, c}');
    expect(format(subtract(more, [set('zones', ['b'])]))).toBe('zones(*):{a, c}');
    expect(contains(more, [set('zones', ['a', 'c'])])).toBe(true);
    expect(contains(zones, [set('zones', ['c'])])).toBe(false);
  });

  it('parses the agent flag form', () => {
    const parsed = resources('cpus:4;mem:8192;disk:16384;ports:[31000-32000]');
    expect(parsed).toEqual([
      { name: 'cpus', type: 'SCALAR', milli: 4000, role: '*' },
      { name: 'disk', type: 'SCALAR', milli: 16_384_000, role: '*' },
      { name: 'mem', type: 'SCALAR', milli: 8_192_000, role: '*' },
      { name: 'ports', type: 'RANGES', ranges: [[31000, 32000]], role: '*' },
    ]);
    expect(scalarMilli(parsed, 'mem')).toBe(8_192_000);
  });

  it('parses reservation roles (static reservations), sets and several ranges', () => {
    expect(resources('cpus(role1):2')).toEqual([
      { name: 'cpus', type: 'SCALAR', milli: 2000, role: 'role1', reservations: [{ type: 'STATIC', role: 'role1' }] },
    ]);
    const mixed = resources('cpus:1;cpus(role1):2;zones:{a,b};ports:[1-2, 5-6]');
    expect(format(mixed)).toBe('cpus(*):1; cpus(role1):2; ports(*):[1-2, 5-6]; zones(*):{a, b}');
    expect(scalarMilli(mixed, 'cpus')).toBe(3000);
    expect(contains(mixed, resources('cpus(role1):2'))).toBe(true);
    expect(contains(mixed, resources('cpus:2'))).toBe(false);
  });

  it('rejects malformed text with a message', () => {
    expect(parseResources('cpus')).toBe("Invalid resource 'cpus'");
    expect(parseResources('cpus:-1')).toMatch(/Invalid scalar/);
    expect(parseResources('cpus:abc')).toMatch(/Invalid scalar/);
    expect(parseResources('ports:[1-2')).toMatch(/Invalid ranges/);
    expect(parseResources('ports:[a-b]')).toMatch(/Invalid range/);
    expect(parseResources('zones:{a')).toMatch(/Invalid set/);
  });

  it('subtract throws when the bag does not contain what is taken', () => {
    expect(() => subtract(resources('cpus:1'), resources('cpus:2'))).toThrow(/does not contain/);
    expect(() => subtract(resources('cpus:1'), resources('mem:1'))).toThrow(/does not contain/);
    expect(() => subtract(resources('cpus:1'), resources('cpus(role1):1'))).toThrow(/does not contain/);
    expect(() => subtract(resources('ports:[1-5]'), resources('ports:[5-6]'))).toThrow(/does not contain/);
    expect(() => subtract(resources('zones:{a}'), resources('zones:{b}'))).toThrow(/does not contain/);
  });

  it('treats the allocation role as part of the identity', () => {
    const tagged = allocate(resources('cpus:2'), 'web');
    expect(format(tagged)).toBe('cpus(*,alloc:web):2');
    expect(contains(tagged, resources('cpus:1'))).toBe(false);
    expect(contains(tagged, allocate(resources('cpus:1'), 'web'))).toBe(true);
    expect(allocate(tagged, undefined)).toEqual(resources('cpus:2'));
  });

  it('normalises: merges identities, drops empties, orders canonically', () => {
    const bag = normalise([scalar('mem', 1), scalar('cpus', 0), scalar('mem', 2), ranges('ports', [])]);
    expect(bag).toEqual([{ name: 'mem', type: 'SCALAR', milli: 3000, role: '*' }]);
    expect(isEmpty([scalar('cpus', 0), set('zones', [])])).toBe(true);
    expect(format(add(resources('mem:1;cpus:1'), []))).toBe(format(resources('cpus:1;mem:1')));
  });

  it('holds a persistent volume only whole: no part of it is contained or taken', () => {
    const disk = {
      name: 'disk',
      type: 'SCALAR' as const,
      role: 'r1',
      reservations: [{ type: 'DYNAMIC' as const, role: 'r1' }],
    };
    const v1 = (milli: number) => ({
      ...disk,
      milli,
      disk: { persistence: { id: 'v1' }, volume: { containerPath: 'data', mode: 'RW' as const } },
    });
    const bag = normalise([v1(60_000), { ...disk, milli: 40_000 }]);
    expect(contains(bag, [v1(60_000)])).toBe(true);
    expect(contains(bag, [v1(10_000)])).toBe(false);
    expect(contains(bag, [v1(59_999)])).toBe(false);
    expect(contains([...bag], [v1(10_000)])).toBe(false);
    expect(() => subtract(bag, [v1(10_000)])).toThrow(/does not contain/);
    expect(subtract(bag, [v1(60_000)])).toEqual([{ ...disk, milli: 40_000 }]);
    // Plain disk of the same reservation still splits.
    expect(contains(bag, [{ ...disk, milli: 10_000 }])).toBe(true);
  });
});
