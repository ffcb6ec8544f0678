/**
 * The books add, subtract and compare normal bags by one walk over both
 * (`add`/`subtract`/`contains` when both sides are known normal); the result must be
 * what the general path gives: `normalise` of the concatenation, and the
 * per-identity subtraction of an unnormalised copy.
 * fast-check prints the seed and the shrunk bags on failure.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  add,
  allocate,
  contains,
  normalise,
  subtract,
  type Resource,
  type Resources,
} from '../../../src/core/model/resources.js';

const ROLES = ['*', 'a', 'b'];
const NAMES = ['cpus', 'mem', 'disk', 'gpus'];

const scalarArb: fc.Arbitrary<Resource> = fc
  .record({
    name: fc.constantFrom(...NAMES),
    role: fc.constantFrom(...ROLES),
    milli: fc.integer({ min: 1, max: 5000 }),
    alloc: fc.constantFrom(undefined, 'a', 'x'),
  })
  .map(({ name, role, milli, alloc }) => ({
    name,
    type: 'SCALAR' as const,
    milli,
    role,
    ...(role === '*' ? {} : { reservations: [{ type: 'STATIC' as const, role }] }),
    ...(alloc === undefined ? {} : { allocationRole: alloc }),
  }));

const rangesArb: fc.Arbitrary<Resource> = fc
  .record({ lo: fc.integer({ min: 0, max: 50 }), len: fc.integer({ min: 0, max: 5 }), role: fc.constantFrom(...ROLES) })
  .map(({ lo, len, role }) => ({ name: 'ports', type: 'RANGES' as const, ranges: [[lo, lo + len] as const], role }));

const bagArb = fc.array(fc.oneof(scalarArb, rangesArb), { maxLength: 6 });

/** A copy the fast path does not know as normal. */
const plain = (bag: Resources): Resources => bag.map((r) => ({ ...r }));

describe('normal bags added and subtracted by one walk', () => {
  it('add equals normalise of the concatenation', () => {
    fc.assert(
      fc.property(bagArb, bagArb, (x, y) => {
        const a = normalise(x);
        const b = normalise(y);
        expect(add(a, b)).toEqual(normalise([...plain(a), ...plain(b)]));
      }),
      { numRuns: 500 },
    );
  });

  it('subtract gives back the first bag and matches the general path', () => {
    fc.assert(
      fc.property(bagArb, fc.array(scalarArb, { maxLength: 4 }), (x, y) => {
        const a = normalise(x);
        const b = normalise(y);
        const sum = add(a, b);
        expect(subtract(sum, b)).toEqual(normalise(plain(a)));
        expect(subtract(sum, b)).toEqual(subtract(plain(sum), plain(b)));
        expect(subtract(allocate(sum, 'r'), allocate(b, 'r'))).toEqual(allocate(a, 'r'));
      }),
      { numRuns: 500 },
    );
  });

  it('contains by one walk answers as the general path, held or not', () => {
    fc.assert(
      fc.property(bagArb, bagArb, fc.boolean(), (x, y, sum) => {
        const a = sum ? add(normalise(x), normalise(y)) : normalise(x);
        const b = normalise(y);
        expect(contains(a, b)).toBe(contains(plain(a), plain(b)));
        if (sum) expect(contains(a, b)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses to take what a bag does not hold', () => {
    const a = normalise([{ name: 'cpus', type: 'SCALAR', milli: 1000, role: '*' }]);
    const b = normalise([{ name: 'mem', type: 'SCALAR', milli: 1000, role: '*' }]);
    const c = normalise([{ name: 'cpus', type: 'SCALAR', milli: 2000, role: '*' }]);
    expect(() => subtract(a, b)).toThrow(/does not contain/);
    expect(() => subtract(a, c)).toThrow(/does not contain/);
  });
});
