/**
 * The direct Task writers of GET_STATE and GET_TASKS against the generic
 * encoders, on any task: the same JSON text and the same protobuf bytes.
 * fast-check prints the seed and the shrunk task on failure.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/model/records.js';
import type { Resource } from '../../src/core/model/resources.js';
import { TASK_STATES, type TaskStatus } from '../../src/core/model/types.js';
import { encodeJson } from '../../src/wire/json-encode.js';
import { taskToWire } from '../../src/wire/operator-state.js';
import { encodeProto } from '../../src/wire/proto-codec.js';
import { ProtoWriter } from '../../src/wire/proto-writer.js';
import { delimitedLength, taskProtoLength, taskWireJson, writeTaskProto } from '../../src/wire/task-writer.js';
import { toV0Json } from '../../src/wire/v0/json.js';
import { taskObject } from '../../src/wire/v0/objects.js';
import { taskJson } from '../../src/wire/v0/task-json.js';
import { richCluster } from './read-fixture.js';

/** Every task of the fixture: labels, limits, ports, custom executors, unreachable, completed. */
function fixtureTasks(): { task: Task; user: string }[] {
  const { cluster } = richCluster();
  const out: { task: Task; user: string }[] = [];
  for (const fw of [...cluster.view.frameworks(), ...cluster.view.completedFrameworks()]) {
    for (const task of [...fw.tasks.values(), ...fw.completedTasks]) out.push({ task, user: fw.info.user });
  }
  return out;
}

function expectSameEncoding(task: Task, user: string): void {
  expect(taskWireJson(task, user)).toBe(encodeJson('mesos.v1.Task', taskToWire(task, user)));
  const out = new ProtoWriter(8);
  writeTaskProto(out, 1, task, user);
  const expected = new ProtoWriter(8);
  expected.bytes(1, encodeProto('mesos.v1.Task', taskToWire(task, user)));
  const written = Buffer.from(out.take());
  expect(written.equals(Buffer.from(expected.take()))).toBe(true);
  expect(delimitedLength(taskProtoLength(task, user))).toBe(written.length);
  expect(taskJson(task, user)).toBe(toV0Json(taskObject(task, user)));
}

const text = fc.oneof(
  fc.stringMatching(/^[a-z0-9.-]{0,12}$/),
  fc.string({ maxLength: 200, unit: 'binary' }),
  fc.constantFrom('x'.repeat(130), 'y'.repeat(17_000)),
);
const hex = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('hex'));
const state = fc.constantFrom(...TASK_STATES);

const status = fc.record(
  {
    taskId: text,
    state,
    source: fc.constantFrom('SOURCE_MASTER', 'SOURCE_AGENT', 'SOURCE_EXECUTOR'),
    reason: fc.constantFrom('REASON_TASK_UNKNOWN', 'REASON_AGENT_REMOVED'),
    message: text,
    agentId: text,
    executorId: text,
    timestampMs: fc.oneof(fc.integer({ min: 0, max: 2e12 }), fc.double({ min: 0, max: 2e12, noNaN: true })),
    uuid: hex,
    containerId: text,
    unreachableTimeMs: fc.integer({ min: 0, max: 2e12 }),
  },
  { requiredKeys: ['taskId', 'state', 'source', 'timestampMs'] },
) as fc.Arbitrary<TaskStatus>;

describe('the direct Task writers', () => {
  it('write what the generic encoders write for every task of a rich cluster', () => {
    const tasks = fixtureTasks();
    expect(tasks.length).toBeGreaterThan(5);
    for (const { task, user } of tasks) expectSameEncoding(task, user);
  });

  it('write what the generic encoders write for any ids, states and statuses', () => {
    const [base] = fixtureTasks();
    const shape = fc.record(
      {
        name: text,
        taskId: text,
        frameworkId: text,
        agentId: text,
        executorId: fc.option(text, { nil: undefined }),
        state,
        statuses: fc.array(status, { maxLength: 4 }),
        statusUpdateState: fc.option(state, { nil: undefined }),
        statusUpdateUuid: fc.option(hex, { nil: undefined }),
        user: text,
      },
      { requiredKeys: ['name', 'taskId', 'frameworkId', 'agentId', 'state', 'statuses', 'user'] },
    );
    fc.assert(
      fc.property(shape, (s) => {
        const task: Task = {
          ...base!.task,
          spec: { ...base!.task.spec, name: s.name, taskId: s.taskId, labels: [] },
          frameworkId: s.frameworkId,
          agentId: s.agentId,
          state: s.state,
          statuses: s.statuses,
          ...(s.executorId === undefined ? {} : { executorId: s.executorId }),
          ...(s.statusUpdateState === undefined ? {} : { statusUpdateState: s.statusUpdateState }),
          ...(s.statusUpdateUuid === undefined ? {} : { statusUpdateUuid: s.statusUpdateUuid }),
        };
        if (s.executorId === undefined) delete (task as { executorId?: string }).executorId;
        expectSameEncoding(task, s.user);
      }),
      { numRuns: 300 },
    );
  });
});

/** Few names and values, so that bags that differ in one field only come up often. */
const small = fc.constantFrom('', '*', 'a', 'a:1', '1:a', 'cpus', 'mem', 'db');
const resource: fc.Arbitrary<Resource> = fc.oneof(
  fc.record(
    {
      name: fc.constantFrom('cpus', 'mem', 'disk', 'gpus', 'x'),
      type: fc.constant('SCALAR' as const),
      milli: fc.constantFrom(0, 10, 1000),
      role: small,
      allocationRole: small,
      reservations: fc.array(
        fc.record({ type: fc.constantFrom('STATIC' as const, 'DYNAMIC' as const), role: small }, { requiredKeys: [] }),
        { maxLength: 1 },
      ),
      disk: fc.constant({ volume: { containerPath: 'v', mode: 'RW' as const } }),
    },
    { requiredKeys: ['name', 'type', 'role'] },
  ) as fc.Arbitrary<Resource>,
  fc.record(
    {
      name: fc.constantFrom('ports', 'x'),
      type: fc.constant('RANGES' as const),
      ranges: fc.array(fc.tuple(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 12 })), { maxLength: 2 }),
      role: small,
    },
    { requiredKeys: ['name', 'type', 'role'] },
  ) as fc.Arbitrary<Resource>,
  fc.record(
    { name: fc.constantFrom('x', 'zones'), type: fc.constant('SET' as const), set: fc.array(small), role: small },
    { requiredKeys: ['name', 'type', 'role'] },
  ) as fc.Arbitrary<Resource>,
);

describe('the direct Task writers, resources', () => {
  it("write each task's own resources, whether its bag is shared, a copy of another or like another but for one field", () => {
    const base = fixtureTasks().find(({ task }) => task.spec.taskId === 'short');
    // One run's bags are written one after the other: the writers keep what they made of earlier ones.
    const bags = fc.array(fc.array(resource, { maxLength: 3 }), { minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(bags, (list) => {
        for (const bag of [...list, ...list.map((b) => b.map((r) => ({ ...r })))]) {
          expectSameEncoding({ ...base!.task, resources: bag }, 'u');
        }
      }),
      { numRuns: 300 },
    );
  });
});
