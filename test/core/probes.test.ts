/**
 * The core's probes (core/probes.ts): a hook set on a cluster sees each
 * allocation run and changes nothing of the run itself.
 */
import { describe, expect, it } from 'vitest';
import { makeCluster, subscribe } from './helpers.js';

function run(hooked: boolean): { hash: string; runs: number; offers: number } {
  const cluster = makeCluster({ agents: 3 });
  let runs = 0;
  if (hooked) {
    cluster.probes.set((work, allocate) => {
      expect(work).toBe('allocation');
      runs++;
      return allocate();
    });
  }
  const { sink } = subscribe(cluster);
  cluster.advance(10_000);
  return { hash: cluster.trace.hash(), runs, offers: sink.of('OFFERS').length };
}

describe('probes', () => {
  it('time every allocation run through the hook, and the run is the same with and without it', () => {
    const hooked = run(true);
    const plain = run(false);
    expect(hooked.runs).toBeGreaterThan(0);
    expect(hooked.offers).toBeGreaterThan(0);
    expect(hooked.hash).toBe(plain.hash);
    expect(hooked.offers).toBe(plain.offers);
  });
});
