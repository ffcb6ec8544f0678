/**
 * SmallMap and SmallSet behave as Map and Set, below and past the size at
 * which they move to one, in insertion order. fast-check prints the seed
 * and the shrunk operations on failure; pass them back to `fc.assert` to
 * replay.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appended, pushed, SmallMap, SmallSet } from '../../../src/core/kernel/small-map.js';

type MapOp =
  | { readonly op: 'set'; readonly key: number; readonly value: number }
  | { readonly op: 'delete'; readonly key: number };

const mapOp: fc.Arbitrary<MapOp> = fc.oneof(
  fc.record({ op: fc.constant('set' as const), key: fc.integer({ min: 0, max: 20 }), value: fc.integer() }),
  fc.record({ op: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 20 }) }),
);

describe('small map and set', () => {
  it('a SmallMap answers as a Map after any sets and deletes, in insertion order', () => {
    fc.assert(
      fc.property(fc.array(mapOp, { maxLength: 60 }), fc.integer({ min: 0, max: 20 }), (ops, probe) => {
        const small = new SmallMap<number, number>();
        const map = new Map<number, number>();
        for (const o of ops) {
          if (o.op === 'set') expect(small.set(o.key, o.value)).toBe(small);
          else expect(small.delete(o.key)).toBe(map.has(o.key));
          if (o.op === 'set') map.set(o.key, o.value);
          else map.delete(o.key);
          expect(small.size).toBe(map.size);
        }
        expect([...small]).toEqual([...map]);
        expect([...small.keys()]).toEqual([...map.keys()]);
        expect([...small.values()]).toEqual([...map.values()]);
        expect(small.get(probe)).toBe(map.get(probe));
        expect(small.has(probe)).toBe(map.has(probe));
        const seen: [number, number][] = [];
        small.forEach((v, k) => {
          seen.push([k, v]);
        });
        expect(seen).toEqual([...map.entries()]);
      }),
    );
  });

  it('a SmallSet answers as a Set after any adds, in insertion order, and starts from an iterable', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 40 }),
        fc.integer({ min: 0, max: 20 }),
        (items, probe) => {
          const small = new SmallSet<number>();
          const set = new Set<number>();
          for (const item of items) {
            small.add(item);
            set.add(item);
            expect(small.size).toBe(set.size);
          }
          expect([...small]).toEqual([...set]);
          expect(small.has(probe)).toBe(set.has(probe));
          expect([...new SmallSet(items)]).toEqual([...new Set(items)]);
        },
      ),
    );
  });

  it('appended and pushed keep the order; pushed copies a small list and grows a long one in place', () => {
    expect(appended([1, 2], 3, 4)).toEqual([1, 2, 3, 4]);
    const small = [1, 2];
    const grown = pushed(small, 3);
    expect(grown).toEqual([1, 2, 3]);
    expect(small).toEqual([1, 2]);
    const long = Array.from({ length: 20 }, (_, i) => i);
    expect(pushed(long, 20)).toBe(long);
    expect(long).toHaveLength(21);
  });
});
