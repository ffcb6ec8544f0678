/**
 * Scheduler calls as upstream JSON values, two ways:
 *
 *   templates   calls written by hand to be valid, or nearly: they name the
 *               live framework, offers, agents, tasks and update uuids
 *               through tokens (`@@offer:2`) resolved when the request is
 *               sent, so that generated ACCEPTs launch real tasks and
 *               ACKNOWLEDGEs release real updates. Values stray off the
 *               valid range now and then (negative cpus, unknown roles).
 *   schema      any message of the schema (`mesos.v1.scheduler.Call` and
 *               its payloads) by reflection, with the call's type matching
 *               its payload and the live framework id, so that random
 *               payloads get past the first checks into the master.
 *
 * Tokens are resolved by `live.ts`. A token names an index, taken modulo
 * what exists, so a generated value never goes stale.
 */
import fc from 'fast-check';
import protobuf from 'protobufjs/light.js';
import { encodeJson } from '../../src/wire/json.js';
import { messageType } from '../../src/wire/schema.js';
import { messageArbitrary } from '../wire/message-arbitrary.js';
import type { Json } from './mutate.js';

export const CALL_TYPE = 'mesos.v1.scheduler.Call';

/** Token spellings; `live.ts` resolves them. */
export const token = {
  framework: '@@framework',
  /** The stream id of the framework the call names (the live one's if it names no known one). */
  stream: '@@stream',
  otherFramework: (i: number) => `@@other-framework:${i}`,
  numberedFramework: (i: number) => `@@numbered-framework:${i}`,
  numberedOffer: (i: number) => `@@numbered-offer:${i}`,
  offer: (i: number) => `@@offer:${i}`,
  usedOffer: (i: number) => `@@used-offer:${i}`,
  offerAgent: (i: number) => `@@offer-agent:${i}`,
  agent: (i: number) => `@@agent:${i}`,
  /** An agent the operator deactivated (or drained), if there is one; else any. */
  deactivatedAgent: (i: number) => `@@deactivated-agent:${i}`,
  /** An `Authorization` value of a principal (`secured.ts`). */
  auth: (i: number) => `@@auth:${i}`,
  task: (i: number) => `@@task:${i}`,
  updateTask: (i: number) => `@@update-task:${i}`,
  updateAgent: (i: number) => `@@update-agent:${i}`,
  updateUuid: (i: number) => `@@update-uuid:${i}`,
} as const;

export type J = Record<string, Json>;
/** An arbitrary with its weight, for `fc.oneof`. */
export const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });
/** The index a token takes, modulo what exists. */
export const idx = fc.nat({ max: 7 });
export const value = (arb: fc.Arbitrary<string>) => arb.map((v) => ({ value: v }));
/** A record whose keys are optional but the `required` ones. */
export const some = (model: Record<string, fc.Arbitrary<Json>>, required: string[] = []) =>
  fc.record(model, { requiredKeys: required }) as fc.Arbitrary<J>;

/** Strings a validator must survive: empty, dots, slashes, control and lone surrogate characters, long. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', '.', '..', 'a/b', ' ', '*', '-x', 'a b', '\u0000', '\ud800', 'é', '%zz', 'x'.repeat(300)),
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
);

const frameworkId = fc.oneof(
  w(20, fc.constant(token.framework)),
  w(3, idx.map(token.otherFramework)),
  w(1, idx.map(token.numberedFramework)),
  w(2, oddString),
);
const agentId = fc.oneof(w(6, idx.map(token.agent)), w(3, idx.map(token.offerAgent)), w(1, oddString));
const taskId = fc.oneof(w(4, fc.constantFrom('t0', 't1', 't2', 't3')), w(4, idx.map(token.task)), w(1, oddString));
const offerId = fc.oneof(
  w(8, idx.map(token.offer)),
  w(2, idx.map(token.usedOffer)),
  w(1, fc.nat({ max: 40 }).map(token.numberedOffer)),
  w(1, oddString),
);
const executorId = fc.oneof(w(3, fc.constantFrom('e0', 'e1')), w(3, idx.map(token.task)), w(1, oddString));
const role = fc.oneof(w(4, fc.constantFrom('*', 'r1', 'r2', 'r1/sub')), w(1, oddString));

export const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const uuid = fc.oneof(
  w(6, idx.map(token.updateUuid)),
  w(3, fc.uint8Array({ minLength: 16, maxLength: 16 }).map(base64)),
  w(1, fc.uint8Array({ maxLength: 20 }).map(base64)),
  w(1, fc.constantFrom('', 'not base64!', '====', 'AAAA')),
);

const number = fc.oneof(
  w(6, fc.constantFrom(0, 0.1, 0.5, 1, 2, 4, 5, 32, 64, 128, 1024, 8192, 16384, 31000, 32000)),
  w(1, fc.constantFrom(-1, -0.5, 1e-300, 1e300, 2 ** 53, 0.001)),
  w(1, fc.double({ noNaN: true, noDefaultInfinity: true })),
);
const duration = fc.oneof(fc.constantFrom(0, 1, 5, 30, -1, 1e18), fc.maxSafeInteger()).map((n) => ({ nanoseconds: n }));
const filters = some({
  refuse_seconds: fc.oneof(w(4, fc.constantFrom(0, 0.5, 1, 5, 60, -1, 31536001, 1e300)), w(1, number)),
});

const scalar = (name: string, amounts: readonly number[]) =>
  fc.record({
    name: fc.constant(name),
    type: fc.constant('SCALAR'),
    scalar: fc.record({ value: fc.oneof(w(8, fc.constantFrom(...amounts)), w(1, number)) }),
  });
const port = fc.oneof(
  w(8, fc.integer({ min: 30990, max: 32010 })),
  w(1, fc.constantFrom(0, 1, 65535, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 63, -1)),
);
const ports = fc.record({
  name: fc.constant('ports'),
  type: fc.constant('RANGES'),
  ranges: fc.record({ range: fc.array(fc.record({ begin: port, end: port }), { maxLength: 3 }) }),
});
const oddResource = fc.record(
  {
    name: fc.oneof(fc.constantFrom('cpus', 'mem', 'gpus', 'ports', 'disk', ''), oddString),
    type: fc.constantFrom('SCALAR', 'RANGES', 'SET', 'TEXT', 'BOGUS'),
    scalar: fc.record({ value: number }),
    set: fc.record({ item: fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }) }),
    role: role,
    reservations: fc.array(
      some({ type: fc.constantFrom('STATIC', 'DYNAMIC'), role, principal: fc.constantFrom('p', '') }),
      { maxLength: 2 },
    ),
  },
  { requiredKeys: ['name', 'type'] },
);
/** Mostly what fits in an agent's offer (4 cpus, 8 GiB), sometimes not at all. */
const resources = fc.oneof(
  w(
    8,
    fc.tuple(scalar('cpus', [0.1, 0.5, 1]), scalar('mem', [32, 64, 128])).map((r) => r as Json[]),
  ),
  w(
    2,
    fc.array(
      fc.oneof(scalar('cpus', [0.1, 1, 4, 5]), scalar('mem', [1, 128, 8192, 9000]), scalar('disk', [1, 100]), ports),
      { maxLength: 4 },
    ),
  ),
  w(1, fc.array(oddResource, { maxLength: 3 })),
);

const command = fc.record(
  {
    value: fc.oneof(
      w(
        8,
        fc.constantFrom(
          'sleep 1',
          'sleep 5',
          'sleep 3600',
          'exit 0',
          'exit 3',
          'true',
          'false',
          ':',
          'echo hi',
          'sleep 1 && exit 2',
          'false || true',
          'sleep 1; exit 1',
          'yes',
        ),
      ),
      w(1, fc.constantFrom('', 'sleep -1', 'sleep abc', 'exit 999', 'sleep 1e9', '&&', ';;', 'sleep 0.5')),
      w(1, fc.string({ maxLength: 12 })),
    ),
    shell: fc.boolean(),
  },
  { requiredKeys: ['value'] },
);

const executor = (type: fc.Arbitrary<string>) =>
  some(
    {
      executor_id: value(executorId),
      type,
      command,
      resources,
      framework_id: value(frameworkId),
      name: fc.constant('ex'),
    },
    ['executor_id', 'type'],
  );

/** A TaskInfo for the offer at `offer`, mostly on that offer's agent. */
function taskInfo(offer: number, withRunner: boolean): fc.Arbitrary<J> {
  const agent = fc.oneof(w(8, fc.constant(token.offerAgent(offer))), w(1, agentId));
  const runner = withRunner
    ? fc.oneof(
        w(6, fc.record({ command })),
        w(2, fc.record({ executor: executor(fc.constantFrom('CUSTOM', 'DEFAULT')) })),
        w(1, fc.constant({})),
      )
    : fc.oneof(w(6, fc.record({ command })), w(1, fc.constant({})));
  const extras = some({
    kill_policy: some({ grace_period: duration }),
    labels: fc.record({
      labels: fc.array(some({ key: fc.string({ maxLength: 4 }), value: fc.string({ maxLength: 4 }) }, ['key']), {
        maxLength: 2,
      }),
    }),
    max_completion_time: duration,
    limits: fc.dictionary(
      fc.constantFrom('cpus', 'mem', 'x'),
      fc.oneof(fc.constantFrom<Json>('Infinity', 1, -1), fc.record({ value: number })),
    ),
  });
  return fc
    .tuple(
      fc.record({
        name: fc.constantFrom('task', '', 'tâche'),
        task_id: value(taskId),
        agent_id: value(agent),
        resources,
      }),
      runner,
      extras,
    )
    .map(([core, run, more]) => ({ ...core, ...run, ...more }));
}

const offerIds = (offer: number) =>
  fc.oneof(
    w(8, fc.constant([{ value: token.offer(offer) }] as Json[])),
    w(1, fc.constant([{ value: token.offer(offer) }, { value: token.offer(offer) }] as Json[])),
    w(1, fc.array(value(offerId), { maxLength: 3 })),
  );

const launch = (offer: number) =>
  fc.record({
    type: fc.constant('LAUNCH'),
    launch: fc.record({ task_infos: fc.array(taskInfo(offer, true), { minLength: 1, maxLength: 3 }) }),
  });
const launchGroup = (offer: number) =>
  fc.record({
    type: fc.constant('LAUNCH_GROUP'),
    launch_group: fc.record({
      executor: executor(fc.constant('DEFAULT')),
      task_group: fc.record({ tasks: fc.array(taskInfo(offer, false), { minLength: 1, maxLength: 2 }) }),
    }),
  });

/** A launch the master takes when the offer is still there: small tasks with ids of their own, on the offer's agent. */
const cleanAccept = fc.oneof(w(4, fc.constant(0)), w(1, idx)).chain((offer) =>
  fc.record({
    offer_ids: fc.constant([{ value: token.offer(offer) }] as Json[]),
    operations: fc
      .array(
        fc.record({
          name: fc.constant('task'),
          task_id: value(fc.nat({ max: 99 }).map((n) => `task-${n}`)),
          agent_id: fc.constant({ value: token.offerAgent(offer) }),
          resources: fc.tuple(scalar('cpus', [0.1, 0.5, 1]), scalar('mem', [32, 64, 128])).map((r) => r as Json[]),
          command: fc.record({
            value: fc.constantFrom(
              'sleep 1',
              'sleep 5',
              'sleep 30',
              'sleep 3600',
              'exit 0',
              'exit 3',
              'true',
              'false',
              'echo hi',
              'yes',
            ),
          }),
        }),
        { minLength: 1, maxLength: 2 },
      )
      .map((tasks): Json[] => [{ type: 'LAUNCH', launch: { task_infos: tasks } }]),
    filters: fc.constantFrom<Json>({ refuse_seconds: 0 }, { refuse_seconds: 1 }, {}),
  }),
);

const wildAccept = idx.chain((offer) =>
  some(
    {
      offer_ids: offerIds(offer),
      operations: fc.array(
        fc.oneof(w(8, launch(offer)), w(2, launchGroup(offer)), w(1, schemaJson('mesos.v1.Offer.Operation', 2))),
        { maxLength: 2 },
      ),
      filters,
    },
    ['offer_ids', 'operations'],
  ),
);

const accept = fc.oneof(w(3, cleanAccept), w(2, wildAccept));

/** The live framework's info as the runner subscribed it; UPDATE_FRAMEWORK varies it. */
export const LIVE_FRAMEWORK_INFO = {
  user: 'fuzz',
  name: 'fuzz-live',
  capabilities: [{ type: 'TASK_KILLING_STATE' }],
} as const;

const capabilities = fc.array(
  fc.record({
    type: fc.constantFrom(
      'MULTI_ROLE',
      'PARTITION_AWARE',
      'TASK_KILLING_STATE',
      'GPU_RESOURCES',
      'REGION_AWARE',
      'UNKNOWN',
    ),
  }),
  { maxLength: 3 },
);

/** FrameworkInfo fields the master takes: the roles agree with the capabilities. */
const validFields = fc.oneof(
  some({
    role: fc.constantFrom('*', 'r1'),
    capabilities: fc.constantFrom<Json>([], [{ type: 'TASK_KILLING_STATE' }], [{ type: 'PARTITION_AWARE' }]),
  }),
  fc.record({
    roles: fc.array(fc.constantFrom('*', 'r1', 'r2'), { minLength: 1, maxLength: 2 }),
    capabilities: fc.constant<Json>([{ type: 'MULTI_ROLE' }]),
  }),
);
/** Any of them, with values off the valid range. */
const wildFields = some({
  roles: fc.array(role, { maxLength: 3 }),
  role,
  capabilities,
  checkpoint: fc.boolean(),
  principal: fc.constantFrom('p', ''),
  hostname: fc.constantFrom('h', ''),
  webui_url: fc.constantFrom('http://x', ''),
  offer_filters: fc.dictionary(
    role,
    fc.record({
      min_allocatable_resources: fc.record({
        quantities: fc.array(fc.record({ quantities: fc.dictionary(fc.constantFrom('cpus', 'mem'), number) }), {
          maxLength: 2,
        }),
      }),
    }),
  ),
});

/** A FrameworkInfo; with `id`, of the live framework (a failover or an update). */
function frameworkInfo(id: boolean): fc.Arbitrary<J> {
  // Short, so that a framework left behind by a dropped stream is gone before the final check.
  const failover = some({ failover_timeout: fc.constantFrom(0, 1, 5, 30) });
  const who = id
    ? fc.record({
        user: fc.oneof(w(6, fc.constant(LIVE_FRAMEWORK_INFO.user)), w(1, fc.constant('other'))),
        name: fc.constantFrom('fuzz-live', 'renamed'),
        id: value(frameworkId),
      })
    : fc.record({ user: fc.constantFrom('root', 'fuzz', ''), name: fc.constantFrom('fuzz-extra', '') });
  return fc
    .tuple(who, fc.oneof(w(3, validFields), w(2, wildFields)), failover)
    .map(([a, b, c]) => ({ ...b, ...c, ...a }));
}

// A new framework mostly; now and then a failover of the live one.
const subscribe = fc
  .oneof(w(6, fc.constant(false)), w(1, fc.constant(true)))
  .chain((failover) =>
    some({ framework_info: frameworkInfo(failover), suppressed_roles: fc.array(role, { maxLength: 2 }) }, [
      'framework_info',
    ]),
  );

// Mostly the newest updates, which are the ones still waiting for their acknowledgement.
const ackTriple = fc.oneof(w(4, fc.constant(0)), w(2, fc.nat({ max: 2 })), w(1, idx)).chain((i) =>
  fc.record({
    agent_id: value(fc.oneof(w(8, fc.constant(token.updateAgent(i))), w(1, agentId))),
    task_id: value(fc.oneof(w(8, fc.constant(token.updateTask(i))), w(1, taskId))),
    uuid: fc.oneof(w(8, fc.constant(token.updateUuid(i))), w(1, uuid)),
  }),
);

const inverseOffers = some({ inverse_offer_ids: fc.array(value(offerId), { maxLength: 2 }), filters }, [
  'inverse_offer_ids',
]);
const operationId = value(fc.string({ maxLength: 6 }));

/** The payload of each call type, as a template; `undefined` for none (TEARDOWN, a REVIVE of every role). */
const PAYLOADS: Record<string, fc.Arbitrary<J | undefined>> = {
  SUBSCRIBE: subscribe,
  TEARDOWN: fc.constant(undefined),
  ACCEPT: accept,
  DECLINE: some(
    {
      offer_ids: fc.oneof(
        idx.map((i) => [{ value: token.offer(i) }] as Json[]),
        fc.array(value(offerId), { maxLength: 3 }),
      ),
      filters,
    },
    ['offer_ids'],
  ),
  REVIVE: fc.option(some({ roles: fc.array(role, { maxLength: 2 }), role }), { nil: undefined }),
  SUPPRESS: fc.option(some({ roles: fc.array(role, { maxLength: 2 }) }), { nil: undefined }),
  KILL: some({ task_id: value(taskId), agent_id: value(agentId), kill_policy: some({ grace_period: duration }) }, [
    'task_id',
  ]),
  SHUTDOWN: fc.record({ executor_id: value(executorId), agent_id: value(agentId) }),
  ACKNOWLEDGE: ackTriple,
  RECONCILE: fc.record({
    tasks: fc.array(some({ task_id: value(taskId), agent_id: value(agentId) }, ['task_id']), { maxLength: 4 }),
  }),
  MESSAGE: fc.record({
    agent_id: value(agentId),
    executor_id: value(executorId),
    data: fc.oneof(fc.uint8Array({ maxLength: 32 }).map(base64), fc.constant('not base64!')),
  }),
  REQUEST: fc.record({ requests: fc.array(some({ agent_id: value(agentId), resources }), { maxLength: 2 }) }),
  ACCEPT_INVERSE_OFFERS: inverseOffers,
  DECLINE_INVERSE_OFFERS: inverseOffers,
  ACKNOWLEDGE_OPERATION_STATUS: some({ agent_id: value(agentId), uuid, operation_id: operationId }, [
    'uuid',
    'operation_id',
  ]),
  RECONCILE_OPERATIONS: fc.record({
    operations: fc.array(some({ operation_id: operationId, agent_id: value(agentId) }, ['operation_id']), {
      maxLength: 2,
    }),
  }),
  UPDATE_FRAMEWORK: some({ framework_info: frameworkInfo(true), suppressed_roles: fc.array(role, { maxLength: 2 }) }, [
    'framework_info',
  ]),
  UNKNOWN: fc.constant(undefined),
};

/** How often each call type is drawn: the deep paths first. */
const WEIGHTS: Record<string, number> = {
  ACCEPT: 36,
  ACKNOWLEDGE: 24,
  KILL: 15,
  RECONCILE: 12,
  DECLINE: 12,
  UPDATE_FRAMEWORK: 9,
  SUBSCRIBE: 9,
  TEARDOWN: 1,
};

/** A call from a template: the type, the live framework id (or not), the payload under its field (`accept` for ACCEPT). */
export const templateCall: fc.Arbitrary<Json> = fc.oneof(
  ...Object.entries(PAYLOADS).map(([type, payload]) =>
    w(
      WEIGHTS[type] ?? 3,
      fc.tuple(payload, frameworkId).map(([p, fw]): Json => {
        const call: J = type === 'SUBSCRIBE' ? { type } : { type, framework_id: { value: fw } };
        if (p !== undefined) call[type.toLowerCase()] = p;
        return call;
      }),
    ),
  ),
);

/** Any message of `typeName`, as upstream JSON. */
export function schemaJson(typeName: string, depth: number): fc.Arbitrary<Json> {
  return messageArbitrary(messageType(typeName), depth).map((m) => JSON.parse(encodeJson(typeName, m)) as Json);
}

/** A call of the schema whose payload matches its type, from the live framework most of the time. */
export const schemaCall: fc.Arbitrary<Json> = fc.oneof(
  w(1, schemaJson(CALL_TYPE, 3)),
  w(
    6,
    fc.constantFrom(...Object.keys(messageType(CALL_TYPE).lookupEnum('Type').values)).chain((type) => {
      const field = messageType(CALL_TYPE).fields[type.toLowerCase()];
      const resolved = field?.resolvedType;
      const payload =
        resolved instanceof protobuf.Type ? schemaJson(resolved.fullName.slice(1), 3) : fc.constant(undefined);
      return fc.tuple(payload, frameworkId).map(([p, fw]): Json => {
        const call: J = { type };
        if (type !== 'SUBSCRIBE') call['framework_id'] = { value: fw };
        if (p !== undefined) call[type.toLowerCase()] = p;
        // An update must name the framework it updates, or it stops at the first check.
        const info = type === 'UPDATE_FRAMEWORK' ? (p as J | undefined)?.['framework_info'] : undefined;
        if (info !== null && typeof info === 'object' && !Array.isArray(info)) info['id'] = { value: fw };
        return call;
      });
    }),
  ),
);

/**
 * A call of the schema `typeName` (a `Call` with a `Type` enum and a
 * payload field of each type's name): any call now and then, mostly one
 * whose payload matches its type, handed to `live` half the time to make
 * its ids live (the index drawn for a token).
 */
export function schemaCallOf(
  typeName: string,
  live: (payload: J, i: number, type: string) => void,
): fc.Arbitrary<Json> {
  const types = Object.keys(messageType(typeName).lookupEnum('Type').values);
  const typed = fc.constantFrom(...types).chain((type) => {
    const resolved = messageType(typeName).fields[type.toLowerCase()]?.resolvedType;
    const payload =
      resolved instanceof protobuf.Type ? schemaJson(resolved.fullName.slice(1), 3) : fc.constant(undefined);
    return fc.tuple(payload, fc.boolean(), idx).map(([p, makeLive, i]): Json => {
      if (p === undefined) return { type };
      if (makeLive) live(p as J, i, type);
      return { type, [type.toLowerCase()]: p };
    });
  });
  return fc.oneof(w(1, schemaJson(typeName, 3)), w(6, typed));
}
