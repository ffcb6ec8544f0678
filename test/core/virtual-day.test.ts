/**
 * The virtual-day workload of `npm run bench -- virtual-day` on a small
 * cluster: frameworks launching and acknowledging, a fault every virtual
 * minute (crashes with both recover modes, partitions, delay and drop
 * rules, each ended later), quiet pings and their end. The run must keep
 * every invariant (the full check at the end included), finish its tasks,
 * and give the same trace for the same seed.
 */
import { describe, expect, it } from 'vitest';
import { runVirtualDay, VIRTUAL_DAY } from '../bench/virtual-day.js';

const SMALL = {
  ...VIRTUAL_DAY,
  agents: 60,
  frameworks: 3,
  keep: 40,
  tasks: 600,
  durationSeconds: [60, 600] as const,
  hours: 2,
  quiet: true,
};

describe('the virtual day, small', () => {
  it('runs every task to its end under a fault a minute, and replays byte for byte from its seed', () => {
    const first = runVirtualDay(SMALL);
    const second = runVirtualDay(SMALL);
    expect(first.launched).toBe(600);
    expect(first.lifecycles).toBeGreaterThanOrEqual(590);
    expect([...first.faultsStarted.values()].reduce((a, b) => a + b, 0)).toBe(2 * 60 - 1);
    expect(first.traceHash).toBe(second.traceHash);
    expect(first.traceEntries).toBe(second.traceEntries);
    const other = runVirtualDay({ ...SMALL, seed: 2 });
    expect(other.traceHash).not.toBe(first.traceHash);
  });
});
