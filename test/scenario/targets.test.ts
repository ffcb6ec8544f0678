/**
 * Faults that name their agent by what runs there or by its attributes,
 * resolved when they fire: the choice follows the tasks wherever a seed
 * places them, a name given with `as` keeps it for later faults, and a
 * selector that matches nothing is a one-line problem of the run.
 */
import { describe, expect, it } from 'vitest';
import type { TraceEntry } from '../../src/core/kernel/trace.js';
import { parseScenario } from '../../src/scenario/load.js';
import { runScenario, type RunResult, type StartScenarioCluster } from '../../src/scenario/runner.js';
import { selectAgent, type AgentFacts } from '../../src/scenario/targets.js';
import { startScenarioCluster } from '../../src/start/scenario.js';

const FILE = `name: t
duration: 2m
cluster:
  agents:
    - count: 3
      resources: "cpus:2;mem:4096"
frameworks:
  - name: web
    tasks: { keep_running: 4, cpus: 0.5, mem: 64 }
timeline:
  - when: { tasks: { framework: web, state: TASK_RUNNING, count: 4 } }
    fault: { type: crash_agent, agent: { running: { framework: web, task_prefix: web-2 }, as: down } }
  - at: 90s
    fault: { type: restart_agent, agent: down }
expect:
  - invariants: true
`;

/** A run of an inline file, with the ids of its agents in the cluster's order. */
async function run(text: string, seed: number): Promise<RunResult & { agentIds: readonly string[] }> {
  let agentIds: readonly string[] = [];
  const start: StartScenarioCluster = async (request) => {
    const cluster = await startScenarioCluster(request);
    agentIds = cluster.agentIds;
    return cluster;
  };
  const result = await runScenario(parseScenario('t.yaml', text), { seed, keepTrace: true, start });
  return { ...result, agentIds };
}

/** The agent id of each trace entry of a kind (whose line contains a text). */
function agentsOf(trace: readonly TraceEntry[], kind: string, contains = ''): string[] {
  return trace
    .filter((e) => e.kind === kind && e.line.includes(contains))
    .map((e) => /"agentId":"([^"]+)"/.exec(e.line)![1]!);
}

const agent = (
  id: string,
  tasks: [string | undefined, string, string][],
  attributes: AgentFacts['attributes'] = [],
): AgentFacts => ({
  id,
  attributes,
  tasks: tasks.map(([framework, taskId, state]) => ({ framework, taskId, state })),
});

describe('selecting the agent of a fault', () => {
  it('picks the agent with the most matching tasks, the first in the cluster order among equals', () => {
    const agents = [
      agent('S0', [
        ['web', 'web-0', 'TASK_RUNNING'],
        ['db', 'db-0', 'TASK_RUNNING'],
        ['db', 'db-1', 'TASK_RUNNING'],
      ]),
      agent('S1', [
        ['web', 'web-1', 'TASK_RUNNING'],
        ['web', 'web-2', 'TASK_RUNNING'],
        ['web', 'web-3', 'TASK_STAGING'],
      ]),
      agent(
        'S2',
        [
          ['web', 'web-4', 'TASK_RUNNING'],
          ['web', 'web-5', 'TASK_RUNNING'],
        ],
        [{ name: 'rack', type: 'TEXT', text: 'b' }],
      ),
    ];
    expect(selectAgent({ running: { framework: 'web' } }, agents)).toBe('S1');
    expect(selectAgent({ running: { framework: 'web', state: 'TASK_STAGING' } }, agents)).toBe('S1');
    expect(selectAgent({ running: { framework: 'web', task_prefix: 'web-4' } }, agents)).toBe('S2');
    expect(selectAgent({ running: { framework: 'db' } }, agents)).toBe('S0');
    expect(selectAgent({ running: {} }, agents)).toBe('S0');
    expect(selectAgent({ attributes: 'rack:b' }, agents)).toBe('S2');
    expect(selectAgent({ attributes: 'rack:a' }, agents)).toBeUndefined();
    expect(
      selectAgent({ running: { framework: 'web', task_prefix: 'web-1' }, attributes: 'rack:b' }, agents),
    ).toBeUndefined();
    expect(selectAgent({ running: { framework: 'web', state: 'TASK_FINISHED' } }, agents)).toBeUndefined();
    expect(selectAgent({ running: { framework: 'cache' } }, agents)).toBeUndefined();
  });

  it('picks the agent of a task by its id, while the task is live', () => {
    const agents = [
      agent('S0', [['web', 'web-0', 'TASK_FINISHED']]),
      agent('S1', [['web', 'web-1', 'TASK_STAGING']]),
      agent('S2', [['db', 'web-0', 'TASK_RUNNING']], [{ name: 'rack', type: 'TEXT', text: 'b' }]),
    ];
    expect(selectAgent({ task: 'web-1' }, agents)).toBe('S1');
    // A finished task is no longer there: the live task of that id (of another framework) is.
    expect(selectAgent({ task: 'web-0' }, agents)).toBe('S2');
    expect(selectAgent({ task: 'web-0', attributes: 'rack:a' }, agents)).toBeUndefined();
    expect(selectAgent({ task: 'web-9' }, agents)).toBeUndefined();
  });

  it(
    'follows the task to the agent a seed placed it on, and keeps the choice under its name',
    { timeout: 60_000 },
    async () => {
      const placed = new Set<string>();
      for (const seed of [1, 2, 3, 4, 5]) {
        const result = await run(FILE, seed);
        expect(result.problems, `seed ${seed}`).toEqual([]);
        const trace = result.trace!;
        const [where] = agentsOf(trace, 'task:launch', '"taskId":"web-2"');
        placed.add(where!);
        expect(agentsOf(trace, 'agent:crash'), `seed ${seed}`).toEqual([where]);
        expect(agentsOf(trace, 'agent:restart'), `seed ${seed}`).toEqual([where]);
      }
      // The seeds place web-2 on more than one agent: an index would have missed it.
      expect(placed.size).toBeGreaterThan(1);
    },
  );

  it('follows a task named by its id to its agent', { timeout: 60_000 }, async () => {
    const text = FILE.replace(
      '{ running: { framework: web, task_prefix: web-2 }, as: down }',
      '{ task: web-2, as: down }',
    );
    for (const seed of [1, 2]) {
      const result = await run(text, seed);
      expect(result.problems, `seed ${seed}`).toEqual([]);
      const [where] = agentsOf(result.trace!, 'task:launch', '"taskId":"web-2"');
      expect(agentsOf(result.trace!, 'agent:crash'), `seed ${seed}`).toEqual([where]);
    }
  });

  it('chooses by attribute, and partitions the nodes named by selector and name', { timeout: 60_000 }, async () => {
    const text = FILE.replace(
      '    - count: 3\n      resources: "cpus:2;mem:4096"',
      '    - count: 2\n    - count: 1\n      attributes: "rack:b"',
    )
      .replace(
        /\{ type: crash_agent, .* \}$/m,
        '{ type: partition, nodes: [master, { attributes: "rack:b", as: down }] }',
      )
      .replace('{ type: restart_agent, agent: down }', '{ type: heal, nodes: [down, master] }');
    for (const seed of [1, 2, 3]) {
      const result = await run(text, seed);
      expect(result.problems).toEqual([]);
      expect(agentsOf(result.trace!, 'agent:unreachable'), `seed ${seed}`).toEqual([result.agentIds[2]]);
      expect(agentsOf(result.trace!, 'agent:reachable'), `seed ${seed}`).toEqual([result.agentIds[2]]);
    }
  });

  it(
    'reports a selector that matches nothing, and a name no fault chose, in one line each',
    { timeout: 60_000 },
    async () => {
      const result = await run(FILE.replace('task_prefix: web-2', 'task_prefix: nope'), 1);
      expect(result.passed).toBe(false);
      expect(result.problems).toEqual([
        "timeline[0] (line 11): crash_agent: no agent running TASK_RUNNING tasks of web whose id starts with 'nope'",
        "timeline[1] (line 13): restart_agent: no agent chosen as 'down' (the fault that chooses it has not fired, or found none)",
      ]);
    },
  );
});
