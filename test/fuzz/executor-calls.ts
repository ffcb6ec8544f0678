/**
 * Executor calls (`mesos.v1.executor.Call`) as upstream JSON values, as
 * `calls.ts` makes scheduler calls: templates that name the live executors
 * of the run, their tasks and their framework through tokens (resolved by
 * `executor-live.ts` when the request is sent), with wrong ids, missing
 * fields and bad uuids now and then; and calls of the schema, their type
 * matching their payload, under the live ids most of the time.
 *
 * One index per call: `@@executor:3` and `@@executor-task:3` name the same
 * executor and one of its tasks, so an UPDATE built from them is right
 * unless another part of it was drawn wrong on purpose.
 */
import fc from 'fast-check';
import protobuf from 'protobufjs/light.js';
import { messageType } from '../../src/wire/schema.js';
import { base64, idx, oddString, schemaJson, some, value, w, type J } from './calls.js';
import type { Json } from './mutate.js';

export const EXECUTOR_CALL_TYPE = 'mesos.v1.executor.Call';

export const xtoken = {
  /** The framework whose tasks the live executors run. */
  framework: '@@executor-framework',
  executor: (i: number) => `@@executor:${i}`,
  /** The newest task of the executor of the same index. */
  task: (i: number) => `@@executor-task:${i}`,
  /** A task of another executor than the one of the same index, when there is one. */
  alienTask: (i: number) => `@@executor-alien-task:${i}`,
  /** The agent of the executor of the same index. */
  agent: (i: number) => `@@executor-agent:${i}`,
} as const;

/** The names of an enum field of TaskStatus: every state, reason and source there is. */
const statusEnum = (field: string) =>
  Object.keys((messageType('mesos.v1.TaskStatus').fields[field]!.resolvedType as protobuf.Enum).values);
const TASK_STATES = statusEnum('state');
const REASONS = statusEnum('reason');
const SOURCES = statusEnum('source');

/** Mostly a fresh 16-byte uuid; now and then one sent before, a short one, none that decodes. */
const uuid = fc.oneof(
  w(12, fc.uint8Array({ minLength: 16, maxLength: 16 }).map(base64)),
  w(2, fc.constantFrom('AAAAAAAAAAAAAAAAAAAAAA==', 'AQEBAQEBAQEBAQEBAQEBAQ==')),
  w(1, fc.uint8Array({ maxLength: 20 }).map(base64)),
  w(1, fc.constantFrom('', 'not base64!', '====', 'AAAA')),
);

/** Every task state, the usual ones of an executor most often. */
const state = fc.oneof(
  w(6, fc.constantFrom('TASK_RUNNING', 'TASK_STARTING', 'TASK_FINISHED', 'TASK_FAILED', 'TASK_KILLED', 'TASK_KILLING')),
  w(2, fc.constantFrom(...TASK_STATES)),
);
const source = fc.oneof(w(12, fc.constant('SOURCE_EXECUTOR')), w(2, fc.constantFrom(...SOURCES)));

const frameworkId = fc.oneof(
  w(24, fc.constant(xtoken.framework)),
  w(1, fc.constant('no-such-framework')),
  w(1, oddString),
);
/** The executor of index `i` mostly; another live one, or one that never existed, now and then. */
const executorId = (i: number) =>
  fc.oneof(
    w(24, fc.constant(xtoken.executor(i))),
    w(2, fc.constant(xtoken.executor(i + 1))),
    w(1, fc.constantFrom('no-such-executor', '')),
    w(1, oddString),
  );
const taskId = (i: number) =>
  fc.oneof(
    w(16, fc.constant(xtoken.task(i))),
    w(2, fc.constant(xtoken.alienTask(i))),
    w(1, fc.constantFrom('no-such-task', '')),
    w(1, oddString),
  );

/** A TaskStatus as the executor of index `i` reports one. */
function taskStatus(i: number): fc.Arbitrary<J> {
  const required = fc.record({ task_id: value(taskId(i)), state });
  const optional = some({
    source,
    uuid,
    executor_id: fc.oneof(w(3, value(fc.constant(xtoken.executor(i)))), w(1, value(executorId(i)))),
    message: fc.constantFrom('', 'running', 'é\u0000x'),
    reason: fc.constantFrom(...REASONS),
    data: fc.uint8Array({ maxLength: 16 }).map(base64),
    timestamp: fc.constantFrom(0, 1.5, 1e9, -1, 1e300),
    healthy: fc.boolean(),
    agent_id: value(fc.oneof(fc.constant(xtoken.agent(i)), oddString)),
  });
  // A well-formed update most of the time: the source and uuid an executor sends.
  const formed = fc.record({
    source: fc.constant('SOURCE_EXECUTOR'),
    uuid: fc.uint8Array({ minLength: 16, maxLength: 16 }).map(base64),
  });
  return fc
    .tuple(required, fc.oneof(w(6, formed), w(1, fc.constant({}))), optional)
    .map(([r, f, o]) => ({ ...o, ...f, ...r }));
}

/** A task the executor says it was given: TaskInfo's required fields, and sometimes nothing else. */
const unacknowledgedTask = (i: number) =>
  fc.record({
    name: fc.constantFrom('task', ''),
    task_id: value(taskId(i)),
    agent_id: value(fc.constant(xtoken.agent(i))),
    resources: fc.constant<Json>([]),
  });

const subscribe = (i: number) =>
  fc.oneof(
    w(4, fc.constant<J>({})),
    w(
      2,
      some({
        unacknowledged_tasks: fc.array(unacknowledgedTask(i), { maxLength: 2 }),
        unacknowledged_updates: fc.array(
          taskStatus(i).map((status) => ({ status })),
          { maxLength: 2 },
        ),
      }),
    ),
  );

/** The payload of each call type, under its field; `undefined` for none. */
const PAYLOADS: Record<string, (i: number) => fc.Arbitrary<J | undefined>> = {
  SUBSCRIBE: subscribe,
  UPDATE: (i) => taskStatus(i).map((status) => ({ status })),
  MESSAGE: () =>
    fc.record({
      data: fc.oneof(w(6, fc.uint8Array({ maxLength: 32 }).map(base64)), w(1, fc.constantFrom('', 'not base64!'))),
    }),
  HEARTBEAT: () => fc.constant(undefined),
  UNKNOWN: () => fc.constant(undefined),
};
const WEIGHTS: Record<string, number> = { SUBSCRIBE: 12, UPDATE: 16, MESSAGE: 5, HEARTBEAT: 2, UNKNOWN: 1 };

/** A call from a template: the ids (now and then one missing), the type, its payload (now and then missing too). */
export const executorTemplateCall: fc.Arbitrary<Json> = idx.chain((i) =>
  fc.oneof(
    ...Object.entries(PAYLOADS).map(([type, payload]) =>
      w(
        WEIGHTS[type]!,
        fc.tuple(frameworkId, executorId(i), payload(i), fc.nat({ max: 39 })).map(([fw, ex, p, miss]): Json => {
          const call: J = { framework_id: { value: fw }, executor_id: { value: ex }, type };
          if (p !== undefined && miss !== 0) call[type.toLowerCase()] = p;
          if (miss === 1) delete call['framework_id'];
          if (miss === 2) delete call['executor_id'];
          if (miss === 3) delete call['type'];
          return call;
        }),
      ),
    ),
  ),
);

/** A call of the schema, its payload of its type, under the live ids most of the time. */
export const executorSchemaCall: fc.Arbitrary<Json> = fc.oneof(
  w(1, schemaJson(EXECUTOR_CALL_TYPE, 3)),
  w(
    6,
    fc
      .tuple(fc.constantFrom(...Object.keys(messageType(EXECUTOR_CALL_TYPE).lookupEnum('Type').values)), idx)
      .chain(([type, i]) => {
        const field = messageType(EXECUTOR_CALL_TYPE).fields[type.toLowerCase()];
        const resolved = field?.resolvedType;
        const payload =
          resolved instanceof protobuf.Type ? schemaJson(resolved.fullName.slice(1), 3) : fc.constant(undefined);
        return fc.tuple(payload, frameworkId, executorId(i)).map(([p, fw, ex]): Json => {
          const call: J = { framework_id: { value: fw }, executor_id: { value: ex }, type };
          if (p !== undefined) call[type.toLowerCase()] = p;
          return call;
        });
      }),
  ),
);
