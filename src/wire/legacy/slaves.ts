/**
 * `/slaves` and the slave entries of `/state`. The endpoint names keep the
 * upstream word; inside, these are agents.
 */
import { normalise, type Resources } from '../../core/resources.js';
import type { AgentRecord, Master } from '../../core/master/master.js';
import { attributesObject, resourceJson, resourcesSummary, secondsOf, type JsonObject } from './summary.js';
import { agentOffered, agentUsed } from './usage.js';

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
export function renderSlaves(master: Master, query: SlavesQuery): JsonObject {
  const records = [...master.agents.values()].filter((r) => query.slave_id === undefined || r.agent.id === query.slave_id);
  return {
    slaves: records.map((r) => ({ ...slaveObject(master, r), ...fullResources(master, r) })),
    recovered_slaves: [],
  };
}

/**
 * One agent as `/state` prints it. Agents run the master's version. No
 * operator can deactivate or drain an agent yet, so `deactivated` is false.
 */
export function slaveObject(master: Master, record: AgentRecord): JsonObject {
  const { agent } = record;
  const { config } = agent;
  const total = config.resources;
  const reserved: JsonObject = {};
  for (const [role, bag] of reservations(total)) reserved[role] = resourcesSummary(bag);
  return {
    id: agent.id,
    hostname: config.hostname,
    port: config.port,
    attributes: attributesObject(config.attributes),
    pid: agent.pid,
    registered_time: secondsOf(record.registeredTimeMs),
    resources: resourcesSummary(total),
    used_resources: resourcesSummary(agentUsed(master, agent.id)),
    offered_resources: resourcesSummary(agentOffered(master, agent.id)),
    reserved_resources: reserved,
    unreserved_resources: resourcesSummary(unreserved(total)),
    active: record.active,
    deactivated: false,
    version: master.info.version,
    capabilities: [...AGENT_CAPABILITIES],
  };
}

/** Only `/slaves` adds the full Resource objects, which operators need to name reservations. */
function fullResources(master: Master, record: AgentRecord): JsonObject {
  const total = record.agent.config.resources;
  const reservedFull: JsonObject = {};
  for (const [role, bag] of reservations(total)) reservedFull[role] = bag.map(resourceJson);
  return {
    reserved_resources_full: reservedFull,
    unreserved_resources_full: unreserved(total).map(resourceJson),
    used_resources_full: agentUsed(master, record.agent.id).map(resourceJson),
    offered_resources_full: agentOffered(master, record.agent.id).map(resourceJson),
  };
}

/** Reserved resources by reservation role, roles sorted for a stable order. */
function reservations(total: Resources): Map<string, Resources> {
  const byRole = new Map<string, Resources>();
  for (const r of normalise(total)) {
    if (r.role !== '*') byRole.set(r.role, [...(byRole.get(r.role) ?? []), r]);
  }
  return new Map([...byRole.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function unreserved(total: Resources): Resources {
  return normalise(total).filter((r) => r.role === '*');
}
