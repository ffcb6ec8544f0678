/**
 * Conditions in scenario files: the control API's vocabulary, `all`, `any`
 * and a task by its id too, counted by the core, each framework named as in
 * the file; the report says what each part found.
 */
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../src/scenario/load.js';
import { runScenario } from '../../src/scenario/runner.js';
import { startScenarioCluster } from '../../src/start/scenario.js';
import { BASE, error } from './scenario-text.js';

const FILE = `name: t
duration: 3m
cluster:
  agents:
    - count: 2
      resources: "cpus:2;mem:4096"
frameworks:
  - name: web
    tasks: { keep_running: 2, cpus: 0.5, mem: 64 }
timeline:
  - when: { all: [{ tasks: { framework: web, state: TASK_RUNNING, count: 2 } }, { trace: { kind: "task:launch", min: 2 } }] }
    fault: { type: crash_agent, agent: 0 }
expect:
  - any: [{ agents: { state: unreachable, count: 1 } }, { agents: { state: disconnected, count: 1 } }]
  - all: [{ frameworks: { state: subscribed, count: 1 } }, { tasks: { framework: web, state: TASK_RUNNING, task_id: nobody } }]
  - tasks: { framework: web, state: TASK_RUNNING, min: 2, max: 2 }
`;

describe('scenario conditions', () => {
  it('reads all and any, in when and expect, and says what each part found', async () => {
    const result = await runScenario(parseScenario('t.yaml', FILE), { start: startScenarioCluster });
    expect(result.problems).toEqual([]);
    expect(result.results.map((e) => [e.ok, e.what, e.found])).toEqual([
      [true, 'any of (exactly 1 unreachable agents; exactly 1 disconnected agents)', '1; 0'],
      [false, "all of (exactly 1 subscribed frameworks; at least 1 TASK_RUNNING tasks 'nobody' of web)", '1; 0'],
      [true, 'at least 2 and at most 2 TASK_RUNNING tasks of web', '2'],
    ]);
  });

  it('checks the frameworks named inside all and any, and how deep they nest', () => {
    const nested = BASE.replace(
      '  - invariants: true',
      '  - any: [{ trace: { kind: x } }, { all: [{ tasks: { framework: db, state: TASK_RUNNING } }] }]',
    );
    expect(error(nested)).toBe(
      "s.yaml:10:65: expect[0].any[1].all[0].tasks.framework: no framework named 'db' in this file",
    );
    const when = `${BASE}timeline:\n  - when: { any: [{ tasks: { framework: db, state: TASK_RUNNING } }] }\n    request: { service: s, path: / }\n`;
    expect(error(when)).toMatch(/timeline\[0\]\.request\.service: no service named 's'/);
    let deep = '{ agents: { state: active } }';
    for (let i = 0; i < 9; i++) deep = `{ all: [${deep}] }`;
    expect(error(BASE.replace('  - invariants: true', `  - ${deep.slice(2, -2)}`))).toMatch(
      /^s\.yaml:10:5: Expecting 'expect\[0\](\.all\[0\])+\.all' to nest at most 8 deep$/,
    );
    expect(error(BASE.replace('  - invariants: true', '  - all: []'))).toBe(
      's.yaml:10:10: expect[0].all: must NOT have fewer than 1 items',
    );
  });
});
