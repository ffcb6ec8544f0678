/**
 * Master operator calls (`mesos.v1.master.Call`) as upstream JSON values,
 * the two ways `calls.ts` builds scheduler calls:
 *
 *   templates   valid calls, or nearly: quota and weights with odd roles
 *               and values, reservations and volumes on the live agents
 *               (`@@agent:1`), teardowns of live and unknown frameworks,
 *               the agent calls, every GET_*, SUBSCRIBE; now and then
 *               thousands of volumes in one call.
 *   schema      any call of the schema by reflection, the type matching
 *               its payload, an agent or framework id made live half the time.
 *
 * Marking an agent gone is for ever, and a run has two agents: the calls
 * that do it (MARK_AGENT_GONE, DRAIN_AGENT with `mark_gone`) are drawn
 * rarely and name live agents only from templates, so that most runs keep
 * a live cluster for the scheduler calls that follow.
 */
import fc from 'fast-check';
import { messageType } from '../../src/wire/schema.js';
import { idx, oddString, schemaCallOf, some, token, value, w, type J } from './calls.js';
import type { Json } from './mutate.js';

export const OPERATOR_CALL_TYPE = 'mesos.v1.master.Call';
export const OPERATOR_RESPONSE_TYPE = 'mesos.v1.master.Response';

/** The calls that answer an empty 200: no Response of their own. */
export const EMPTY_ANSWER_CALLS: readonly string[] = [
  'TEARDOWN',
  'MARK_AGENT_GONE',
  'DEACTIVATE_AGENT',
  'REACTIVATE_AGENT',
  'DRAIN_AGENT',
  'UPDATE_QUOTA',
  'UPDATE_WEIGHTS',
  'RESERVE_RESOURCES',
  'UNRESERVE_RESOURCES',
  'CREATE_VOLUMES',
  'DESTROY_VOLUMES',
  'UPDATE_MAINTENANCE_SCHEDULE',
  'START_MAINTENANCE',
  'STOP_MAINTENANCE',
];

const role = fc.oneof(
  w(8, fc.constantFrom('r1', 'r2', 'fuzz')),
  w(2, fc.constantFrom('*', 'r1/sub', 'r1/sub/x')),
  w(1, oddString),
);
const reservedRole = fc.oneof(
  w(8, fc.constantFrom('r1', 'r2')),
  w(1, fc.constantFrom('r1/sub', '*', '')),
  w(1, oddString),
);
const principal = fc.constantFrom('p', 'ops', '');

const agent = fc.oneof(w(8, idx.map(token.agent)), w(1, oddString));
/** Where reservations and volumes go: the first agent mostly, so that a volume finds the disk reserved for it. */
const storageAgent = fc.oneof(w(3, fc.constant(token.agent(0))), w(2, agent));
/** For the calls that mark an agent gone: a live one now and then, else one nobody knows. */
const rareAgent = fc.oneof(w(1, idx.map(token.agent)), w(2, fc.constantFrom('no-such-agent', '')), w(1, oddString));
const framework = fc.oneof(
  w(4, idx.map(token.otherFramework)),
  w(2, idx.map(token.numberedFramework)),
  w(1, fc.constant(token.framework)),
  w(2, oddString),
);

// ---- quota and weights ----

/** Values a quota or weight validator must sort out: NaN-like strings, negative, subnormal, huge, Infinity. */
const oddNumber: fc.Arbitrary<Json> = fc.oneof(
  w(4, fc.constantFrom(-1, -0.001, 1e-320, 5e-324, 1e12, 1e12 + 1, 1024 ** 4, 1024 ** 4 + 1, 1e300, 2 ** 53, 2 ** 64)),
  w(3, fc.constantFrom('NaN', 'Infinity', '-Infinity', 'nan', '1e999', '0x10', '', '1', ' 2')),
  w(1, fc.double()),
);
const amount = fc.oneof(w(8, fc.constantFrom(0, 0.1, 0.5, 1, 2, 4, 8, 64, 128, 1024, 4096, 16384)), w(2, oddNumber));
const quotaName = fc.oneof(
  w(8, fc.constantFrom('cpus', 'mem', 'disk', 'gpus')),
  w(1, fc.constantFrom('ports', 'bogus', '')),
  w(1, oddString),
);
const quantities = fc.dictionary(
  quotaName,
  amount.map((v) => ({ value: v })),
  { maxKeys: 3 },
);

/** Guarantees mostly within the limits, sometimes over them. */
const quotaConfig = fc
  .tuple(role, quantities, quantities, fc.nat({ max: 3 }))
  .map(([r, limits, guarantees, shape]): J => {
    if (shape === 0) return { role: r }; // a reset
    if (shape === 1) return { role: r, limits };
    return { role: r, limits, guarantees: shape === 2 ? guarantees : limits };
  });
const updateQuota = some({ force: fc.boolean(), quota_configs: fc.array(quotaConfig, { maxLength: 3 }) }, [
  'quota_configs',
]);

const weight = fc.oneof(w(6, fc.constantFrom(0.1, 0.5, 1, 2, 3.5, 10)), w(1, fc.constantFrom(0, -1)), w(2, oddNumber));
const updateWeights = fc.record({ weight_infos: fc.array(some({ role, weight }, ['weight']), { maxLength: 3 }) });

// ---- reservations and volumes ----

const oddReservation = some({ type: fc.constantFrom('DYNAMIC', 'STATIC', 'UNKNOWN'), role: reservedRole, principal }, [
  'type',
]);
/** Mostly one a later call can undo: the same few roles and principals. */
const reservation = fc.oneof(
  w(
    8,
    fc.record({
      type: fc.constant('DYNAMIC'),
      role: fc.constantFrom('r1', 'r2'),
      principal: fc.constantFrom('p', 'p', 'p', 'ops'),
    }) as fc.Arbitrary<J>,
  ),
  w(1, oddReservation),
);
/** A stack of reservations: one mostly, refined (`r1` then `r1/sub`) now and then, none or odd. */
const reservations = fc.oneof(
  w(
    12,
    reservation.map((r) => [r] as Json[]),
  ),
  w(
    2,
    principal.map(
      (p) =>
        [
          { type: 'DYNAMIC', role: 'r1', principal: p },
          { type: 'DYNAMIC', role: 'r1/sub', principal: p },
        ] as Json[],
    ),
  ),
  w(1, fc.array(oddReservation, { maxLength: 3 })),
);
const scalar = (name: fc.Arbitrary<string>, amounts: readonly number[]) =>
  fc.record({
    name,
    type: fc.constant('SCALAR'),
    scalar: fc.record({ value: fc.oneof(w(8, fc.constantFrom(...amounts)), w(1, oddNumber)) }),
  });
const unreserved = fc.oneof(
  w(4, scalar(fc.constant('cpus'), [0.5, 1, 1, 4, 5])),
  w(4, scalar(fc.constant('mem'), [64, 128, 128, 9000])),
  w(5, scalar(fc.constant('disk'), [64, 256, 256, 100_000])),
  w(1, scalar(fc.oneof(fc.constantFrom('gpus', 'ports', ''), oddString), [1])),
);
const reserved = fc.tuple(unreserved, reservations).map(([r, rs]): J => ({ ...r, reservations: rs }));
/** Pre-refinement resources: the role and one reservation in fields of their own. */
const legacyReserved = fc
  .tuple(unreserved, reservedRole, principal)
  .map(([r, ro, p]): J => ({ ...r, role: ro, reservation: { principal: p } }));
const resourceList = (one: fc.Arbitrary<J>) => fc.array(one, { minLength: 1, maxLength: 3 }).map((l) => l as Json[]);

/** Disk for the volumes below: reserved to `r1` by `p`. */
const volumeDisk: J = {
  name: 'disk',
  type: 'SCALAR',
  scalar: { value: 256 },
  reservations: [{ type: 'DYNAMIC', role: 'r1', principal: 'p' }],
};
const reserve = some(
  {
    agent_id: value(storageAgent),
    resources: fc.oneof(
      w(8, resourceList(reserved)),
      w(3, fc.constant<Json[]>([volumeDisk])),
      w(1, resourceList(legacyReserved)),
      w(1, resourceList(unreserved)),
    ),
    source: resourceList(unreserved),
  },
  ['agent_id', 'resources'],
);
const unreserve = some(
  {
    agent_id: value(agent),
    resources: fc.oneof(
      w(8, resourceList(reserved)),
      w(1, resourceList(legacyReserved)),
      w(1, resourceList(unreserved)),
    ),
  },
  ['agent_id', 'resources'],
);

const persistenceId = fc.oneof(w(8, fc.constantFrom('v0', 'v1', 'v2')), w(1, oddString));
/** The one volume of each id a CREATE makes and a DESTROY names alike, on disk reserved to `r1` by `p`. */
const plainVolume = (id: string): J => ({
  name: 'disk',
  type: 'SCALAR',
  scalar: { value: 48 },
  reservations: [{ type: 'DYNAMIC', role: 'r1', principal: 'p' }],
  disk: { persistence: { id, principal: 'p' }, volume: { container_path: 'data', mode: 'RW' } },
});
const oddVolume = fc
  .tuple(scalar(fc.constant('disk'), [16, 64, 100_000]), reservations, persistenceId, principal, fc.nat({ max: 5 }))
  .map(([disk, rs, id, p, shape]): J => {
    const info: J = {
      persistence: { id, principal: p },
      volume: { container_path: shape === 5 ? '/abs' : 'data', mode: shape === 4 ? 'RO' : 'RW' },
    };
    // Unreserved disk, and a volume without a persistence id, now and then.
    if (shape === 3) return { ...disk, disk: { volume: { container_path: 'data', mode: 'RW' } }, reservations: rs };
    return shape === 2 ? { ...disk, disk: info } : { ...disk, disk: info, reservations: rs };
  });
const volume = fc.oneof(w(3, fc.constantFrom('v0', 'v1', 'v2').map(plainVolume)), w(2, oddVolume));
/** Thousands of tiny volumes, each of its own id: what a CREATE makes, a DESTROY finds again, on the disk reserved for them. */
const manyVolumes = fc
  .constantFrom(200, 3_000, 12_000)
  .map((n): Json[] => Array.from({ length: n }, (_, i) => ({ ...plainVolume(`m${i}`), scalar: { value: 0.001 } })));
const volumes = some(
  {
    agent_id: value(storageAgent),
    volumes: fc.oneof(w(30, fc.array(volume, { minLength: 1, maxLength: 2 })), w(1, manyVolumes)),
  },
  ['agent_id', 'volumes'],
);

// ---- agents ----

const gracePeriod = some({
  seconds: fc.constantFrom(0, 1, 30, -1, 2 ** 53),
  nanos: fc.constantFrom(0, 500_000_000, -1, 999_999_999),
});
const drain = fc.oneof(
  w(6, some({ agent_id: value(agent), max_grace_period: gracePeriod, mark_gone: fc.constant(false) }, ['agent_id'])),
  w(1, some({ agent_id: value(rareAgent), max_grace_period: gracePeriod, mark_gone: fc.constant(true) }, ['agent_id'])),
);

/** The payload of each call a template writes, under the call's field; `undefined` for none. */
const PAYLOADS: Record<string, fc.Arbitrary<J | undefined>> = {
  UPDATE_QUOTA: updateQuota,
  UPDATE_WEIGHTS: updateWeights,
  RESERVE_RESOURCES: reserve,
  UNRESERVE_RESOURCES: unreserve,
  CREATE_VOLUMES: volumes,
  DESTROY_VOLUMES: volumes,
  TEARDOWN: fc.record({ framework_id: value(framework) }),
  MARK_AGENT_GONE: fc.record({ agent_id: value(rareAgent) }),
  DEACTIVATE_AGENT: fc.record({ agent_id: value(agent) }),
  REACTIVATE_AGENT: fc.record({ agent_id: value(fc.oneof(w(3, idx.map(token.deactivatedAgent)), w(1, agent))) }),
  DRAIN_AGENT: drain,
  GET_METRICS: some({ timeout: some({ nanoseconds: fc.constantFrom(0, 1_000_000_000, -1) }) }),
  SUBSCRIBE: fc.constant(undefined),
  LIST_FILES: fc.record({ path: fc.constantFrom('/master/log', '/', '') }),
  READ_FILE: fc.record({ path: fc.constantFrom('/master/log', ''), offset: fc.constantFrom(0, 10) }),
  SET_LOGGING_LEVEL: fc.record({
    level: fc.constantFrom(0, 1, 3),
    duration: fc.record({ nanoseconds: fc.constantFrom(0, 1_000_000_000) }),
  }),
};

/** How often each type is drawn; the rest weigh 1. */
const WEIGHTS: Record<string, number> = {
  UPDATE_QUOTA: 12,
  UPDATE_WEIGHTS: 6,
  RESERVE_RESOURCES: 10,
  UNRESERVE_RESOURCES: 8,
  CREATE_VOLUMES: 8,
  DESTROY_VOLUMES: 6,
  TEARDOWN: 3,
  MARK_AGENT_GONE: 1,
  DEACTIVATE_AGENT: 4,
  REACTIVATE_AGENT: 8,
  DRAIN_AGENT: 3,
  SUBSCRIBE: 5,
  GET_STATE: 3,
  GET_QUOTA: 3,
  GET_ROLES: 2,
  GET_OPERATIONS: 2,
  GET_AGENTS: 2,
  GET_FRAMEWORKS: 2,
  GET_TASKS: 2,
};

const ALL_TYPES = Object.keys(messageType(OPERATOR_CALL_TYPE).lookupEnum('Type').values);

/** An operator call from a template; a type without a payload above goes without one (every GET_*, or a call refused for lacking it). */
export const operatorTemplateCall: fc.Arbitrary<Json> = fc.oneof(
  ...ALL_TYPES.map((type) =>
    w(
      WEIGHTS[type] ?? 1,
      (PAYLOADS[type] ?? fc.constant(undefined)).map(
        (p): Json => (p === undefined ? { type } : { type, [type.toLowerCase()]: p }),
      ),
    ),
  ),
);

/** Calls whose schema payload may name a live agent: not those that mark it gone. */
const LIVE_IDS_SPARED = ['MARK_AGENT_GONE', 'DRAIN_AGENT'];

/** A call of the schema whose payload matches its type; ids made live half the time. */
export const operatorSchemaCall: fc.Arbitrary<Json> = schemaCallOf(OPERATOR_CALL_TYPE, (body, i, type) => {
  if (LIVE_IDS_SPARED.includes(type)) return;
  if ('agent_id' in body) body['agent_id'] = { value: token.agent(i) };
  if ('framework_id' in body) body['framework_id'] = { value: token.otherFramework(i) };
});
