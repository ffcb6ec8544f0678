/** The condition vocabulary as scenario files, the control API and the library write it, read into the core's form. */
import { describe, expect, it } from 'vitest';
import { parseCondition } from '../../../src/wire/sim/conditions.js';

describe('conditions: each kind', () => {
  it('reads tasks, with a framework, a task id and bounds', () => {
    expect(parseCondition({ tasks: { state: 'TASK_RUNNING' } })).toEqual({ tasks: { state: 'TASK_RUNNING' } });
    expect(
      parseCondition({ tasks: { state: 'TASK_FINISHED', framework: 'fw-1', task_id: 't', count: 3, min: 1, max: 5 } }),
    ).toEqual({
      tasks: { state: 'TASK_FINISHED', framework: 'fw-1', taskId: 't', count: 3, min: 1, max: 5 },
    });
  });

  it('reads agents, frameworks and trace', () => {
    expect(parseCondition({ agents: { state: 'unreachable', count: 1 } })).toEqual({
      agents: { state: 'unreachable', count: 1 },
    });
    expect(parseCondition({ frameworks: { state: 'removed', max: 0 } })).toEqual({
      frameworks: { state: 'removed', max: 0 },
    });
    expect(parseCondition({ trace: { kind: 'task:status', contains: '"TASK_FAILED"', min: 2 } })).toEqual({
      trace: { kind: 'task:status', contains: '"TASK_FAILED"', min: 2 },
    });
  });

  it('reads all and any, nested', () => {
    expect(
      parseCondition({
        all: [
          { agents: { state: 'active', min: 1 } },
          { any: [{ trace: { kind: 'x' } }, { frameworks: { state: 'subscribed' } }] },
        ],
      }),
    ).toEqual({
      all: [
        { agents: { state: 'active', min: 1 } },
        { any: [{ trace: { kind: 'x' } }, { frameworks: { state: 'subscribed' } }] },
      ],
    });
  });

  it('names the field from where it is told', () => {
    expect(parseCondition({ all: [] }, 'expect[0]')).toBe(
      "Expecting 'expect[0].all' to be a non-empty array of conditions",
    );
  });
});

describe('conditions: errors name the field', () => {
  const cases: [unknown, string][] = [
    [undefined, "Expecting 'condition' to be an object"],
    [[], "Expecting 'condition' to be an object"],
    [{}, "Expecting 'condition' to have exactly one of tasks, agents, frameworks, trace, all, any"],
    [
      { tasks: { state: 'TASK_RUNNING' }, agents: { state: 'active' } },
      "Expecting 'condition' to have exactly one of tasks, agents, frameworks, trace, all, any",
    ],
    [{ constructor: 1 }, "Expecting 'condition' to have exactly one of tasks, agents, frameworks, trace, all, any"],
    [{ tasks: 'TASK_RUNNING' }, "Expecting 'condition.tasks' to be an object"],
    [{ tasks: { state: 'RUNNING' } }, "Expecting 'condition.tasks.state' to be a task state (TASK_RUNNING, ...)"],
    [{ tasks: { state: 'TASK_RUNNING', framework: '' } }, "Expecting 'condition.tasks.framework' to be a framework"],
    [{ tasks: { state: 'TASK_RUNNING', task_id: 7 } }, "Expecting 'condition.tasks.task_id' to be a task id"],
    [
      { tasks: { state: 'TASK_RUNNING', taskId: 't' } },
      "Expecting 'condition.tasks' to have only state, framework, task_id, count, min, max (not 'taskId')",
    ],
    [
      { tasks: { state: 'TASK_RUNNING', count: -1 } },
      "Expecting 'condition.tasks.count' to be a whole number from 0 to 1000000000",
    ],
    [
      { tasks: { state: 'TASK_RUNNING', min: 1.5 } },
      "Expecting 'condition.tasks.min' to be a whole number from 0 to 1000000000",
    ],
    [
      { tasks: { state: 'TASK_RUNNING', max: '2' } },
      "Expecting 'condition.tasks.max' to be a whole number from 0 to 1000000000",
    ],
    [
      { agents: { state: 'registered' } },
      "Expecting 'condition.agents.state' to be one of active, disconnected, unreachable, gone",
    ],
    [
      { agents: { state: 'active', framework: 'x' } },
      "Expecting 'condition.agents' to have only state, count, min, max (not 'framework')",
    ],
    [{ frameworks: {} }, "Expecting 'condition.frameworks.state' to be one of subscribed, disconnected, removed"],
    [{ trace: { kind: '' } }, "Expecting 'condition.trace.kind' to be a trace entry kind (e.g. agent:unreachable)"],
    [{ trace: { kind: 'x', contains: 1 } }, "Expecting 'condition.trace.contains' to be a text"],
    [{ any: [] }, "Expecting 'condition.any' to be a non-empty array of conditions"],
    [{ all: {} }, "Expecting 'condition.all' to be a non-empty array of conditions"],
    [
      { all: [{ trace: { kind: 'x' } }, { agents: { state: 'x' } }] },
      "Expecting 'condition.all[1].agents.state' to be one of active, disconnected, unreachable, gone",
    ],
  ];
  it.each(cases)('%j', (value, error) => expect(parseCondition(value)).toBe(error));

  it('nests all and any at most 8 deep', () => {
    let deep: unknown = { agents: { state: 'active' } };
    for (let i = 0; i < 8; i++) deep = { all: [deep] };
    expect(typeof parseCondition(deep)).toBe('object');
    deep = { any: [deep] };
    expect(parseCondition(deep)).toMatch(/^Expecting 'condition(\.(all|any)\[0\])+\.all' to nest at most 8 deep$/);
  });
});

describe('conditions: the old forms say what to write', () => {
  const cases: [unknown, string][] = [
    [
      { task_state: { state: 'TASK_FINISHED', task_id: 't', framework_id: 'f', count: 2 } },
      `'condition.task_state' is the old form of a condition: write {"tasks":{"state":"TASK_FINISHED","framework":"f","task_id":"t","min":2}}`,
    ],
    [
      { task_state: null },
      `'condition.task_state' is the old form of a condition: write {"tasks":{"state":"TASK_RUNNING","min":1}}`,
    ],
    [
      { agents_registered: 3 },
      `'condition.agents_registered' is the old form of a condition: write {"agents":{"state":"active","min":3}}`,
    ],
    [
      { frameworks_subscribed: 1 },
      `'condition.frameworks_subscribed' is the old form of a condition: write {"frameworks":{"state":"subscribed","min":1}}`,
    ],
    [
      { trace_kind: 'agent:unreachable' },
      `'condition.trace_kind' is the old form of a condition: write {"trace":{"kind":"agent:unreachable"}}`,
    ],
    [
      { any: [{ trace_kind: 'x' }] },
      `'condition.any[0].trace_kind' is the old form of a condition: write {"trace":{"kind":"x"}}`,
    ],
  ];
  it.each(cases)('%j', (value, error) => expect(parseCondition(value)).toBe(error));
});
