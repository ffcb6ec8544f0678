/**
 * `/state-summary`: the agents and frameworks of `/state` without their
 * task lists, each with a count of tasks per state (TASK_STAGING ..
 * TASK_ERROR, as upstream counts them) and the ids on the other side.
 */
import type { Task } from '../../core/model/records.js';
import type { ClusterView, FrameworkView } from '../../core/view.js';
import { SHOW_ALL, type Viewer } from '../view-filter.js';
import { slaveObject } from './slaves.js';
import { resourcesSummary, type JsonObject } from './summary.js';

const COUNTED_STATES = [
  'TASK_STAGING',
  'TASK_STARTING',
  'TASK_RUNNING',
  'TASK_KILLING',
  'TASK_FINISHED',
  'TASK_KILLED',
  'TASK_FAILED',
  'TASK_LOST',
  'TASK_ERROR',
] as const;

/**
 * The reader sees the frameworks it may view and the reservations of the
 * roles it may; the counts and ids are of every framework, as upstream's.
 */
export function renderStateSummary(view: ClusterView, viewer: Viewer = SHOW_ALL): JsonObject {
  const frameworks = [...view.frameworks()];
  const tasks = frameworks.flatMap((fw) => [...fw.tasks.values(), ...fw.completedTasks]);
  return {
    hostname: view.masterInfo.hostname,
    slaves: [...view.agents()].map((record) => {
      const agentTasks = tasks.filter((t) => t.agentId === record.id);
      return {
        ...pick(slaveObject(view, record, viewer), SLAVE_KEYS),
        ...counts(agentTasks),
        framework_ids: unique(agentTasks.map((t) => t.frameworkId)),
      };
    }),
    frameworks: frameworks.filter((fw) => viewer.framework(fw.info.user)).map((fw) => frameworkSummary(view, fw)),
  };
}

function frameworkSummary(view: ClusterView, fw: FrameworkView): JsonObject {
  const tasks = [...fw.tasks.values(), ...fw.completedTasks];
  const connected = fw.state === 'subscribed';
  const { used, offered } = view.frameworkBooks(fw.id);
  return {
    id: fw.id,
    name: fw.info.name,
    hostname: fw.info.hostname ?? '',
    webui_url: fw.info.webuiUrl ?? '',
    used_resources: resourcesSummary(used),
    offered_resources: resourcesSummary(offered),
    capabilities: [...fw.info.capabilities],
    active: connected,
    connected,
    ...counts(tasks),
    slave_ids: unique(tasks.map((t) => t.agentId)),
  };
}

/** The keys of an agent that the summary keeps, in upstream's order. */
const SLAVE_KEYS = [
  'id',
  'pid',
  'hostname',
  'registered_time',
  'resources',
  'used_resources',
  'offered_resources',
  'reserved_resources',
  'unreserved_resources',
  'attributes',
  'active',
  'version',
] as const;

function pick(source: JsonObject, keys: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const key of keys) {
    const value = source[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

function counts(tasks: readonly Task[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const state of COUNTED_STATES) out[state] = 0;
  for (const task of tasks) if (task.state in out) out[task.state]! += 1;
  return out;
}

function unique(ids: readonly string[]): string[] {
  return [...new Set(ids)].sort();
}
