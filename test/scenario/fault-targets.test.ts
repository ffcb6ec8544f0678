/**
 * Faults of a task named by its framework and ordinal, resolved when they
 * fire: the N-th of the framework's tasks in TASK_RUNNING, in the order
 * the master booked them; the loader refuses an ordinal where no task is meant.
 */
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../src/scenario/load.js';
import { runScenario } from '../../src/scenario/runner.js';
import { startScenarioCluster } from '../../src/start/scenario.js';

const file = (fault: string): string => `name: t
duration: 1m
cluster:
  agents:
    - count: 2
      resources: "cpus:2;mem:4096"
frameworks:
  - name: web
    tasks: { keep_running: 3, cpus: 0.5, mem: 64 }
timeline:
  - when: { tasks: { framework: web, state: TASK_RUNNING, count: 3 } }
    fault: ${fault}
expect:
  - invariants: true
`;

async function faultLines(fault: string): Promise<{ lines: string[]; problems: readonly string[] }> {
  const result = await runScenario(parseScenario('t.yaml', file(fault)), {
    seed: 1,
    keepTrace: true,
    start: (request) => startScenarioCluster(request),
  });
  return {
    lines: result.trace!.filter((e) => e.kind.startsWith('fault:')).map((e) => e.line),
    problems: result.problems,
  };
}

describe('a task named by its framework and ordinal', () => {
  it('fails the N-th running task of the framework', { timeout: 60_000 }, async () => {
    const { lines, problems } = await faultLines('{ type: fail_task, framework: web, ordinal: 1, exit_code: 3 }');
    expect(problems).toEqual([]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('"taskId":"web-1"');
    expect(lines[0]).toContain('"exitCode":3');
  });

  it('crashes the executor of the N-th running task', { timeout: 60_000 }, async () => {
    const { lines, problems } = await faultLines('{ type: crash_executor, framework: web, ordinal: 2 }');
    expect(problems).toEqual([]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('"taskId":"web-2"');
  });

  it('is a problem of the run when the framework has fewer running tasks', { timeout: 60_000 }, async () => {
    const { lines, problems } = await faultLines('{ type: hang_task, framework: web, ordinal: 3 }');
    expect(lines).toEqual([]);
    expect(problems).toEqual([
      'timeline[0] (line 11): hang_task: no task of web at ordinal 3 (it has fewer tasks in TASK_RUNNING)',
    ]);
  });

  it('is refused by the loader where no task is meant', () => {
    const error = (fault: string): string => {
      try {
        parseScenario('s.yaml', file(fault));
        return 'no error';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(error('{ type: crash_agent, agent: 0, framework: web, ordinal: 0 }')).toBe(
      's.yaml:12:68: timeline[0].fault.ordinal: only a fault of a task takes one (fail_task, hang_task, memory_spike, crash_executor)',
    );
    expect(error('{ type: fail_task, framework: web, task_id: web-0, ordinal: 0 }')).toBe(
      "s.yaml:12:72: timeline[0].fault.ordinal: names the task 'task_id' names: give one of them",
    );
    expect(error('{ type: fail_task, ordinal: 0 }')).toMatch(/^s\.yaml:12:12: timeline\[0\]\.fault: /);
    expect(error('{ type: fail_task, framework: web, ordinal: -1 }')).toMatch(/timeline\[0\]\.fault\.ordinal: /);
  });
});

describe('agents added and removed by a scenario', () => {
  it(
    'adds an agent the tasks spread to, then removes it by index; selectors no longer see it',
    { timeout: 60_000 },
    async () => {
      const text = `name: t
duration: 1m
cluster:
  agents:
    - count: 1
      resources: "cpus:1;mem:4096"
frameworks:
  - name: web
    tasks: { keep_running: 3, cpus: 0.5, mem: 64 }
timeline:
  - at: 10s
    fault: { type: add_agent, resources: "cpus:1;mem:1024", attributes: "rack:new" }
  - at: 30s
    fault: { type: remove_agent, agent: 1 }
  - at: 45s
    fault: { type: crash_agent, agent: { attributes: "rack:new" } }
expect:
  - at: 20s
    tasks: { framework: web, state: TASK_RUNNING, count: 3 }
  - at: 40s
    agents: { state: active, count: 1 }
  - tasks: { framework: web, state: TASK_LOST, min: 1 }
  - invariants: true
`;
      const result = await runScenario(parseScenario('t.yaml', text), {
        seed: 3,
        keepTrace: true,
        start: (request) => startScenarioCluster(request),
      });
      // A selector never picks an agent gone.
      expect(result.problems).toEqual(["timeline[2] (line 15): crash_agent: no agent with attributes 'rack:new'"]);
      expect(result.results.filter((r) => !r.ok)).toEqual([]);
      const kinds = result.trace!.map((e) => e.kind);
      expect(kinds).toContain('fault:add_agent');
      expect(kinds).toContain('agent:gone');
    },
  );

  it('refuses an index past the agents the file has and adds', () => {
    expect(() =>
      parseScenario('s.yaml', file('{ type: remove_agent, agent: 2 }').replace('count: 2', 'count: 1')),
    ).toThrow('timeline[0].fault.agent: the cluster has 1 agents (0 to 0)');
  });
});

describe("the cluster's custom executors", () => {
  it('start the agents with the mode the file gives, simulate without one', { timeout: 30_000 }, async () => {
    const text = file('{ type: crash_agent, agent: 0 }').replace('cluster:\n', 'cluster:\n  custom_executors: await\n');
    const modes = async (scenario: string): Promise<string[]> => {
      const request = parseScenario('t.yaml', scenario).cluster;
      const cluster = await startScenarioCluster({ ...request, seed: 1 });
      try {
        return cluster.agentIds.map((id) =>
          cluster.driver.read((view) => view.agentNode(id)!.config.flags.customExecutors),
        );
      } finally {
        await cluster.close();
      }
    };
    expect(await modes(text)).toEqual(['await', 'await']);
    expect(await modes(file('{ type: crash_agent, agent: 0 }'))).toEqual(['simulate', 'simulate']);
    expect(() => parseScenario('s.yaml', text.replace('await', 'fork'))).toThrow(
      'cluster.custom_executors: must be one of simulate, spawn, await',
    );
  });
});
