/** A scenario run from code, through the library's entry point, as a test author would. */
import { describe, expect, it } from 'vitest';
import {
  htmlReport,
  parseScenario,
  RunError,
  runScenarioFile,
  ScenarioError,
  TimelineRecorder,
} from '../../src/index.js';

describe('scenarios from the library', () => {
  it('runs a file and gives each expectation, the misuse report and the trace hash', { timeout: 60_000 }, async () => {
    const result = await runScenarioFile('scenarios/agent-crash-reconnect.yaml', { seed: 2 });
    expect(result.passed).toBe(true);
    expect(result.results.map((r) => r.ok)).toEqual([true, true, true, true, true, true]);
    expect(result.misuse.frameworks).toEqual([]);
    expect(result.traceHash).toMatch(/^[0-9a-f]{16}$/);
  });

  it(
    'writes the HTML report of a run, its timeline recorded from the trace as it streams',
    { timeout: 60_000 },
    async () => {
      const recorder = new TimelineRecorder();
      const result = await runScenarioFile('scenarios/agent-lost.yaml', { traceSink: recorder.add });
      const html = htmlReport(result, recorder.timeline());
      expect(html).toContain('<title>clustersim run: agent-lost</title>');
      expect(recorder.timeline().agents).toHaveLength(3);
      expect(recorder.timeline().tasks).toHaveLength(6);
    },
  );

  it('refuses a file that does not read, naming the place', () => {
    expect(() => parseScenario('inline.yaml', 'name: x\n')).toThrow(ScenarioError);
    expect(() => parseScenario('inline.yaml', 'name: x\n')).toThrow(
      /^inline\.yaml:1:1: the file: must have required properties 'duration', 'cluster', 'expect'$/,
    );
  });

  it('gives the error of a run that stopped, with its seed and replay command', () => {
    const error = new RunError('s.yaml', '7', 90_000, 'the cluster stopped');
    expect(error.message).toBe(
      's.yaml: the run stopped at 90s of cluster time (seed 7): the cluster stopped; replay: clustersim run s.yaml --seed 7',
    );
  });
});
