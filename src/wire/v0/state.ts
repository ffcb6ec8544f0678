/**
 * `/state` (also served as `/master/state`): the master, its flags, agents
 * and frameworks in one object.
 */
import { DEFAULT_AGENT_FLAGS } from '../../core/agent/flags.js';
import { formatDuration } from '../../core/kernel/duration.js';

import { DEFAULT_ALLOCATION_INTERVAL_MS } from '../../core/allocator/allocator.js';
import { MAX_COMPLETED_TASKS_PER_FRAMEWORK } from '../../core/master/framework.js';
import { MAX_COMPLETED_FRAMEWORKS } from '../../core/master/master.js';
import type { ClusterView, FrameworkView } from '../../core/view.js';
import { SHOW_ALL, type Viewer } from '../view-filter.js';
import { frameworkObject } from './frameworks.js';
import { Double } from './json.js';
import { slaveObject } from './slaves.js';
import { secondsOf, type JsonObject } from './summary.js';
import { recoveredSlaves } from './slaves.js';
import { BUILD_INFO } from '../version.js';

/** MasterInfo capabilities, in enum order. */
export const MASTER_CAPABILITIES = ['AGENT_UPDATE', 'AGENT_DRAINING', 'QUOTA_V2'] as const;

export interface StateClock {
  /** When the serving process started; the master's own start time when absent. */
  readonly startTimeSeconds?: number;
}

/**
 * Only the leader serves (the other masters redirect to it), so it is its
 * own `leader`, elected when its process started. `recovered_slaves` are
 * the agents of its registry not re-registered yet after a failover.
 * Orphan tasks and unregistered frameworks do not exist in this model. What the
 * reader may not view is left out: the flags, frameworks (with their tasks
 * and executors), the reservations of roles.
 */
export function renderState(view: ClusterView, now: StateClock = {}, viewer: Viewer = SHOW_ALL): JsonObject {
  const framework = (fw: FrameworkView) => frameworkObject(view, fw, viewer);
  const seen = (fw: FrameworkView) => viewer.framework(fw.info.user);
  return {
    ...stateHead(view, now, viewer),
    slaves: [...view.agents()].map((r) => slaveObject(view, r, viewer)),
    recovered_slaves: recoveredSlaves(view),
    frameworks: [...view.frameworks()].filter(seen).map(framework),
    completed_frameworks: view.completedFrameworks().filter(seen).map(framework),
    orphan_tasks: [],
    unregistered_frameworks: [],
  };
}

/** What `/state` writes before its agents: the master and, for a reader who may view them, its flags. */
export function stateHead(view: ClusterView, now: StateClock, viewer: Viewer): JsonObject {
  const info = view.masterInfo;
  const startTime = now.startTimeSeconds === undefined ? secondsOf(view.startTimeMs) : new Double(now.startTimeSeconds);
  let activated = 0;
  let agents = 0;
  for (const r of view.agents()) {
    agents++;
    if (r.active) activated++;
  }
  return {
    ...renderVersion(info.version),
    start_time: startTime,
    elected_time: startTime,
    id: info.id,
    pid: info.pid,
    hostname: info.hostname,
    capabilities: [...MASTER_CAPABILITIES],
    activated_slaves: activated,
    deactivated_slaves: agents - activated,
    unreachable_slaves: view.unreachableAgentCount(),
    leader: info.pid,
    leader_info: { id: info.id, pid: info.pid, port: info.port, hostname: info.hostname },
    ...(viewer.flags() ? { flags: masterFlags(view) } : {}),
  };
}

/** `/flags`: the flags alone, for a reader the ACLs let see them. */
export function renderFlags(view: ClusterView): JsonObject {
  return { flags: masterFlags(view) };
}

/**
 * The flags this cluster honours, under their upstream names and in their
 * upstream text form, sorted by name as upstream lists them. The scheduler
 * heartbeat interval is not a flag upstream, so it is not listed.
 */
export function masterFlags(view: ClusterView): Record<string, string> {
  const options = view.masterOptions;
  const flags: Record<string, string> = {
    allocation_interval: formatDuration(options.allocationIntervalMs ?? DEFAULT_ALLOCATION_INTERVAL_MS),
    executor_shutdown_grace_period: formatDuration(DEFAULT_AGENT_FLAGS.executorShutdownGracePeriodMs),
    hostname: options.hostname,
    ip: options.ip,
    max_completed_frameworks: String(options.maxCompletedFrameworks ?? MAX_COMPLETED_FRAMEWORKS),
    max_completed_tasks_per_framework: String(
      options.maxCompletedTasksPerFramework ?? MAX_COMPLETED_TASKS_PER_FRAMEWORK,
    ),
    min_allocatable_resources: 'cpus:0.01|mem:32',
    port: String(options.port),
  };
  if (options.offerTimeoutMs !== undefined) flags['offer_timeout'] = formatDuration(options.offerTimeoutMs);
  if (options.weights !== undefined && options.weights.size > 0) {
    flags['weights'] = [...options.weights].map(([role, weight]) => `${role}=${weight}`).join(',');
  }
  return Object.fromEntries(Object.entries(flags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** `build_time` is a double of seconds since the epoch. */
export function renderVersion(version: string): JsonObject {
  return {
    version,
    build_date: BUILD_INFO.buildDate,
    build_time: new Double(BUILD_INFO.buildTimeSeconds),
    build_user: BUILD_INFO.buildUser,
  };
}
