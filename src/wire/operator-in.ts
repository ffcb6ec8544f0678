/**
 * Master operator calls (`POST /api/v1`) from wire messages: upstream's
 * validation (`Failed to validate master::Call: …`), then what the call is
 * for the route. Reads are rendered from the read model; calls only the core
 * can answer become core `OperatorCall`s; SUBSCRIBE opens the operator event
 * stream; calls this master has no feature for get upstream's answer for it.
 */
import { filesCallOf, type FilesCall } from './files.js';
import type { AclAction } from '../core/model/acl-actions.js';
import type { Authorizer } from '../core/model/authz.js';
import type { OperatorCall } from '../core/model/operator-types.js';
import type { QuotaConfigRequest } from '../core/model/types.js';
import { resourcesFromWire } from './convert-common.js';
import { machineIdFromWire, scheduleFromWire } from './maintenance.js';
import type { mesos } from './generated/types.js';

type Call = mesos.v1.master.Call;
export type OperatorCallType = mesos.v1.master.Call.Type;

/** Calls answered from the read model alone. */
export const READ_CALLS = [
  'GET_HEALTH',
  'GET_FLAGS',
  'GET_VERSION',
  'GET_METRICS',
  'GET_LOGGING_LEVEL',
  'GET_STATE',
  'GET_AGENTS',
  'GET_FRAMEWORKS',
  'GET_EXECUTORS',
  'GET_TASKS',
  'GET_ROLES',
  'GET_MASTER',
  'GET_MAINTENANCE_STATUS',
  'GET_MAINTENANCE_SCHEDULE',
] as const;
export type ReadCallType = (typeof READ_CALLS)[number];

/**
 * Features this master does not have, and upstream's answer without them:
 * the logging level cannot be toggled, and volume resizing and the
 * deprecated quota calls cannot be used (501).
 */
export type Unsupported = 'FILE_NOT_FOUND' | 'NOT_IMPLEMENTED';

export type OperatorRequest =
  | { readonly kind: 'read'; readonly type: ReadCallType }
  | { readonly kind: 'core'; readonly call: OperatorCall }
  | { readonly kind: 'subscribe' }
  | { readonly kind: 'unsupported'; readonly answer: Unsupported }
  /** LIST_FILES and READ_FILE: the agents' sandboxes by their virtual paths (files.ts). */
  | { readonly kind: 'files'; readonly call: FilesCall };

/** The payload each call must carry, as upstream's validation requires it. */
const PAYLOADS: Partial<Record<OperatorCallType, keyof Call>> = {
  GET_METRICS: 'get_metrics',
  SET_LOGGING_LEVEL: 'set_logging_level',
  LIST_FILES: 'list_files',
  READ_FILE: 'read_file',
  UPDATE_WEIGHTS: 'update_weights',
  RESERVE_RESOURCES: 'reserve_resources',
  UNRESERVE_RESOURCES: 'unreserve_resources',
  CREATE_VOLUMES: 'create_volumes',
  DESTROY_VOLUMES: 'destroy_volumes',
  GROW_VOLUME: 'grow_volume',
  SHRINK_VOLUME: 'shrink_volume',
  UPDATE_MAINTENANCE_SCHEDULE: 'update_maintenance_schedule',
  START_MAINTENANCE: 'start_maintenance',
  STOP_MAINTENANCE: 'stop_maintenance',
  DRAIN_AGENT: 'drain_agent',
  DEACTIVATE_AGENT: 'deactivate_agent',
  REACTIVATE_AGENT: 'reactivate_agent',
  UPDATE_QUOTA: 'update_quota',
  SET_QUOTA: 'set_quota',
  REMOVE_QUOTA: 'remove_quota',
  TEARDOWN: 'teardown',
  MARK_AGENT_GONE: 'mark_agent_gone',
};

/** Upstream's `validation::master::call::validate`: the reason a decoded call is invalid, if it is. */
export function operatorCallError(call: Call): string | undefined {
  const missing = missingPayload(call, PAYLOADS);
  if (missing !== undefined) return missing;
  if (call.type === 'RESERVE_RESOURCES') return resourcesError(call.reserve_resources!.resources);
  if (call.type === 'UNRESERVE_RESOURCES') return resourcesError(call.unreserve_resources!.resources);
  return undefined;
}

/** Upstream's first checks of a call, the master's or an agent's: its type, then the payload that type needs. */
export function missingPayload<C extends { readonly type?: string }>(
  call: C,
  payloads: Partial<Record<string, keyof C>>,
): string | undefined {
  if (call.type === undefined) return "Expecting 'type' to be present";
  const payload = payloads[call.type];
  if (payload !== undefined && call[payload] === undefined) return `Expecting '${String(payload)}' to be present`;
  return undefined;
}

function resourcesError(list: readonly mesos.v1.Resource[] | undefined): string | undefined {
  const parsed = resourcesFromWire(list);
  return typeof parsed === 'string' ? parsed : undefined;
}

const NOT_IMPLEMENTED: OperatorRequest = { kind: 'unsupported', answer: 'NOT_IMPLEMENTED' };

/** What a valid call is for the route; an UNKNOWN call is upstream's 501. */
export function operatorRequestFromWire(call: Call): OperatorRequest | string {
  const type = call.type!;
  if ((READ_CALLS as readonly string[]).includes(type)) return { kind: 'read', type: type as ReadCallType };
  switch (type) {
    case 'SUBSCRIBE':
      return { kind: 'subscribe' };
    case 'LIST_FILES':
    case 'READ_FILE':
      return { kind: 'files', call: filesCallOf(call)! };
    case 'UNKNOWN':
    case 'SET_LOGGING_LEVEL':
    case 'GROW_VOLUME':
    case 'SHRINK_VOLUME':
    case 'SET_QUOTA':
    case 'REMOVE_QUOTA':
      return NOT_IMPLEMENTED;
    default: {
      const core = coreCallFromWire(call);
      return typeof core === 'string' ? core : { kind: 'core', call: core };
    }
  }
}

/** A question to the ACLs: an action, on an object (none is ANY). */
export interface AclQuestion {
  readonly action: AclAction;
  readonly object?: string;
}

/**
 * What a call this master has no feature for asks the ACLs before its
 * answer, as upstream's master asks before it acts: a principal refused
 * hears 403, not 501. GROW_VOLUME and SHRINK_VOLUME ask about any role:
 * their volume is not decoded here.
 */
export function unsupportedQuestions(call: Call): AclQuestion[] {
  switch (call.type) {
    case 'SET_LOGGING_LEVEL':
      return [{ action: 'set_log_level' }];
    case 'GROW_VOLUME':
    case 'SHRINK_VOLUME':
      return [{ action: 'resize_volumes' }];
    case 'SET_QUOTA':
      return [{ action: 'update_quotas', object: call.set_quota!.quota_request.role ?? '*' }];
    case 'REMOVE_QUOTA':
      return [{ action: 'update_quotas', object: call.remove_quota!.role }];
    default:
      return [];
  }
}

/** The first refusal among the questions, if any. */
export function firstRefusal(
  authorizer: Authorizer,
  principal: string | undefined,
  questions: readonly AclQuestion[],
): string | undefined {
  for (const { action, object } of questions) {
    const refused = authorizer.refusal(action, principal, object);
    if (refused !== undefined) return refused;
  }
  return undefined;
}

/** The calls the core answers, or the reason one cannot be converted. */
function coreCallFromWire(call: Call): OperatorCall | string {
  switch (call.type) {
    case 'TEARDOWN':
      return { type: 'TEARDOWN', frameworkId: call.teardown!.framework_id.value };
    case 'MARK_AGENT_GONE':
      return { type: 'MARK_AGENT_GONE', agentId: call.mark_agent_gone!.agent_id.value };
    case 'UPDATE_MAINTENANCE_SCHEDULE':
      return {
        type: 'UPDATE_MAINTENANCE_SCHEDULE',
        schedule: scheduleFromWire(call.update_maintenance_schedule!.schedule),
      };
    case 'START_MAINTENANCE':
      return { type: 'START_MAINTENANCE', machines: (call.start_maintenance!.machines ?? []).map(machineIdFromWire) };
    case 'STOP_MAINTENANCE':
      return { type: 'STOP_MAINTENANCE', machines: (call.stop_maintenance!.machines ?? []).map(machineIdFromWire) };
    case 'DEACTIVATE_AGENT':
      return { type: 'DEACTIVATE_AGENT', agentId: call.deactivate_agent!.agent_id.value };
    case 'REACTIVATE_AGENT':
      return { type: 'REACTIVATE_AGENT', agentId: call.reactivate_agent!.agent_id.value };
    case 'DRAIN_AGENT':
      return drainFromWire(call.drain_agent!);
    case 'UPDATE_QUOTA':
      return {
        type: 'UPDATE_QUOTA',
        force: call.update_quota!.force ?? false,
        configs: (call.update_quota!.quota_configs ?? []).map(quotaFromWire),
      };
    case 'UPDATE_WEIGHTS':
      return {
        type: 'UPDATE_WEIGHTS',
        weights: (call.update_weights!.weight_infos ?? []).map((w) => ({ role: w.role ?? '', weight: w.weight })),
      };
    case 'GET_QUOTA':
    case 'GET_WEIGHTS':
    case 'GET_OPERATIONS':
      return { type: call.type };
    default:
      return resourceCallFromWire(call);
  }
}

function resourceCallFromWire(call: Call): OperatorCall | string {
  const bag = (list: readonly mesos.v1.Resource[] | undefined) => resourcesFromWire(list);
  switch (call.type) {
    case 'RESERVE_RESOURCES': {
      const { agent_id, source, resources } = call.reserve_resources!;
      const [from, to] = [bag(source), bag(resources)];
      if (typeof from === 'string') return from;
      if (typeof to === 'string') return to;
      return { type: 'RESERVE_RESOURCES', agentId: agent_id.value, source: from, resources: to };
    }
    case 'UNRESERVE_RESOURCES': {
      const resources = bag(call.unreserve_resources!.resources);
      if (typeof resources === 'string') return resources;
      return { type: 'UNRESERVE_RESOURCES', agentId: call.unreserve_resources!.agent_id.value, resources };
    }
    case 'CREATE_VOLUMES':
    case 'DESTROY_VOLUMES': {
      const payload = call.type === 'CREATE_VOLUMES' ? call.create_volumes! : call.destroy_volumes!;
      const volumes = bag(payload.volumes);
      if (typeof volumes === 'string') return volumes;
      return { type: call.type, agentId: payload.agent_id.value, volumes };
    }
    default:
      throw new Error(`operator call ${String(call.type)} has no core form`);
  }
}

const MAX_INT64 = 2 ** 63;

function drainFromWire(drain: mesos.v1.master.Call.DrainAgent): OperatorCall | string {
  const period = drain.max_grace_period;
  let maxGracePeriodMs: number | undefined;
  if (period !== undefined) {
    const ms = (period.seconds ?? 0) * 1000 + (period.nanos ?? 0) / 1e6;
    if (!Number.isFinite(ms) || ms < 0) return "'max_grace_period' must not be negative";
    // Echoed as a DurationInfo (int64 nanoseconds) in GET_AGENTS and the operator events.
    if (Math.round(ms) * 1e6 >= MAX_INT64) return "'max_grace_period' is too large";
    maxGracePeriodMs = Math.round(ms);
  }
  return {
    type: 'DRAIN_AGENT',
    agentId: drain.agent_id.value,
    markGone: drain.mark_gone ?? false,
    ...(maxGracePeriodMs === undefined ? {} : { maxGracePeriodMs }),
  };
}

/** The values stay as sent: the core checks them (NaN, negative, too large) with upstream's texts. */
function quotaFromWire(config: mesos.v1.quota.QuotaConfig): QuotaConfigRequest {
  const values = (map: Record<string, mesos.v1.Value.Scalar> | undefined) =>
    new Map(Object.entries(map ?? {}).map(([name, scalar]) => [name, scalar.value] as const));
  return { role: config.role, guarantees: values(config.guarantees), limits: values(config.limits) };
}
