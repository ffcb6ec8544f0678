import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../src/scenario/load.js';
import { BASE, error } from './scenario-text.js';
import { parseDuration } from '../../src/scenario/duration.js';
import { SCHEMA_FILE, schemaText } from './write-schema.js';

describe('scenario files', () => {
  it('reads a valid file into a typed scenario, with defaults', () => {
    const s = parseScenario('s.yaml', BASE);
    expect(s).toMatchObject({
      name: 't',
      durationMs: 60_000,
      seed: 0,
      cluster: { masters: 1, agents: [{ count: 2 }] },
    });
    expect(s.frameworks[0]).toMatchObject({
      name: 'web',
      role: '*',
      encoding: 'json',
      acknowledge: true,
      reconcile: true,
      reconnectAfterMs: 1000,
    });
    expect(s.frameworks[0]!.tasks).toMatchObject({ keepRunning: 1, command: 'sleep 3600' });
    expect(s.expect[0]).toMatchObject({ invariants: true, line: 10 });
  });

  it("reports every place the schema refuses, a line each in the file's order, not only the first", () => {
    const text = BASE.replace('duration: 1m', 'duration: soon').replace(
      '    - count: 2',
      '    - count: 2\n      colour: red',
    );
    const lines = error(`${text}timeline:\n  - at: 10s\n    fault: { type: explode }\n`).split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^s\.yaml:2:11: duration: must be a duration/);
    expect(lines[1]).toMatch(/^s\.yaml:6:7: cluster\.agents\[0\]\.colour: is not a field here/);
    expect(lines[2]).toMatch(/^s\.yaml:14:20: timeline\[0\]\.fault\.type: must be one of crash_agent, /);
  });

  it('names the file, line, column and field of every error', () => {
    expect(error(BASE.replace('duration: 1m', 'duration: soon'))).toBe(
      's.yaml:2:11: duration: must be a duration of at most 30d: whole milliseconds, or 500ms, 30s, 10m, 2h, 1d',
    );
    expect(error(BASE.replace('    - count: 2', '    - count: 2\n      colour: red'))).toMatch(
      /^s\.yaml:6:7: cluster\.agents\[0\]\.colour: is not a field here \(allowed: count, resources, attributes\)$/,
    );
    expect(error(`${BASE}timeline:\n  - at: 10s\n    fault: { type: explode }\n`)).toMatch(
      /^s\.yaml:13:20: timeline\[0\]\.fault\.type: must be one of crash_agent, /,
    );
    expect(error(`${BASE}timeline:\n  - at: 10s\n    fault: { type: crash_agnet, agent: 0 }\n`)).toMatch(
      /^s\.yaml:13:20: timeline\[0\]\.fault\.type: must be one of crash_agent, .*, master_failover \(did you mean crash_agent\?\)$/,
    );
    expect(error(`${BASE}timeline:\n  - at: 10s\n    fault: { type: crash_agent, agnet: 0 }\n`)).toBe(
      's.yaml:13:33: timeline[0].fault.agnet: is not a field of crash_agent (did you mean agent?); its fields: agent, agent_id',
    );
    expect(
      error(`${BASE}timeline:\n  - at: 10s\n    fault: { type: fail_task, framework: web, ordinal: 1, code: 3 }\n`),
    ).toMatch(
      /timeline\[0\]\.fault\.code: is not a field of fail_task; its fields: framework, ordinal, task_id, framework_id, exit_code, message$/,
    );
    expect(error(BASE.replace('name: t\n', ''))).toBe("s.yaml:1:1: the file: must have required property 'name'");
    expect(error('name: [unclosed')).toMatch(/^s\.yaml:1:/);
  });

  it('checks what the schema cannot: names, agent indexes, and each fault as the control API reads it', () => {
    expect(error(`${BASE}timeline:\n  - at: 10s\n    fault: { type: crash_agent, agent: 2 }\n`)).toBe(
      's.yaml:13:40: timeline[0].fault.agent: the cluster has 2 agents (0 to 1)',
    );
    expect(error(`${BASE}timeline:\n  - at: 10s\n    fault: { type: crash_agent }\n`)).toBe(
      "s.yaml:13:12: timeline[0].fault: Expecting 'agent_id' to be present",
    );
    expect(error(BASE.replace('  - invariants: true', '  - tasks: { framework: db, state: TASK_RUNNING }'))).toBe(
      "s.yaml:10:5: expect[0].framework: no framework named 'db' in this file",
    );
    expect(error(BASE.replace('  - name: web\n', '  - name: web\n    role: a\n  - name: web\n'))).toMatch(
      /'web' is named twice/,
    );
  });

  it('reads conditions as the control API does, a task id and all; a framework stays named as in the file', () => {
    const s = parseScenario(
      's.yaml',
      `${BASE.replace('  - invariants: true', '  - tasks: { framework: web, state: TASK_FINISHED, task_id: web-0, min: 1 }\n  - trace: { kind: "task:launch" }')}timeline:\n  - when: { agents: { state: active, count: 2 } }\n    fault: { type: crash_agent, agent: 0 }\n`,
    );
    expect(s.expect[0]).toEqual({
      tasks: { state: 'TASK_FINISHED', framework: 'web', taskId: 'web-0', min: 1 },
      line: 10,
    });
    expect(s.expect[1]).toEqual({ trace: { kind: 'task:launch' }, line: 11 });
    expect(s.timeline[0]!.when).toEqual({ agents: { state: 'active', count: 2 } });
    expect(error(BASE.replace('  - invariants: true', '  - tasks: { state: TASK_RUNNING, task_id: "" }'))).toBe(
      's.yaml:10:44: expect[0].tasks.task_id: must NOT have fewer than 1 characters',
    );
  });

  it('reads agents named by selector and by a name a selector chose them as, and refuses what names no agent', () => {
    const chose = '{ type: crash_agent, agent: { running: { framework: web, task_prefix: web-0 }, as: down } }';
    const file = (first: string, second = '{ type: restart_agent, agent: down }'): string =>
      `${BASE}timeline:\n  - at: 10s\n    fault: ${first}\n  - at: 20s\n    fault: ${second}\n`;
    const s = parseScenario('s.yaml', file(chose));
    expect(s.timeline.map((e) => e.fault?.['agent'])).toEqual([
      { running: { framework: 'web', task_prefix: 'web-0' }, as: 'down' },
      'down',
    ]);
    expect(() =>
      parseScenario('s.yaml', file(chose, '{ type: heal, nodes: [master, { attributes: "rack:a" }] }')),
    ).not.toThrow();

    expect(error(file('{ type: crash_agent, agent: { running: { framework: db }, as: down } }'))).toBe(
      "s.yaml:13:64: timeline[0].fault.agent.running.framework: no framework named 'db' in this file",
    );
    expect(error(file('{ type: crash_agent, agent: { running: { prefix: web }, as: down } }'))).toBe(
      's.yaml:13:53: timeline[0].fault.agent.running.prefix: is not a field here (allowed: framework, task_prefix, state)',
    );
    expect(error(file('{ type: crash_agent, agent: { as: down } }'))).toBe(
      's.yaml:13:40: timeline[0].fault.agent: must have at least one of running or attributes or task',
    );
    expect(error(file('{ type: crash_agent, agent: { running: { state: RUNNING }, as: down } }'))).toMatch(
      /^s\.yaml:13:60: timeline\[0\]\.fault\.agent\.running\.state: must be one of TASK_STAGING, /,
    );
    expect(error(file('{ type: crash_agent, agent: { attributes: "rack", as: down } }'))).toBe(
      "s.yaml:13:54: timeline[0].fault.agent.attributes: Invalid attribute 'rack': expected name:value",
    );
    expect(error(file('{ type: crash_agent, agent: { running: {}, as: master } }'))).toBe(
      "s.yaml:13:59: timeline[0].fault.agent.as: 'master' names the master; choose another name",
    );
    expect(error(file('{ type: crash_agent, agent: { running: {} } }'))).toBe(
      "s.yaml:15:42: timeline[1].fault.agent: no fault of this file chooses an agent as 'down'",
    );
    expect(error(file(chose, '{ type: crash_agent, agent: { running: {}, as: down } }'))).toMatch(
      /^s\.yaml:15:\d+: timeline\[1\]\.fault\.agent\.as: 'down' is chosen twice$/,
    );
    expect(error(file(chose, '{ type: crash_agent, agent: -1 }'))).toBe(
      "s.yaml:15:40: timeline[1].fault.agent: must be an agent: its index (0, 1, ...), a name an earlier fault chose it 'as', or a selector (running, attributes, task)",
    );
    expect(error(file(chose, '{ type: heal, nodes: [master, 2] }'))).toBe(
      's.yaml:15:42: timeline[1].fault.nodes[1]: the cluster has 2 agents (0 to 1)',
    );
  });

  it('reads bundled frameworks, requests to their APIs and checks of their answers', () => {
    const text = `${BASE}services:
  - name: wf
    kind: workflow
    config: { task_cpu: 0.5, checkpoint: true }
timeline:
  - at: 10s
    request: { service: wf, path: /v0/queue_command, body: { workflow_task_id: a } }
  - at: 20s
    request: { service: wf, path: /v0/dags }
`.replace(
      '  - invariants: true',
      '  - service: { name: wf, get: /v0/task/a, field: status.state, equals: TASK_FINISHED }',
    );
    const s = parseScenario('s.yaml', text);
    expect(s.services).toEqual([{ name: 'wf', kind: 'workflow', config: { task_cpu: '0.5', checkpoint: 'true' } }]);
    expect(s.timeline.map((e) => e.request)).toEqual([
      { service: 'wf', method: 'POST', path: '/v0/queue_command', body: { workflow_task_id: 'a' } },
      { service: 'wf', method: 'GET', path: '/v0/dags' },
    ]);
    expect(s.expect[0]).toMatchObject({
      service: { name: 'wf', get: '/v0/task/a', field: 'status.state', equals: 'TASK_FINISHED' },
    });
    // A service is a framework to conditions and faults.
    expect(() =>
      parseScenario(
        's.yaml',
        text.replace('expect:\n', 'expect:\n  - tasks: { framework: wf, state: TASK_FINISHED, count: 1 }\n'),
      ),
    ).not.toThrow();

    expect(error(`${BASE}services:\n  - name: wf\n    kind: airflow\n`)).toMatch(
      /^s\.yaml:13:11: services\[0\]\.kind: must be one of workflow, orchestrator$/,
    );
    expect(error(`${BASE}timeline:\n  - at: 1s\n    request: { service: nope, path: /x }\n`)).toBe(
      "s.yaml:13:25: timeline[0].request.service: no service named 'nope' in this file",
    );
    expect(error(`${BASE}timeline:\n  - at: 1s\n`)).toBe(
      's.yaml:12:5: timeline[0]: must have exactly one of fault or request',
    );
    expect(error(`${BASE}timeline:\n  - fault: { type: crash_agent, agent: 0 }\n`)).toBe(
      's.yaml:12:5: timeline[0]: must have exactly one of at or when',
    );
    expect(error(BASE.replace('  - invariants: true', '  - service: { name: web, get: /x }'))).toBe(
      "s.yaml:10:22: expect[0].service.name: no service named 'web' in this file",
    );
    expect(error(`${BASE}services:\n  - name: web\n    kind: workflow\n`)).toMatch(
      /services\[0\]\.name: 'web' is named twice/,
    );
  });

  it('reads durations with units', () => {
    expect([
      parseDuration('500ms'),
      parseDuration('30s'),
      parseDuration('1.5m'),
      parseDuration('2h'),
      parseDuration('1d'),
      parseDuration(250),
    ]).toEqual([500, 30_000, 90_000, 7_200_000, 86_400_000, 250]);
    expect([parseDuration('10'), parseDuration(-1), parseDuration('1 m')]).toEqual([undefined, undefined, undefined]);
  });

  it('ships the schema as written by npm run gen:schema', () => {
    expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(schemaText());
  });
});
