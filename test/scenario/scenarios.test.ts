/**
 * Every shipped scenario passes, and two runs with its seed give the same
 * trace, byte for byte.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { firstDivergence } from '../../src/core/trace.js';
import { textReport } from '../../src/scenario/report.js';
import { runScenarioFile } from '../../src/start-scenario.js';

const DIR = 'scenarios';
const FILES = readdirSync(DIR).filter((f) => f.endsWith('.yaml')).sort();

describe('shipped scenarios', () => {
  it('there are at least twelve', () => {
    expect(FILES.length).toBeGreaterThanOrEqual(12);
  });

  for (const file of FILES) {
    it(`${file} passes, and runs the same twice`, { timeout: 60_000 }, async () => {
      const first = await runScenarioFile(`${DIR}/${file}`, { keepTrace: true });
      expect(first.passed, textReport(first).join('\n')).toBe(true);
      const second = await runScenarioFile(`${DIR}/${file}`, { keepTrace: true });
      const at = firstDivergence(first.trace!, second.trace!);
      expect(at, `first divergence:\n${first.trace![at]?.line}\n${second.trace![at]?.line}`).toBe(-1);
      expect(second.traceHash).toBe(first.traceHash);
    });
  }
});
