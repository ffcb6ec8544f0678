import { describe, expect, it } from 'vitest';
import { refuseMs } from '../../src/wire/scheduler-in.js';

describe('Filters.refuse_seconds', () => {
  it.each([
    ['unset filters', undefined, 5_000],
    ['unset refuse_seconds', {}, 5_000],
    ['zero', { refuse_seconds: 0 }, 0],
    ['a fraction', { refuse_seconds: 1.5 }, 1_500],
    ['negative: the default', { refuse_seconds: -3 }, 5_000],
    ['NaN: the default', { refuse_seconds: Number.NaN }, 5_000],
    ['above the cap', { refuse_seconds: 1e12 }, 31_536_000_000],
    ['Infinity: the cap', { refuse_seconds: Number.POSITIVE_INFINITY }, 31_536_000_000],
  ])('%s', (_name, filters, expected) => {
    expect(refuseMs(filters)).toBe(expected);
  });
});
