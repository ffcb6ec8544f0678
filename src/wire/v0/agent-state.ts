/**
 * The v0 read endpoints of an agent (`/state`, `/flags`, `/containers`),
 * from the agent process' own state in the read model, with upstream's
 * keys. Each task carries the status history its agent took.
 * Container statistics are simulated (see ../agent-state.ts).
 */
import { isTerminal } from '../../core/model/task-state.js';
import type { FrameworkRef } from '../../core/model/messages.js';
import type { TaskStatus } from '../../core/model/types.js';
import type { AgentExecutorView, AgentNodeView, AgentTaskView, ClusterView } from '../../core/view.js';
import {
  agentExecutors,
  agentFrameworks,
  containerResources,
  executorInfoOf,
  executorViewable,
  resourceStatistics,
  usersOf,
} from '../agent-state.js';
import { viewerOf, type Viewer } from '../view-filter.js';
import { add, format, type Resources } from '../../core/model/resources.js';
import { formatDuration } from '../../core/kernel/duration.js';
import { Double } from './json.js';
import { AGENT_CAPABILITIES, reservations, unreserved } from './slaves.js';
import {
  attributesObject,
  labelsJson,
  resourceJson,
  resourcesSummary,
  secondsOf,
  type Json,
  type JsonObject,
} from './summary.js';
import { BUILD_INFO, VERSION } from '../version.js';
import type { mesos } from '../generated/types.js';

/** An agent's flags as `/flags` and GET_FLAGS show them. */
export function agentFlags(view: ClusterView, node: AgentNodeView): Record<string, string> {
  const { hostname, port } = view.masterInfo;
  const { config } = node;
  const { flags } = config;
  return {
    executor_registration_timeout: formatDuration(flags.executorRegistrationTimeoutMs),
    executor_reregistration_timeout: formatDuration(flags.executorReregistrationTimeoutMs),
    executor_shutdown_grace_period: formatDuration(flags.executorShutdownGracePeriodMs),
    gc_delay: formatDuration(node.sandboxes.gcDelayMs),
    hostname: config.hostname,
    ip: config.ip,
    master: `${hostname}:${port}`,
    port: String(config.port),
    recovery_timeout: formatDuration(flags.recoveryTimeoutMs),
    resources: format(config.resources),
    work_dir: node.sandboxes.workDir,
  };
}

export function renderAgentFlags(view: ClusterView, node: AgentNodeView): JsonObject {
  return { flags: agentFlags(view, node) };
}

/** A status as upstream's agent writes it in a task: its state, when, and its container. */
function statusJson(status: TaskStatus): JsonObject {
  return {
    state: status.state,
    timestamp: secondsOf(status.timestampMs),
    ...(status.containerId === undefined ? {} : { container_status: { container_id: { value: status.containerId } } }),
  };
}

function taskJson(node: AgentNodeView, executor: AgentExecutorView, task: AgentTaskView, user: string): JsonObject {
  const { spec } = task;
  return {
    id: spec.taskId,
    name: spec.name,
    framework_id: executor.frameworkId,
    executor_id: executor.kind === 'command' ? '' : executor.executorId,
    slave_id: node.config.id,
    state: task.state,
    resources: resourcesSummary(spec.resources),
    statuses: task.statuses.map(statusJson),
    user,
    ...(spec.labels.length === 0 ? {} : { labels: labelsJson(spec.labels) }),
  };
}

function executorJson(node: AgentNodeView, executor: AgentExecutorView, user: string, viewer: Viewer): JsonObject {
  const info = executorInfoOf(executor);
  const tasks: JsonObject[] = [];
  const completed: JsonObject[] = [];
  for (const task of executor.tasks.values()) {
    if (!viewer.task(task.spec, user)) continue;
    (executor.alive && !isTerminal(task.state) ? tasks : completed).push(taskJson(node, executor, task, user));
  }
  return {
    id: executor.executorId,
    name: info.name ?? '',
    source: info.source ?? '',
    container: executor.containerId,
    directory: executor.sandbox.path,
    resources: resourcesSummary(containerResources(executor)),
    ...(info.labels?.labels === undefined
      ? {}
      : {
          labels: info.labels.labels.map(
            (l): JsonObject => (l.value === undefined ? { key: l.key } : { key: l.key, value: l.value }),
          ),
        }),
    ...(info.type === undefined ? {} : { type: info.type }),
    tasks,
    queued_tasks: [],
    completed_tasks: completed,
  };
}

function frameworkJson(node: AgentNodeView, fw: FrameworkRef, viewer: Viewer): JsonObject {
  const { running, exited } = agentExecutors(node);
  const users = usersOf(node);
  const own = (list: readonly AgentExecutorView[]) =>
    list
      .filter((e) => e.frameworkId === fw.id && executorViewable(e, users, viewer))
      .map((e) => executorJson(node, e, fw.user, viewer));
  return {
    id: fw.id,
    name: fw.name,
    user: fw.user,
    failover_timeout: new Double(fw.failoverTimeoutMs / 1000),
    checkpoint: fw.checkpoint,
    hostname: fw.hostname ?? '',
    ...(fw.principal === undefined ? {} : { principal: fw.principal }),
    // A multi-role framework's `role` is unset, so upstream writes `roles` instead.
    ...(fw.capabilities.includes('MULTI_ROLE') ? { roles: [...fw.roles] } : { role: fw.role ?? '*' }),
    executors: own(running),
    completed_executors: own(exited),
  };
}

/** The agent's total by reservation, and what its running executors hold of it. */
function agentResourcesJson(node: AgentNodeView, viewer: Viewer): JsonObject {
  const total = node.resources;
  const allocated = agentExecutors(node).running.reduce<Resources>((sum, e) => add(sum, containerResources(e)), []);
  // The reservations of the roles the reader may view (view_roles), as upstream's agent writes them.
  const viewed = (bag: Resources) => [...reservations(bag)].filter(([role]) => viewer.role(role));
  const byRole = (bag: Resources, render: (part: Resources) => Json) =>
    Object.fromEntries(viewed(bag).map(([role, part]) => [role, render(part)]));
  const full = (part: Resources) => part.map(resourceJson);
  return {
    resources: resourcesSummary(total),
    reserved_resources: byRole(total, resourcesSummary),
    unreserved_resources: resourcesSummary(unreserved(total)),
    reserved_resources_full: byRole(total, full),
    unreserved_resources_full: full(unreserved(total)),
    reserved_resources_allocated: byRole(allocated, resourcesSummary),
    unreserved_resources_allocated: resourcesSummary(unreserved(allocated)),
    resource_providers: [],
  };
}

/** The frameworks it runs executors of, and its completed ones (agentFrameworks), those the reader may view. */
function frameworksJson(
  node: AgentNodeView,
  viewer: Viewer,
): { frameworks: JsonObject[]; completed_frameworks: JsonObject[] } {
  const { active, completed } = agentFrameworks(node);
  const render = (list: readonly FrameworkRef[]) =>
    list.filter((fw) => viewer.framework(fw.user)).map((fw) => frameworkJson(node, fw, viewer));
  return { frameworks: render(active), completed_frameworks: render(completed) };
}

/**
 * `/state` of an agent: itself, its flags, and the frameworks it runs
 * executors of; with ACLs, what they let a reader without a principal see
 * (view_frameworks, view_executors, view_tasks, view_roles, view_flags), as
 * upstream's.
 */
export function renderAgentState(view: ClusterView, node: AgentNodeView): JsonObject {
  const viewer = viewerOf(view.authorizer, undefined);
  const { config } = node;
  return {
    version: VERSION,
    build_date: BUILD_INFO.buildDate,
    build_time: new Double(BUILD_INFO.buildTimeSeconds),
    build_user: BUILD_INFO.buildUser,
    start_time: secondsOf(view.startTimeMs),
    id: config.id,
    pid: node.pid,
    hostname: config.hostname,
    capabilities: [...AGENT_CAPABILITIES],
    ...agentResourcesJson(node, viewer),
    attributes: attributesObject(config.attributes),
    master_hostname: view.masterInfo.hostname,
    ...(viewer.flags() ? { flags: agentFlags(view, node) } : {}),
    ...frameworksJson(node, viewer),
  };
}

/** A ResourceStatistics in upstream's JSON: its set fields, doubles as doubles. */
function statisticsJson(stats: mesos.v1.ResourceStatistics): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(stats).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (typeof value !== 'number') continue;
    out[key] = DOUBLE_STATISTICS.has(key) ? new Double(value) : value;
  }
  return out;
}

const DOUBLE_STATISTICS = new Set(['timestamp', 'cpus_user_time_secs', 'cpus_system_time_secs', 'cpus_limit']);

/** Each running executor: who it is, and its container's simulated statistics. */
function executorStatistics(view: ClusterView, node: AgentNodeView): (JsonObject & { container_id: string })[] {
  const now = view.wallTimeMs() / 1000;
  return agentExecutors(node).running.map((executor) => {
    const info = executorInfoOf(executor);
    return {
      container_id: executor.containerId,
      executor_id: executor.executorId,
      executor_name: info.name ?? '',
      framework_id: executor.frameworkId,
      source: info.source ?? '',
      statistics: statisticsJson(resourceStatistics(node, executor, now)),
    };
  });
}

/** `/containers`: each running executor's container with its simulated statistics. */
export function renderAgentContainers(view: ClusterView, node: AgentNodeView): JsonObject[] {
  return executorStatistics(view, node).map((entry) => ({
    ...entry,
    status: { container_id: { value: entry.container_id } },
  }));
}

/** `/monitor/statistics`: upstream's ResourceUsage of each running executor, without its container id. */
export function renderMonitorStatistics(view: ClusterView, node: AgentNodeView): JsonObject[] {
  return executorStatistics(view, node).map(({ container_id: _id, ...entry }) => entry);
}

/**
 * `/containers/cgroup`: a debug view of each running container's memory
 * cgroup, the control files with what they read (none without memory
 * isolation); `container_id` picks one, and NOT_FOUND says it is not here.
 */
export function renderAgentCgroups(
  node: AgentNodeView,
  containerId: string | undefined,
): JsonObject | JsonObject[] | 'NOT_FOUND' {
  const render = (id: string): JsonObject | undefined => {
    const cgroup = node.cgroups.view(id);
    if (cgroup === undefined) return undefined;
    return {
      container_id: id,
      cgroups_version: cgroup.version,
      memory_isolation: cgroup.isolated,
      files: { ...cgroup.files },
    };
  };
  if (containerId !== undefined) return render(containerId) ?? 'NOT_FOUND';
  return agentExecutors(node).running.flatMap((executor): JsonObject[] => {
    const one = render(executor.containerId);
    return one === undefined ? [] : [one];
  });
}
