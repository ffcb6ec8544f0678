/**
 * Every shipped scenario leaves the trace recorded in scenarios/golden.json
 * (its seed, number of entries and hash): a change to the simulator that
 * changes a trace, even one whose expectations still pass, shows here and
 * is recorded on purpose with `npm run golden:update`. Each scenario runs
 * once, with its own seed, as `clustersim run` runs it.
 */
import { describe, expect, it } from 'vitest';
import { describeTrace, GOLDEN_FILE, readGolden, runGolden, UPDATE_COMMAND } from './golden.js';
import { SHIPPED_SCENARIOS } from './shipped.js';

const GOLDEN = readGolden();

describe('golden traces of the shipped scenarios', () => {
  it(`${GOLDEN_FILE} has an entry for every shipped scenario and no other`, () => {
    const missing = SHIPPED_SCENARIOS.filter((file) => GOLDEN[file] === undefined);
    const stale = Object.keys(GOLDEN).filter((file) => !SHIPPED_SCENARIOS.includes(file));
    const problems = [
      ...missing.map((file) => `${file}: no golden trace`),
      ...stale.map((file) => `${file}: a golden trace but no such scenario`),
    ];
    expect(problems, `${problems.join('\n')}\n${UPDATE_COMMAND} rewrites ${GOLDEN_FILE}`).toEqual([]);
  });

  for (const file of SHIPPED_SCENARIOS) {
    it.skipIf(GOLDEN[file] === undefined)(`${file} leaves its golden trace`, { timeout: 60_000 }, async () => {
      const { passed: _, ...trace } = await runGolden(file);
      const message = `${file}: the trace changed: ${describeTrace(GOLDEN[file])} → ${describeTrace(trace)}; if the change is meant, ${UPDATE_COMMAND} rewrites ${GOLDEN_FILE}`;
      expect(trace, message).toEqual(GOLDEN[file]);
    });
  }
});
