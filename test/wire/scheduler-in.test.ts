import { describe, expect, it } from 'vitest';
import type { TaskSpec } from '../../src/core/model/types.js';
import type { mesos } from '../../src/wire/generated/types.js';
import { decodeJson } from '../../src/wire/json-decode.js';
import { refuseMs, schedulerCallFromWire, taskFromWire, taskInfoOf } from '../../src/wire/scheduler-in.js';

describe('Filters.refuse_seconds', () => {
  it.each([
    ['unset filters', undefined, 5_000],
    ['unset refuse_seconds', {}, 5_000],
    ['zero', { refuse_seconds: 0 }, 0],
    ['a fraction', { refuse_seconds: 1.5 }, 1_500],
    ['negative: the default', { refuse_seconds: -3 }, 5_000],
    ['NaN: the default', { refuse_seconds: Number.NaN }, 5_000],
    ['above the cap', { refuse_seconds: 1e12 }, 31_536_000_000],
    ['Infinity: the cap', { refuse_seconds: Number.POSITIVE_INFINITY }, 31_536_000_000],
  ])('%s', (_name, filters, expected) => {
    expect(refuseMs(filters)).toBe(expected);
  });
});

describe('a launched TaskInfo as the task keeps it', () => {
  const decode = (json: unknown): mesos.v1.scheduler.Call => {
    const result = decodeJson<mesos.v1.scheduler.Call>('mesos.v1.scheduler.Call', JSON.stringify(json));
    if (!result.ok) throw new Error(result.error);
    return result.value;
  };
  const taskInfo = (id: string, extra: Record<string, unknown> = {}) => ({
    name: `task ${id}`,
    task_id: { value: id },
    agent_id: { value: 'agent-S1' },
    resources: [
      { name: 'cpus', type: 'SCALAR', scalar: { value: 0.5 } },
      { name: 'mem', type: 'SCALAR', scalar: { value: 32 }, role: '*' },
    ],
    command: { value: 'sleep 10', user: 'nobody' },
    ...extra,
  });
  const accept = (...tasks: unknown[]) =>
    decode({
      framework_id: { value: 'fw' },
      type: 'ACCEPT',
      accept: { offer_ids: [{ value: 'o1' }], operations: [{ type: 'LAUNCH', launch: { task_infos: tasks } }] },
    });
  const specsOf = (call: mesos.v1.scheduler.Call): TaskSpec[] => {
    const input = schedulerCallFromWire(call);
    if (typeof input === 'string' || input.type !== 'ACCEPT') throw new Error('not an ACCEPT');
    const [op] = input.operations;
    if (op?.type !== 'LAUNCH') throw new Error('not a LAUNCH');
    return [...op.tasks];
  };

  it('keeps out of raw what the spec says verbatim, and gives the TaskInfo back whole', () => {
    const call = accept(
      taskInfo('t1', {
        labels: { labels: [{ key: 'k', value: 'v' }] },
        resources: [{ name: 'ports', type: 'RANGES', ranges: { range: [{ begin: 1, end: 2 }] } }],
      }),
      taskInfo('t2'),
    );
    const sent = call.accept!.operations![0]!.launch!.task_infos!;
    const specs = specsOf(call);
    for (const [i, spec] of specs.entries()) {
      expect(Object.keys(spec.raw as object)).not.toContain('task_id');
      expect(Object.keys(spec.raw as object)).not.toContain('agent_id');
      expect(Object.keys(spec.raw as object)).not.toContain('name');
      expect(taskInfoOf(spec)).toEqual(sent[i]);
    }
  });

  it('shares one list of plain scalar resources among tasks, and one agent id string within a call', () => {
    const specs = specsOf(accept(taskInfo('t1'), taskInfo('t2')));
    const [a, b] = specs.map((s) => s.raw as mesos.v1.TaskInfo);
    expect(a!.resources).toBe(b!.resources);
    expect(Object.isFrozen(a!.resources)).toBe(true);
    // A command with a user is kept as sent, so the rest of each TaskInfo is its own.
    expect(a).not.toBe(b);
    // A later call's tasks share it too; a list with the role left out is another list.
    const [later] = specsOf(accept(taskInfo('t3')));
    expect((later!.raw as mesos.v1.TaskInfo).resources).toBe(a!.resources);
    const roleless = taskInfo('t4', {
      resources: [
        { name: 'cpus', type: 'SCALAR', scalar: { value: 0.5 } },
        { name: 'mem', type: 'SCALAR', scalar: { value: 32 } },
      ],
    });
    const [other] = specsOf(accept(roleless));
    expect((other!.raw as mesos.v1.TaskInfo).resources).not.toBe(a!.resources);
    expect(taskInfoOf(other!)?.resources).toEqual(roleless.resources);
  });

  it('keeps a list with anything beyond a plain scalar as sent', () => {
    const reserved = [
      {
        name: 'cpus',
        type: 'SCALAR',
        scalar: { value: 1 },
        reservations: [{ type: 'DYNAMIC', role: 'r', principal: 'p' }],
      },
    ];
    const [spec] = specsOf(accept(taskInfo('t1', { resources: reserved })));
    const call = accept(taskInfo('t1', { resources: reserved }));
    expect((spec!.raw as mesos.v1.TaskInfo).resources).not.toBe((specsOf(call)[0]!.raw as mesos.v1.TaskInfo).resources);
    expect(taskInfoOf(spec!)?.resources).toEqual(call.accept!.operations![0]!.launch!.task_infos![0]!.resources);
  });
});

describe('plain commands and no labels, shared', () => {
  const decodeTask = (json: unknown): TaskSpec => {
    const result = decodeJson<mesos.v1.TaskInfo>('mesos.v1.TaskInfo', JSON.stringify(json));
    if (!result.ok) throw new Error(result.error);
    return taskFromWire(result.value);
  };
  const task = (id: string, command: unknown) => ({
    name: 'n',
    task_id: { value: id },
    agent_id: { value: 'a' },
    command,
  });

  it('shares a command of a value (and shell) between tasks, as spec and as sent', () => {
    const [a, b] = [decodeTask(task('1', { value: 'sleep 5' })), decodeTask(task('2', { value: 'sleep 5' }))];
    expect(a.command).toBe(b.command);
    expect(a.command).toEqual({ shell: true, value: 'sleep 5', arguments: [] });
    expect((a.raw as mesos.v1.TaskInfo).command).toBe((b.raw as mesos.v1.TaskInfo).command);
    expect(a.labels).toBe(b.labels);
    // Nothing else kept: the whole rest of the TaskInfo is one shared object.
    expect(a.raw).toBe(b.raw);
    const noShell = decodeTask(task('3', { value: 'sleep 5', shell: false }));
    expect(noShell.command).not.toBe(a.command);
    expect(noShell.command?.shell).toBe(false);
    expect(taskInfoOf(noShell)?.command).toEqual({ value: 'sleep 5', shell: false });
  });

  it('keeps a command with more than a value as sent', () => {
    const rich = { value: 'run', user: 'nobody', uris: [{ value: 'http://x/y' }] };
    const [a, b] = [decodeTask(task('1', rich)), decodeTask(task('2', rich))];
    expect((a.raw as mesos.v1.TaskInfo).command).not.toBe((b.raw as mesos.v1.TaskInfo).command);
    expect(taskInfoOf(a)?.command).toEqual(rich);
    const long = 'x'.repeat(5000);
    expect(decodeTask(task('3', { value: long })).command).not.toBe(decodeTask(task('4', { value: long })).command);
  });
});
