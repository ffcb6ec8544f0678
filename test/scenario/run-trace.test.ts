/**
 * A run's trace in bounded memory: hash notes spaced wider as the run
 * grows, never more than MAX_CHECKPOINTS; two runs compared by their whole
 * hash, to the exact entry when the windows hold it, else to the stretch
 * between two notes.
 */
import { describe, expect, it } from 'vitest';
import { Trace, type TraceEntry } from '../../src/core/kernel/trace.js';
import { MAX_CHECKPOINTS, RunTrace, traceDifference, type TraceSummary } from '../../src/scenario/run-trace.js';

/** A trace of `n` entries (entry `divergeAt` written differently), its window of `window` entries. */
function run(n: number, window: number, divergeAt = -1): TraceSummary & { sunk: TraceEntry[] } {
  let now = 0;
  const trace = new Trace({ now: () => now }, { tailSize: window });
  trace.append('cluster:start', { seed: '1' });
  const sunk: TraceEntry[] = [];
  const notes = new RunTrace(trace, (e) => sunk.push(e));
  for (let seq = 2; seq <= n; seq++) {
    now = seq * 10;
    trace.append('task:status', { n: seq === divergeAt ? -seq : seq });
  }
  notes.close();
  return {
    traceHash: trace.hash(),
    traceLength: trace.length,
    checkpoints: notes.checkpoints,
    trace: trace.entries().slice(),
    sunk,
  };
}

describe('a run trace', () => {
  it('gives the sink every entry, and keeps at most MAX_CHECKPOINTS hash notes however long the run', () => {
    const long = run(1_500_000, 100);
    expect(long.sunk.length).toBe(1_500_000);
    expect(long.trace!.length).toBeLessThanOrEqual(200);
    expect(long.checkpoints.length).toBeLessThanOrEqual(MAX_CHECKPOINTS);
    expect(long.checkpoints.length).toBeGreaterThan(MAX_CHECKPOINTS / 4);
    const seqs = long.checkpoints.map((c) => c.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });

  it('finds no difference between two runs that wrote the same', () => {
    expect(traceDifference(run(50_000, 100), run(50_000, 100))).toBeUndefined();
  });

  it('names the exact entry where two runs part when the windows hold it', () => {
    const difference = traceDifference(run(50_000, 1_000), run(50_000, 1_000, 49_950));
    expect(difference).toMatchObject({ kind: 'entry', seq: 49_950 });
    if (difference?.kind !== 'entry') throw new Error('expected an entry');
    expect(difference.first!.line).toContain('"n":49950');
    expect(difference.second!.line).toContain('"n":-49950');
  });

  it('names the stretch between two notes where two runs part when the windows no longer hold it', () => {
    const difference = traceDifference(run(50_000, 100), run(50_000, 100, 20_000));
    expect(difference).toMatchObject({ kind: 'stretch' });
    if (difference?.kind !== 'stretch') throw new Error('expected a stretch');
    expect(difference.afterSeq).toBeLessThan(20_000);
    expect(difference.bySeq).toBeGreaterThanOrEqual(20_000);
    expect(difference.bySeq - difference.afterSeq).toBeLessThanOrEqual(1_024);
  });

  it('tells a shorter run from a longer one', () => {
    expect(traceDifference(run(500, 1_000), run(600, 1_000))).toMatchObject({
      kind: 'entry',
      seq: 501,
      first: undefined,
    });
  });
});
