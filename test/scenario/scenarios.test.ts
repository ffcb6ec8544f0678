/**
 * Every shipped scenario passes, two runs with its seed give the same
 * trace, byte for byte, and a replay of that trace in the core alone (what
 * `clustersim replay` does) finds no divergence.
 */
import { describe, expect, it } from 'vitest';
import { firstDivergence, type TraceEntry } from '../../src/core/kernel/trace.js';
import { replay } from '../../src/scenario/replay.js';
import { textReport } from '../../src/scenario/report.js';
import { runScenarioFile } from '../../src/start/scenario.js';
import { SCENARIO_DIR as DIR, SHIPPED_SCENARIOS as FILES } from './shipped.js';

describe('shipped scenarios', () => {
  it('there are at least twelve', () => {
    expect(FILES.length).toBeGreaterThanOrEqual(12);
  });

  for (const file of FILES) {
    it(`${file} passes, runs the same twice, and replays`, { timeout: 60_000 }, async () => {
      const a: TraceEntry[] = [];
      const b: TraceEntry[] = [];
      const first = await runScenarioFile(`${DIR}/${file}`, { traceSink: (e) => a.push(e) });
      expect(first.passed, textReport(first).join('\n')).toBe(true);
      const second = await runScenarioFile(`${DIR}/${file}`, { traceSink: (e) => b.push(e) });
      expect(a.length).toBe(first.traceLength);
      const at = firstDivergence(a, b);
      expect(at, `first divergence:\n${a[at]?.line}\n${b[at]?.line}`).toBe(-1);
      expect(second.traceHash).toBe(first.traceHash);
      const replayed = await replay(a);
      expect(replayed.divergence).toBeUndefined();
      expect(replayed).toMatchObject({ entries: first.traceLength, hash: first.traceHash });
    });
  }
});
