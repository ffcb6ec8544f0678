/**
 * Scheduler calls from wire messages to core inputs. Per-task problems
 * (bad resources) do not reject the call: they travel with the task and
 * become TASK_ERROR, as upstream reports them.
 */
import type {
  SchedulerCall,
  SchedulerCallType,
  Operation,
  ResourceOperation,
  Subscription,
  TaskSpec,
  ExecutorSpec,
  FrameworkInfo,
  Capability,
  OfferConstraints,
  AttributeConstraint,
} from '../core/model/types.js';
import { bytesToHex } from './bytes.js';
import {
  commandFromWire,
  commandParts,
  durationMs,
  labelsFromWire,
  resourcesFromWire,
  sharedWireResources,
} from './convert-common.js';
import type { mesos } from './generated/types.js';

type Call = mesos.v1.scheduler.Call;

/** `Filters.refuse_seconds`: default 5, capped at 365 days (Infinity included); negative or NaN means the default. */
export const DEFAULT_REFUSE_SECONDS = 5;
export const MAX_REFUSE_SECONDS = 31_536_000;

export function refuseMs(filters: mesos.v1.Filters | undefined): number {
  const seconds = filters?.refuse_seconds ?? DEFAULT_REFUSE_SECONDS;
  if (Number.isNaN(seconds) || seconds < 0) return DEFAULT_REFUSE_SECONDS * 1000;
  return Math.round(Math.min(seconds, MAX_REFUSE_SECONDS) * 1000);
}

export function frameworkInfoFromWire(info: mesos.v1.FrameworkInfo): FrameworkInfo {
  const capabilities = (info.capabilities ?? [])
    .map((c) => c.type)
    .filter((t): t is Capability => t !== undefined && t !== 'UNKNOWN');
  return {
    user: info.user,
    name: info.name,
    // An empty id is no id, as upstream reads it: the framework is new.
    ...(info.id === undefined || info.id.value === '' ? {} : { id: info.id.value }),
    failoverTimeoutMs: (info.failover_timeout ?? 0) * 1000,
    checkpoint: info.checkpoint ?? false,
    ...(info.role === undefined ? {} : { role: info.role }),
    roles: info.roles ?? [],
    ...(info.principal === undefined ? {} : { principal: info.principal }),
    ...(info.hostname === undefined ? {} : { hostname: info.hostname }),
    ...(info.webui_url === undefined ? {} : { webuiUrl: info.webui_url }),
    capabilities,
    labels: labelsFromWire(info.labels),
    ...offerFiltersError(info.offer_filters),
    raw: info,
  };
}

/**
 * The allocator does not apply per-role offer filters yet, but a framework
 * that sends invalid ones is refused as upstream refuses it.
 */
function offerFiltersError(filters: mesos.v1.FrameworkInfo['offer_filters']): { invalid?: string } {
  for (const filter of Object.values(filters ?? {})) {
    for (const q of filter.min_allocatable_resources?.quantities ?? []) {
      const entries = Object.entries(q.quantities ?? {});
      if (entries.length === 0) return { invalid: 'Resource quantities must contain at least one quantity' };
      for (const [name, { value }] of entries) {
        const error = scalarValueError(value);
        if (error !== undefined) return { invalid: `Invalid resource quantity for '${name}': ${error}` };
      }
    }
  }
  return {};
}

function scalarValueError(value: number): string | undefined {
  if (Number.isNaN(value)) return 'NaN not supported';
  if (!Number.isFinite(value)) return 'Infinite values not supported';
  if (value < 0) return 'Negative values not supported';
  if (value !== 0 && Math.abs(value) < Number.MIN_VALUE * 2 ** 52) return 'Subnormal values not supported';
  return undefined;
}

export function subscriptionFromWire(
  sub: mesos.v1.scheduler.Call.Subscribe | mesos.v1.scheduler.Call.UpdateFramework,
): Subscription | string {
  const constraints = sub.offer_constraints === undefined ? undefined : constraintsFromWire(sub.offer_constraints);
  if (typeof constraints === 'string') return constraints;
  return {
    info: frameworkInfoFromWire(sub.framework_info),
    suppressedRoles: sub.suppressed_roles ?? [],
    ...(constraints === undefined ? {} : { offerConstraints: constraints }),
  };
}

function constraintsFromWire(c: mesos.v1.scheduler.OfferConstraints): OfferConstraints | string {
  const out: Record<string, AttributeConstraint[][]> = {};
  for (const [role, rc] of Object.entries(c.role_constraints ?? {})) {
    const groups: AttributeConstraint[][] = [];
    for (const group of rc.groups ?? []) {
      const list: AttributeConstraint[] = [];
      for (const ac of group.attribute_constraints ?? []) {
        const converted = attributeConstraintFromWire(ac);
        if (typeof converted === 'string') return `Invalid offer constraint for role '${role}': ${converted}`;
        list.push(converted);
      }
      groups.push(list);
    }
    out[role] = groups;
  }
  return out;
}

function attributeConstraintFromWire(ac: mesos.v1.scheduler.AttributeConstraint): AttributeConstraint | string {
  const s = ac.selector;
  const selector =
    s.attribute_name !== undefined
      ? { attributeName: s.attribute_name }
      : s.pseudoattribute_type !== undefined
        ? { pseudo: s.pseudoattribute_type }
        : undefined;
  if (selector === undefined) return "'selector' must set 'attribute_name' or 'pseudoattribute_type'";
  const p = ac.predicate;
  const predicate =
    p.exists !== undefined
      ? ({ kind: 'exists' } as const)
      : p.not_exists !== undefined
        ? ({ kind: 'not_exists' } as const)
        : p.text_equals !== undefined
          ? ({ kind: 'text_equals', value: p.text_equals.value } as const)
          : p.text_not_equals !== undefined
            ? ({ kind: 'text_not_equals', value: p.text_not_equals.value } as const)
            : p.text_matches !== undefined
              ? ({ kind: 'text_matches', regex: p.text_matches.regex } as const)
              : p.text_not_matches !== undefined
                ? ({ kind: 'text_not_matches', regex: p.text_not_matches.regex } as const)
                : undefined;
  if (predicate === undefined) return "'predicate' must be set";
  return { selector, predicate };
}

export function executorFromWire(e: mesos.v1.ExecutorInfo): ExecutorSpec & { invalid?: string } {
  const resources = resourcesFromWire(e.resources);
  const command = commandFromWire(e.command);
  return {
    executorId: e.executor_id.value,
    type: e.type ?? 'UNKNOWN',
    ...(e.name === undefined ? {} : { name: e.name }),
    ...(command === undefined ? {} : { command }),
    resources: typeof resources === 'string' ? [] : resources,
    ...(typeof resources === 'string' ? { invalid: resources } : {}),
    raw: e,
  };
}

/**
 * A TaskInfo as a task spec. Its `raw` keeps what the spec does not say
 * verbatim: the TaskInfo without `name`, `task_id` and `agent_id` (the
 * spec's strings, put back by `taskInfoOf`), and a list of plain scalar
 * resources or a plain command as one shared read-only copy. `ids` gives one string for equal ids within
 * a call (its tasks name the same agent).
 */
export function taskFromWire(t: mesos.v1.TaskInfo, ids: Interner = (id) => id): TaskSpec {
  const resources = resourcesFromWire(t.resources);
  const executor = t.executor === undefined ? undefined : executorFromWire(t.executor);
  const parts = t.command === undefined ? undefined : commandParts(t.command);
  const command = parts?.spec;
  const grace = durationMs(t.kill_policy?.grace_period);
  const limits =
    t.limits === undefined ? undefined : Object.fromEntries(Object.entries(t.limits).map(([k, v]) => [k, v.value]));
  const invalid = typeof resources === 'string' ? resources : executor?.invalid;
  const { name: _name, task_id: _taskId, agent_id: _agentId, ...raw } = t;
  if (raw.resources !== undefined) raw.resources = sharedWireResources(raw.resources);
  if (parts !== undefined) raw.command = parts.wire;
  return {
    taskId: t.task_id.value,
    name: t.name,
    agentId: ids(t.agent_id.value),
    resources: typeof resources === 'string' ? [] : resources,
    ...(command === undefined ? {} : { command }),
    ...(executor === undefined ? {} : { executor }),
    labels: labelsFromWire(t.labels),
    ...(grace === undefined ? {} : { killGracePeriodMs: grace }),
    ...(limits === undefined ? {} : { limits }),
    ...(t.container?.type === 'DOCKER' ? { engine: { image: t.container.docker?.image ?? '' } } : {}),
    ...(t.container?.type === 'MESOS' && t.container.tty_info !== undefined ? { tty: true } : {}),
    ...(invalid === undefined ? {} : { invalid }),
    raw: sharedRest(raw),
  };
}

type TaskRest = Omit<mesos.v1.TaskInfo, 'name' | 'task_id' | 'agent_id'>;

/** The rests that are a shared command and shared resources, nothing more, by those two. */
const RESTS = new WeakMap<object, WeakMap<object, TaskRest>>();
const NONE = Object.freeze({});

/** A rest of only shared parts (a plain command, plain resources) is itself one shared read-only object. */
function sharedRest(rest: TaskRest): TaskRest {
  for (const field in rest) if (field !== 'command' && field !== 'resources') return rest;
  const { command = NONE, resources = NONE } = rest;
  if (!Object.isFrozen(command) || !Object.isFrozen(resources)) return rest;
  let byResources = RESTS.get(command);
  if (byResources === undefined) RESTS.set(command, (byResources = new WeakMap()));
  let shared = byResources.get(resources);
  if (shared === undefined) byResources.set(resources, (shared = Object.freeze(rest)));
  return shared;
}

/** A task's TaskInfo as the framework sent it: its spec's `raw` with what the spec holds put back. */
export function taskInfoOf(task: TaskSpec): mesos.v1.TaskInfo | undefined {
  const raw = task.raw as Partial<mesos.v1.TaskInfo> | undefined;
  if (raw === undefined) return undefined;
  return { ...raw, name: task.name, task_id: { value: task.taskId }, agent_id: { value: task.agentId } };
}

type Interner = (id: string) => string;

/** One string for equal ids, within one call. */
function interner(): Interner {
  const seen = new Map<string, string>();
  return (id) => {
    const known = seen.get(id);
    if (known !== undefined) return known;
    seen.set(id, id);
    return id;
  };
}

function operationFromWire(op: mesos.v1.Offer.Operation, ids: Interner): Operation {
  const id = op.id?.value;
  const withId = id === undefined ? {} : { id };
  if (op.type === 'LAUNCH')
    return { type: 'LAUNCH', tasks: (op.launch?.task_infos ?? []).map((t) => taskFromWire(t, ids)), ...withId };
  if (op.type === 'LAUNCH_GROUP' && op.launch_group !== undefined) {
    return {
      type: 'LAUNCH_GROUP',
      executor: executorFromWire(op.launch_group.executor),
      tasks: (op.launch_group.task_group.tasks ?? []).map((t) => taskFromWire(t, ids)),
      ...withId,
    };
  }
  const resourceOp = resourceOperationFromWire(op);
  if (resourceOp !== undefined) return { ...resourceOp, ...withId };
  return { type: 'UNSUPPORTED', name: op.type ?? 'UNKNOWN', ...withId };
}

/** RESERVE, UNRESERVE, CREATE, DESTROY; resources that do not read travel as `invalid` and become OPERATION_ERROR. */
function resourceOperationFromWire(op: mesos.v1.Offer.Operation): ResourceOperation | undefined {
  const list =
    op.type === 'RESERVE'
      ? op.reserve?.resources
      : op.type === 'UNRESERVE'
        ? op.unreserve?.resources
        : op.type === 'CREATE'
          ? op.create?.volumes
          : op.type === 'DESTROY'
            ? op.destroy?.volumes
            : undefined;
  if (op.type !== 'RESERVE' && op.type !== 'UNRESERVE' && op.type !== 'CREATE' && op.type !== 'DESTROY')
    return undefined;
  const resources = resourcesFromWire(list);
  return typeof resources === 'string'
    ? { type: op.type, resources: [], invalid: resources }
    : { type: op.type, resources };
}

/** A validated non-SUBSCRIBE call as a core input, or the reason it cannot be one. */
export function schedulerCallFromWire(call: Call): SchedulerCall | { readonly type: 'UNKNOWN' } | string {
  const type = call.type;
  // Own keys only: a type off the wire is any string, `toString` included.
  if (type === undefined || !Object.hasOwn(CALLS_FROM_WIRE, type)) return { type: 'UNKNOWN' };
  return CALLS_FROM_WIRE[type as SchedulerCallType](call);
}

/** Each call the core takes, from its wire message; its field is there, as the call's validation checked. */
const CALLS_FROM_WIRE: { readonly [T in SchedulerCallType]: (call: Call) => SchedulerCall | string } = {
  TEARDOWN: () => ({ type: 'TEARDOWN' }),
  REQUEST: () => ({ type: 'REQUEST' }),
  ACCEPT: ({ accept }) => {
    const agentIds = interner();
    const operations = (accept!.operations ?? []).map((op) => operationFromWire(op, agentIds));
    return {
      type: 'ACCEPT',
      offerIds: ids(accept!.offer_ids),
      operations,
      filters: { refuseMs: refuseMs(accept!.filters) },
    };
  },
  DECLINE: ({ decline }) => ({
    type: 'DECLINE',
    offerIds: ids(decline!.offer_ids),
    filters: { refuseMs: refuseMs(decline!.filters) },
  }),
  ACCEPT_INVERSE_OFFERS: (call) => ({
    type: 'ACCEPT_INVERSE_OFFERS',
    offerIds: ids(call.accept_inverse_offers!.inverse_offer_ids),
    filters: { refuseMs: refuseMs(call.accept_inverse_offers!.filters) },
  }),
  DECLINE_INVERSE_OFFERS: (call) => ({
    type: 'DECLINE_INVERSE_OFFERS',
    offerIds: ids(call.decline_inverse_offers!.inverse_offer_ids),
    filters: { refuseMs: refuseMs(call.decline_inverse_offers!.filters) },
  }),
  REVIVE: ({ revive }) => {
    // `role` is the spec's single-role form; upstream sends `roles`.
    const { roles = [], role } = revive ?? {};
    return { type: 'REVIVE', roles: role === undefined || roles.includes(role) ? roles : [...roles, role] };
  },
  SUPPRESS: ({ suppress }) => ({ type: 'SUPPRESS', roles: suppress?.roles ?? [] }),
  KILL: ({ kill }) => {
    const grace = durationMs(kill!.kill_policy?.grace_period);
    return {
      type: 'KILL',
      taskId: kill!.task_id.value,
      ...optional('agentId', kill!.agent_id?.value),
      ...optional('gracePeriodMs', grace),
    };
  },
  SHUTDOWN: ({ shutdown }) => ({
    type: 'SHUTDOWN',
    executorId: shutdown!.executor_id.value,
    agentId: shutdown!.agent_id.value,
  }),
  ACKNOWLEDGE: ({ acknowledge: a }) => ({
    type: 'ACKNOWLEDGE',
    agentId: a!.agent_id.value,
    taskId: a!.task_id.value,
    uuid: bytesToHex(a!.uuid),
  }),
  ACKNOWLEDGE_OPERATION_STATUS: ({ acknowledge_operation_status: a }) => ({
    type: 'ACKNOWLEDGE_OPERATION_STATUS',
    ...optional('agentId', a!.agent_id?.value),
    operationId: a!.operation_id.value,
    uuid: bytesToHex(a!.uuid),
  }),
  RECONCILE: ({ reconcile }) => ({
    type: 'RECONCILE',
    tasks: (reconcile!.tasks ?? []).map((t) => ({
      taskId: t.task_id.value,
      ...optional('agentId', t.agent_id?.value),
    })),
  }),
  RECONCILE_OPERATIONS: ({ reconcile_operations }) => ({
    type: 'RECONCILE_OPERATIONS',
    operations: (reconcile_operations!.operations ?? []).map((o) => ({
      operationId: o.operation_id.value,
      ...optional('agentId', o.agent_id?.value),
    })),
  }),
  MESSAGE: ({ message: m }) => ({
    type: 'MESSAGE',
    agentId: m!.agent_id.value,
    executorId: m!.executor_id.value,
    data: m!.data,
  }),
  UPDATE_FRAMEWORK: ({ update_framework }) => {
    const sub = subscriptionFromWire(update_framework!);
    return typeof sub === 'string' ? sub : { type: 'UPDATE_FRAMEWORK', subscription: sub };
  },
};

function ids(list: readonly { value: string }[] | undefined): string[] {
  return (list ?? []).map((x) => x.value);
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
