/**
 * Master operator responses and events from the read model and core values
 * to wire messages, and their encodings. A read call's response is built
 * from `cluster.view` (through `driver.read`); the SUBSCRIBED event carries
 * the whole state, rendered from the view when the event is delivered,
 * which is at the end of the input that subscribed.
 */
import { clusterStatusToWire, scheduleToWire } from './maintenance.js';
import type { AgentSnapshot, FrameworkSnapshot, OperatorEvent, OperatorValue } from '../core/model/operator-types.js';
import { fromMilli } from '../core/model/resources.js';
import type { ClusterView } from '../core/view.js';
import type { mesos } from './generated/types.js';
import { encodeJson } from './json-encode.js';
import { add } from '../core/model/resources.js';
import { Double, renderMetrics, type Json } from './v0/index.js';
import { masterFlags } from './v0/state.js';
import { BUILD_INFO } from './version.js';
import { encodeProto } from './proto-codec.js';
import { masterInfoToWire, operationStatusToWire, taskStatusToWire } from './scheduler-out.js';
import { hexToBytes } from './bytes.js';
import type { OperationRecord } from '../core/model/records.js';
import type { Quantities, QuotaConfig, ResourceOperation } from '../core/model/types.js';
import { resourcesToWire } from './convert-common.js';
import type { ReadCallType } from './operator-in.js';
import {
  agentToWire,
  frameworkInfoToWire,
  frameworkToWire,
  getAgents,
  getExecutors,
  getFrameworks,
  getState,
  getTasks,
  taskToWire,
} from './operator-state.js';
import { SHOW_ALL, visibleResources, type Viewer } from './view-filter.js';

type Response = mesos.v1.master.Response;
type Event = mesos.v1.master.Event;

/** The glog verbosity upstream reports when nobody has raised it. */
/** A `/metrics/snapshot` as GET_METRICS carries it: each figure by name. */
export function metricsToWire(snapshot: Record<string, Json>): { metrics: mesos.v1.Metric[] } {
  return {
    metrics: Object.entries(snapshot).map(([name, value]) => ({
      name,
      value: value instanceof Double ? value.value : Number(value),
    })),
  };
}

export const LOGGING_LEVEL = 0;

/**
 * The answer to a read call, with what the reader may view (view-filter.ts);
 * `FORBIDDEN` for GET_FLAGS to a reader the ACLs do not let see the flags,
 * which upstream answers 403.
 */
export function readResponse(view: ClusterView, type: ReadCallType, viewer: Viewer = SHOW_ALL): Response | 'FORBIDDEN' {
  switch (type) {
    case 'GET_HEALTH':
      return { type, get_health: { healthy: true } };
    case 'GET_FLAGS':
      if (!viewer.flags()) return 'FORBIDDEN';
      return {
        type,
        get_flags: { flags: Object.entries(masterFlags(view)).map(([name, value]) => ({ name, value })) },
      };
    case 'GET_VERSION':
      return {
        type,
        get_version: {
          version_info: {
            version: view.masterInfo.version,
            build_date: BUILD_INFO.buildDate,
            build_time: BUILD_INFO.buildTimeSeconds,
            build_user: BUILD_INFO.buildUser,
          },
        },
      };
    case 'GET_METRICS':
      return { type, get_metrics: metricsToWire(renderMetrics(view)) };
    case 'GET_LOGGING_LEVEL':
      return { type, get_logging_level: { level: LOGGING_LEVEL } };
    case 'GET_STATE':
      return { type, get_state: getState(view, viewer) };
    case 'GET_AGENTS':
      return { type, get_agents: getAgents(view, viewer) };
    case 'GET_FRAMEWORKS':
      return { type, get_frameworks: getFrameworks(view, viewer) };
    case 'GET_EXECUTORS':
      return { type, get_executors: getExecutors(view, viewer) };
    case 'GET_TASKS':
      return { type, get_tasks: getTasks(view, viewer) };
    case 'GET_ROLES':
      return { type, get_roles: getRoles(view, viewer) };
    case 'GET_MAINTENANCE_STATUS':
      return { type, get_maintenance_status: { status: clusterStatusToWire(view, viewer) } };
    case 'GET_MAINTENANCE_SCHEDULE':
      return { type, get_maintenance_schedule: { schedule: scheduleToWire(view, viewer) } };
    case 'GET_MASTER': {
      const startTime = view.startTimeMs / 1000;
      return {
        type,
        get_master: { master_info: masterInfoToWire(view.masterInfo), start_time: startTime, elected_time: startTime },
      };
    }
  }
}

function getRoles(view: ClusterView, viewer: Viewer): mesos.v1.master.Response.GetRoles {
  const roles = view.roles();
  return {
    roles: (viewer.all ? roles : roles.filter((role) => viewer.role(role.name))).map((role) => ({
      name: role.name,
      weight: role.weight,
      frameworks: role.frameworks.map((value) => ({ value })),
      resources: resourcesToWire(add(role.books.used, role.books.offered)),
    })),
  };
}

/** The body of a core call that answers one. */
export function valueResponse(value: OperatorValue): Response {
  switch (value.type) {
    case 'GET_QUOTA':
      return { type: 'GET_QUOTA', get_quota: { status: quotaStatus(value.configs) } };
    case 'GET_WEIGHTS':
      return {
        type: 'GET_WEIGHTS',
        get_weights: { weight_infos: value.weights.map((w) => ({ role: w.role, weight: w.weight })) },
      };
    case 'GET_OPERATIONS':
      return { type: 'GET_OPERATIONS', get_operations: { operations: value.operations.map(operationToWire) } };
  }
}

/**
 * Both shapes readers expect: upstream's `configs`, and the legacy `infos`
 * (guarantees only), one per role with a quota, each also carrying its
 * config as the specification nests it (`infos[].configs[]`).
 */
function quotaStatus(quotas: readonly QuotaConfig[]): mesos.v1.quota.QuotaStatus {
  const scalars = (quantities: Quantities) =>
    Object.fromEntries([...quantities].map(([name, milli]) => [name, { value: fromMilli(milli) }]));
  const configs = quotas.map((q) => ({ role: q.role, guarantees: scalars(q.guarantees), limits: scalars(q.limits) }));
  const infos = quotas.map((q, i) => ({
    role: q.role,
    guarantee: [...q.guarantees].map(([name, milli]) => ({
      name,
      type: 'SCALAR' as const,
      scalar: { value: fromMilli(milli) },
    })),
    configs: [configs[i]!],
  }));
  return { infos, configs };
}

function operationToWire(record: OperationRecord): mesos.v1.Operation {
  return {
    ...(record.frameworkId === undefined ? {} : { framework_id: { value: record.frameworkId } }),
    agent_id: { value: record.agentId },
    info: offerOperationToWire(record.info),
    latest_status: operationStatusToWire(record.latest),
    statuses: record.statuses.map(operationStatusToWire),
    uuid: { value: hexToBytes(record.uuid) },
  };
}

function offerOperationToWire(op: ResourceOperation): mesos.v1.Offer.Operation {
  const resources = resourcesToWire(op.resources, true);
  const id = op.id === undefined ? {} : { id: { value: op.id } };
  switch (op.type) {
    case 'RESERVE':
      return { type: 'RESERVE', ...id, reserve: { resources } };
    case 'UNRESERVE':
      return { type: 'UNRESERVE', ...id, unreserve: { resources } };
    case 'CREATE':
      return { type: 'CREATE', ...id, create: { volumes: resources } };
    case 'DESTROY':
      return { type: 'DESTROY', ...id, destroy: { volumes: resources } };
  }
}

/**
 * An event as the subscriber sees it, or nothing when the ACLs hide it
 * from the subscriber, as upstream's subscriber filters: SUBSCRIBED holds
 * what GET_STATE shows the reader; a task event goes only to one who may
 * view the task and its framework, a framework event only to one who may
 * view the framework, with the resources of roles it may view; AGENT_ADDED
 * goes to all, its total resources filtered.
 */
export function operatorEventToWire(
  view: ClusterView,
  event: OperatorEvent,
  viewer: Viewer = SHOW_ALL,
): Event | undefined {
  switch (event.type) {
    case 'SUBSCRIBED':
      return {
        type: 'SUBSCRIBED',
        subscribed: { get_state: getState(view, viewer), heartbeat_interval_seconds: event.heartbeatIntervalSeconds },
      };
    case 'TASK_ADDED':
      if (!viewer.framework(event.user) || !viewer.task(event.task.spec, event.user)) return undefined;
      return { type: 'TASK_ADDED', task_added: { task: taskToWire(event.task, event.user) } };
    case 'TASK_UPDATED':
      if (!viewer.framework(event.user) || !viewer.task(event.spec, event.user)) return undefined;
      return {
        type: 'TASK_UPDATED',
        task_updated: {
          framework_id: { value: event.frameworkId },
          status: taskStatusToWire(event.status),
          state: event.state,
        },
      };
    case 'AGENT_ADDED':
      return { type: 'AGENT_ADDED', agent_added: { agent: agentAdded(view, event.agent, viewer) } };
    case 'AGENT_REMOVED':
      return { type: 'AGENT_REMOVED', agent_removed: { agent_id: { value: event.agentId } } };
    case 'FRAMEWORK_ADDED':
    case 'FRAMEWORK_UPDATED':
      return frameworkEvent(view, event.type, event.framework, viewer);
    case 'FRAMEWORK_REMOVED':
      if (!viewer.framework(event.info.user)) return undefined;
      return { type: 'FRAMEWORK_REMOVED', framework_removed: { framework_info: frameworkInfoToWire(event.info) } };
    case 'HEARTBEAT':
      return { type: 'HEARTBEAT' };
  }
}

/** Upstream filters only the agent's total resources in this event. */
function agentAdded(view: ClusterView, agent: AgentSnapshot, viewer: Viewer): mesos.v1.master.Response.GetAgents.Agent {
  const wire = agentToWire(view, agent);
  return viewer.all
    ? wire
    : { ...wire, total_resources: resourcesToWire(visibleResources(agent.info.resources, viewer)) };
}

function frameworkEvent(
  view: ClusterView,
  type: 'FRAMEWORK_ADDED' | 'FRAMEWORK_UPDATED',
  fw: FrameworkSnapshot,
  viewer: Viewer,
): Event | undefined {
  if (!viewer.framework(fw.info.user)) return undefined;
  const seen = viewer.all
    ? fw
    : { ...fw, allocated: visibleResources(fw.allocated, viewer), offered: visibleResources(fw.offered, viewer) };
  const framework = frameworkToWire(view, seen);
  return type === 'FRAMEWORK_ADDED'
    ? { type, framework_added: { framework } }
    : { type, framework_updated: { framework } };
}

export const encodeResponseJson = (response: Response): string => encodeJson('mesos.v1.master.Response', response);
export const encodeResponseProto = (response: Response): Uint8Array =>
  encodeProto('mesos.v1.master.Response', response);
export const encodeEventJson = (event: Event): string => encodeJson('mesos.v1.master.Event', event);
export const encodeEventProto = (event: Event): Uint8Array => encodeProto('mesos.v1.master.Event', event);
