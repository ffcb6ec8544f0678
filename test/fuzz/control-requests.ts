/**
 * Generated requests for the control API of the simulation (`/sim/v1/`):
 * clock reads and moves, every fault of `wire/sim/faults.ts` aimed at live ids
 * (agents, the live framework, its tasks, `master`) or at odd ones, runs
 * until idle or until a condition, resets, snapshots and restores, the
 * trace and its events, the misuse report; bodies right and wrong, mutated
 * as the master fuzz mutates its calls; unknown paths and methods.
 */
import fc from 'fast-check';
import { FAULT_TYPES, MAX_SPAN_MS } from '../../src/wire/sim/faults.js';
import { AGENT_STATES, FRAMEWORK_STATES } from '../../src/core/conditions.js';
import { CONDITION_KINDS } from '../../src/wire/sim/conditions.js';
import { TASK_STATES } from '../../src/core/model/types.js';
import { idx, oddString, some as fields, token, w, type J } from './calls.js';
import type { Json } from './mutate.js';
import {
  abort,
  accept,
  acceptEncoding,
  assemble,
  bodyOf,
  contentType,
  framing,
  header,
  host,
  method,
  none,
  randomHeaders,
  version,
  type BodySpec,
  type RequestSpec,
} from './requests.js';

/** What the control API serves, and the methods each answers. */
export const CONTROL_PATHS: Readonly<Record<string, readonly string[]>> = {
  clock: ['GET'],
  advance: ['POST'],
  faults: ['POST'],
  trace: ['GET'],
  events: ['GET'],
  misuse: ['GET'],
  run_until_idle: ['POST'],
  run_until: ['POST'],
  reset: ['POST'],
  snapshot: ['POST'],
  restore: ['POST'],
};

/** A snapshot id the run may have taken (`snapshot-<n>`), or an odd one. */
export const snapshotToken = (i: number) => `@@snapshot:${i}`;

/** Spans of time: mostly short, now and then up to the day a move may take, and past it. */
const span: fc.Arbitrary<Json> = fc.oneof(
  w(8, fc.integer({ min: 0, max: 20_000 })),
  w(2, fc.constantFrom(60_000, 600_000, 3_600_000, MAX_SPAN_MS)),
  w(1, fc.constantFrom<Json>(-1, MAX_SPAN_MS + 1, 1.5, '1000', null, 2 ** 53, 1e308, true, [], {})),
);
const agentId = fc.oneof(w(8, idx.map(token.agent)), w(1, fc.constant('master')), w(2, oddString));
const frameworkId = fc.oneof(w(8, fc.constant(token.framework)), w(1, idx.map(token.otherFramework)), w(2, oddString));
const taskId = fc.oneof(w(8, idx.map(token.task)), w(2, oddString));
const node = fc.oneof(w(4, idx.map(token.agent)), w(2, fc.constant('master')), w(1, oddString));
const masterIndex = fc.oneof(w(6, fc.constantFrom<Json>(0, 1, 2)), w(1, fc.constantFrom<Json>(-1, 99, 0.5, '0', null)));
const messageTypes = fc.array(
  fc.oneof(
    fc.constantFrom('RUN_TASK', 'STATUS_UPDATE', 'PING', 'REGISTER_AGENT', 'KILL_TASK'),
    fc.stringMatching(/^[A-Z_]{1,12}$/),
  ),
  { maxLength: 3 },
);

const FAULT_FIELDS: Readonly<Record<(typeof FAULT_TYPES)[number], fc.Arbitrary<J>>> = {
  crash_agent: fields({ agent_id: agentId }, ['agent_id']),
  restart_agent: fields({ agent_id: agentId, recover: fc.constantFrom<Json>('reconnect', 'cleanup', 'x') }, [
    'agent_id',
  ]),
  add_agent: fields(
    {
      resources: fc.constantFrom<Json>('cpus:1;mem:256', 'mem:64;ports:[31000-31010]', 'cpus:x', '', 4),
      attributes: fc.constantFrom<Json>('rack:a', 'rack:a;zone:1', '', ':', 7),
    },
    ['resources'],
  ),
  remove_agent: fields({ agent_id: agentId }, ['agent_id']),
  schedule_maintenance: fields({ agent_id: agentId, start_in_ms: span, duration_ms: span }, [
    'agent_id',
    'duration_ms',
  ]),
  partition: fc.oneof(
    fields({ agent_id: agentId }, ['agent_id']),
    fields({ nodes: fc.array(node, { minLength: 1, maxLength: 3 }) }, ['nodes']),
  ),
  heal: fc.oneof(
    fields({ agent_id: agentId }, ['agent_id']),
    fields({ nodes: fc.array(node, { minLength: 1, maxLength: 3 }) }, ['nodes']),
  ),
  network_rule: fields(
    {
      action: fc.constantFrom<Json>('drop', 'delay', 'duplicate', 'x'),
      from: node,
      to: node,
      messages: messageTypes,
      delay_ms: span,
      jitter_ms: span,
      probability: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom<Json>(-0.5, 2, '1')),
    },
    ['action'],
  ),
  remove_network_rule: fields(
    { rule_id: fc.oneof(fc.integer({ min: 0, max: 8 }), fc.constantFrom<Json>(-1, 2 ** 53, '1', 1.5)) },
    ['rule_id'],
  ),
  drop_framework_connection: fields({ framework_id: frameworkId }, ['framework_id']),
  stall_heartbeats: fields({ framework_id: frameworkId, duration_ms: span }, ['framework_id']),
  resume_heartbeats: fields({ framework_id: frameworkId }, ['framework_id']),
  crash_executor: fc.oneof(
    fields({ task_id: taskId, framework_id: frameworkId }, ['task_id']),
    fields({ executor_id: taskId, agent_id: agentId, framework_id: frameworkId, task_id: taskId }, ['executor_id']),
  ),
  fail_task: fields(
    {
      task_id: taskId,
      framework_id: frameworkId,
      exit_code: fc.constantFrom<Json>(1, 255, 0, 256, 'x'),
      message: oddString,
    },
    ['task_id'],
  ),
  hang_task: fields({ task_id: taskId, framework_id: frameworkId }, ['task_id']),
  memory_spike: fields(
    { task_id: taskId, framework_id: frameworkId, mib: fc.constantFrom<Json>(1, 512, 1e9, 0, -1), duration_ms: span },
    ['task_id'],
  ),
  set_memory_limit: fields(
    { agent_id: agentId, task_id: taskId, container_id: oddString, mib: fc.constantFrom<Json>(1, 64, 1e9, 0, -1) },
    ['agent_id'],
  ),
  clock_jump: fields({ ms: span }, ['ms']),
  crash_master: fields({ master: masterIndex }),
  restart_master: fields({ master: masterIndex }),
  master_failover: fields({ master: masterIndex }),
};

const fault: fc.Arbitrary<Json> = fc.oneof(
  w(
    20,
    fc.constantFrom(...FAULT_TYPES).chain((type) => FAULT_FIELDS[type].map((f): Json => ({ type, ...f }))),
  ),
  w(
    1,
    fc.oneof(
      fc.constantFrom<Json>({}, { type: 'x' }, { type: null }, { type: 'CRASH_AGENT' }),
      fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 })),
    ),
  ),
);

const count = fc.oneof(w(6, fc.integer({ min: 0, max: 4 })), w(1, fc.constantFrom<Json>(-1, 1.5, '1', 2 ** 53, null)));
const bounds = { count, min: count, max: count };
const leafCondition: fc.Arbitrary<Json> = fc.oneof(
  w(
    3,
    fields(
      {
        tasks: fields(
          { state: fc.constantFrom<Json>(...TASK_STATES, 'x'), task_id: taskId, framework: frameworkId, ...bounds },
          ['state'],
        ),
      },
      ['tasks'],
    ),
  ),
  w(
    2,
    fields({ agents: fields({ state: fc.constantFrom<Json>(...AGENT_STATES, 'x'), ...bounds }, ['state']) }, [
      'agents',
    ]),
  ),
  w(
    2,
    fields({ frameworks: fields({ state: fc.constantFrom<Json>(...FRAMEWORK_STATES, 'x'), ...bounds }, ['state']) }, [
      'frameworks',
    ]),
  ),
  w(
    2,
    fields(
      {
        trace: fields(
          {
            kind: fc.constantFrom<Json>('offer:create', 'task:status', 'agent:unreachable', '', 'x'),
            contains: fc.constantFrom<Json>('TASK_', '', 1),
            ...bounds,
          },
          ['kind'],
        ),
      },
      ['trace'],
    ),
  ),
  // The old forms (refused, naming the new one), and shapes that are no condition.
  w(
    1,
    fc.constantFrom<Json>(
      { task_state: { state: 'TASK_RUNNING' } },
      { agents_registered: 1 },
      { frameworks_subscribed: 1 },
      { trace_kind: 'x' },
    ),
  ),
  w(
    1,
    fc.constantFrom<Json>(
      {},
      { x: 1 },
      [],
      null,
      { agents: { state: 'active' }, frameworks: { state: 'subscribed' } },
      { [CONDITION_KINDS[0]]: null },
      { tasks: { state: 'TASK_RUNNING', y: 1 } },
    ),
  ),
);
const condition: fc.Arbitrary<Json> = fc.oneof(
  w(5, leafCondition),
  w(
    1,
    fc
      .tuple(fc.constantFrom('all', 'any'), fc.array(leafCondition, { maxLength: 3 }))
      .map(([k, cs]): Json => ({ [k]: cs })),
  ),
  // Deeper than conditions may nest.
  w(
    1,
    fc
      .integer({ min: 2, max: 12 })
      .map((depth) =>
        Array.from({ length: depth }).reduce<Json>((c) => ({ any: [c] }), { agents: { state: 'active' } }),
      ),
  ),
);

const seed = fc.oneof(fc.nat(), fc.constantFrom<Json>('', 'abc', -1, 1.5, 2 ** 53, null, [], 'x'.repeat(300)));
const snapshotId = fc.oneof(w(6, idx.map(snapshotToken)), w(1, oddString), w(1, fc.constantFrom<Json>(1, null, '')));

/** The body of a call to each path, right more often than wrong. */
const BODIES: Readonly<Record<string, fc.Arbitrary<Json>>> = {
  advance: fields({ ms: span }, ['ms']),
  faults: fault,
  run_until_idle: fields({ max_ms: span }),
  run_until: fields({ condition, max_ms: span }, ['condition']),
  reset: fields({ seed }),
  snapshot: fc.constantFrom<Json>({}, { x: 1 }),
  restore: fields({ snapshot_id: snapshotId }, ['snapshot_id']),
};

/** A call's JSON as it is (two in three) or mutated; or no body, some text, some bytes. */
function controlBody(path: string): fc.Arbitrary<BodySpec> {
  const call = BODIES[path] ?? fc.constant<Json>({});
  return fc.oneof(
    w(
      24,
      fc.tuple(call, fc.nat({ max: 2 })).chain(([c, m]) => bodyOf('json', fc.constant(c), m === 0, '')),
    ),
    w(2, fc.constant({ kind: 'none' } as const)),
    w(
      2,
      fc
        .oneof(fc.string({ maxLength: 30 }), fc.constantFrom('{}', '[]', 'null', '{"ms":1}{}', '\ufeff{}', ' '))
        .map((text) => ({ kind: 'text', text }) as const),
    ),
    w(
      1,
      fc.uint8Array({ maxLength: 32 }).map((b) => ({ kind: 'bytes', bytes: [...b] }) as const),
    ),
  );
}

const otherPath = fc.constantFrom(
  '/sim/v1',
  '/sim/v1/',
  '/sim/v1/x',
  '/sim/v1/faults/',
  '/sim/v1//clock',
  '/SIM/V1/CLOCK',
  '/sim/v2/clock',
  '/sim/v1/clock/x',
  '/sim',
  `/sim/v1/${'a'.repeat(3000)}`,
);
const query = fc.oneof(
  w(8, fc.constant('')),
  w(1, fc.constantFrom('?x=1', '?', '?ms=5', '?%zz', `?${'a'.repeat(3000)}`)),
);

/** A request to the control API: a known path with its method and a body for it, mostly. */
export const controlRequestSpec: fc.Arbitrary<RequestSpec> = fc
  .oneof(w(20, fc.constantFrom(...Object.keys(CONTROL_PATHS))), w(1, otherPath))
  .chain((path) => {
    const known = CONTROL_PATHS[path];
    const usual = known === undefined ? fc.constantFrom('GET', 'POST') : fc.constantFrom(...known);
    return fc.record({
      target: query.map((q) => `${known === undefined ? path : `/sim/v1/${path}`}${q}`),
      method: method(usual),
      body: controlBody(path),
      headers: fc.tuple(
        fc.oneof(w(6, contentType('json')), w(1, none)),
        accept,
        acceptEncoding,
        randomHeaders,
        fc.oneof(w(6, none), w(1, header('Last-Event-ID', fc.constantFrom('0', '5', '999999', 'x', '-1')))),
      ),
      framing,
      version,
      host,
      followUp: fc.boolean(),
      hold: fc.oneof(w(4, fc.constant(false)), w(1, fc.constant(true))),
      abort,
    });
  })
  .map((r) => assemble({ ...r, server: 0 }));
