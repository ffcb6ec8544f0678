/**
 * The schedules drawn from a seed, a shard's slice of them, and a search's
 * runs as JUnit.
 */
import { describe, expect, it } from 'vitest';
import { drawSchedules, scenarioWithSchedule, shardIndices, withAgentResources } from '../../src/scenario/chaos.js';
import { chaosJunit, shardRecord, type RunRecord } from '../../src/scenario/chaos-record.js';
import { loadScenario, parseScenario } from '../../src/scenario/load.js';

describe('the schedules of a seed', () => {
  const scenario = loadScenario('scenarios/resilient-service.yaml');

  it('are one list: the first k are the same whatever the count, and another seed draws others', () => {
    const ten = drawSchedules(scenario, 5, 10);
    expect(drawSchedules(scenario, 5, 4)).toEqual(ten.slice(0, 4));
    expect(drawSchedules(scenario, 6, 10)).not.toEqual(ten);
  });

  it('add agents like the file’s and remove agents the file has, in faults its loader reads', () => {
    const steady = loadScenario('scenarios/steady-state.yaml');
    const drawn = drawSchedules(steady, 1, 40);
    const faults = drawn.flat(2).map((e) => e.fault!);
    const added = faults.filter((f) => f['type'] === 'add_agent');
    const removed = faults.filter((f) => f['type'] === 'remove_agent');
    expect(added.length).toBeGreaterThan(0);
    expect(removed.length).toBeGreaterThan(0);
    expect(new Set(added.map((f) => JSON.stringify(f)))).toEqual(
      new Set([JSON.stringify({ type: 'add_agent', resources: 'cpus:2;mem:4096;disk:8192;ports:[31000-32000]' })]),
    );
    expect(removed.every((f) => [0, 1, 2].includes(f['agent'] as number))).toBe(true);
    // Each schedule written out reads as a file: the loader checks every fault and agent index.
    for (const schedule of drawn)
      expect(() => parseScenario('x.yaml', scenarioWithSchedule(steady, schedule.flat(), 1))).not.toThrow();
  });

  it('add agents with the resources the caller gives where the file leaves them to the cluster', () => {
    const bare = parseScenario(
      's.yaml',
      'name: s\nduration: 1m\ncluster:\n  agents: [{ count: 2, attributes: "rack:a" }]\nexpect:\n  - invariants: true\n',
    );
    const faults = (s: typeof bare) =>
      drawSchedules(s, 1, 40)
        .flat(2)
        .map((e) => e.fault!);
    expect(faults(bare).some((f) => f['type'] === 'add_agent')).toBe(false);
    const added = faults(withAgentResources(bare, 'cpus:1;mem:512')).find((f) => f['type'] === 'add_agent');
    expect(added).toEqual({ type: 'add_agent', resources: 'cpus:1;mem:512', attributes: 'rack:a' });
  });

  it('split into N disjoint slices that together are the whole', () => {
    const slices = [1, 2, 3].map((index) => shardIndices(10, { index, count: 3 }));
    expect(slices).toEqual([
      [0, 3, 6, 9],
      [1, 4, 7],
      [2, 5, 8],
    ]);
    expect(shardIndices(10, { index: 1, count: 1 })).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});

describe('chaosJunit', () => {
  it('has a test case per schedule: a failed run a failure, a stopped one an error', () => {
    const run = (schedule: number, verdict: RunRecord['verdict']): RunRecord => ({
      kind: 'run',
      file: 'a.yaml',
      seed: 1,
      schedule,
      faults: [{ at: '1s', fault: { type: 'crash_agent', agent: 0 } }],
      verdict,
      ...(verdict === 'fail' ? { failed: ['FAIL line 3: <x> (found 0)'] } : {}),
      ...(verdict === 'stopped' ? { reason: 'at 1s of cluster time: stuck' } : {}),
      replay: `clustersim chaos a.yaml --seed 1 --schedule ${schedule}`,
    });
    const records = [run(1, 'pass'), run(2, 'fail'), run(3, 'stopped')];
    const xml = chaosJunit(
      shardRecord('a.yaml', { seed: 1, runs: 3, shard: { index: 1, count: 1 } }, records),
      records,
    );
    expect(xml).toContain('tests="3" failures="1" errors="1"');
    expect(xml.match(/<testcase /g)).toHaveLength(3);
    expect(xml).toContain(
      '<failure message="FAIL line 3: &#60;x&#62; (found 0); clustersim chaos a.yaml --seed 1 --schedule 2"/>',
    );
    expect(xml).toContain('<error message="at 1s of cluster time: stuck;');
  });
});
