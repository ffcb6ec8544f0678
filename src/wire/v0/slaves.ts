/**
 * `/slaves` and the slave entries of `/state`. The endpoint names keep the
 * upstream word; inside, these are agents.
 */
import type { Books } from '../../core/master/ledger.js';
import { normalise, type Resources } from '../../core/model/resources.js';
import type { AgentView, ClusterView } from '../../core/view.js';
import { SHOW_ALL, visibleResources, type Viewer } from '../view-filter.js';
import { attributesObject, resourceJson, resourcesSummary, secondsOf, type JsonObject } from './summary.js';

/**
 * AgentInfo capabilities of every simulated agent, in enum order. No
 * resource providers, so neither RESOURCE_PROVIDER nor RESIZE_VOLUME.
 */
export const AGENT_CAPABILITIES = [
  'MULTI_ROLE',
  'HIERARCHICAL_ROLE',
  'RESERVATION_REFINEMENT',
  'AGENT_OPERATION_FEEDBACK',
  'AGENT_DRAINING',
  'TASK_RESOURCE_LIMITS',
] as const;

export interface SlavesQuery {
  readonly slave_id?: string;
}

/** `slave_id` narrows the list; an unknown id gives an empty one. */
export function renderSlaves(view: ClusterView, query: SlavesQuery, viewer: Viewer = SHOW_ALL): JsonObject {
  const records = [...view.agents()].filter((r) => query.slave_id === undefined || r.id === query.slave_id);
  return {
    slaves: records.map((r) => ({ ...slaveObject(view, r, viewer), ...fullResources(view, r, viewer) })),
    recovered_slaves: recoveredSlaves(view).filter((a) => query.slave_id === undefined || a['id'] === query.slave_id),
  };
}

/** Agents of a new leader's registry that have not re-registered yet: what the registry knows of them. */
export function recoveredSlaves(view: ClusterView): JsonObject[] {
  return view
    .recoveredAgents()
    .map((a) => ({ id: a.agentId, hostname: a.hostname, port: a.port, attributes: attributesObject(a.attributes) }));
}

/**
 * One agent as `/state` prints it. Agents run the master's version. No
 * operator can deactivate or drain an agent yet, so `deactivated` is false.
 * `reserved_resources` lists the roles the reader may view; the summaries
 * beside it are whole, as upstream's.
 */
export function slaveObject(view: ClusterView, record: AgentView, viewer: Viewer = SHOW_ALL): JsonObject {
  return slaveObjectOf(record, view.agentBooks(record.id), view.masterInfo.version, viewer);
}

/** One agent from its record, its books and the master's version, as they were when read. */
export function slaveObjectOf(record: AgentView, books: Books, version: string, viewer: Viewer = SHOW_ALL): JsonObject {
  const { info } = record;
  const total = info.resources;
  const { used, offered } = books;
  const reserved: JsonObject = {};
  for (const [role, bag] of reservations(total)) if (viewer.role(role)) reserved[role] = resourcesSummary(bag);
  return {
    id: record.id,
    hostname: info.hostname,
    port: info.port,
    attributes: attributesObject(info.attributes),
    pid: record.pid,
    registered_time: secondsOf(record.registeredTimeMs),
    resources: resourcesSummary(total),
    used_resources: resourcesSummary(used),
    offered_resources: resourcesSummary(offered),
    reserved_resources: reserved,
    unreserved_resources: resourcesSummary(unreserved(total)),
    active: record.active,
    deactivated: false,
    version,
    capabilities: [...AGENT_CAPABILITIES],
  };
}

/**
 * Only `/slaves` adds the full Resource objects, which operators need to
 * name reservations: those the reader may view, by role and by resource.
 */
function fullResources(view: ClusterView, record: AgentView, viewer: Viewer): JsonObject {
  const total = record.info.resources;
  const { used, offered } = view.agentBooks(record.id);
  const full = (bag: Resources) => visibleResources(bag, viewer).map(resourceJson);
  const reservedFull: JsonObject = {};
  for (const [role, bag] of reservations(total)) if (viewer.role(role)) reservedFull[role] = full(bag);
  return {
    reserved_resources_full: reservedFull,
    unreserved_resources_full: full(unreserved(total)),
    used_resources_full: full(used),
    offered_resources_full: full(offered),
  };
}

/** Reserved resources by reservation role, roles sorted for a stable order. */
export function reservations(total: Resources): Map<string, Resources> {
  const byRole = new Map<string, Resources>();
  for (const r of normalise(total)) {
    if (r.role !== '*') byRole.set(r.role, [...(byRole.get(r.role) ?? []), r]);
  }
  return new Map([...byRole.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export function unreserved(total: Resources): Resources {
  return normalise(total).filter((r) => r.role === '*');
}
