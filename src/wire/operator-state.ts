/**
 * The operator API's models of the master's state, as upstream's `model()`
 * functions build them: agents, frameworks, tasks and executors as full
 * protobuf messages (GET_AGENTS, GET_FRAMEWORKS, GET_TASKS, GET_EXECUTORS,
 * GET_STATE, and the operator events). They carry the same facts as the
 * legacy JSON endpoints, in the v1 messages.
 */
import type { Task } from '../core/model/records.js';
import type { AgentSnapshot, FrameworkSnapshot } from '../core/model/operator-types.js';
import type { Resources } from '../core/model/resources.js';
import type { FrameworkInfo } from '../core/model/types.js';
import type { ClusterView, FrameworkView } from '../core/view.js';
import { hexToBytes } from './bytes.js';
import { attributeToWire, labelsToWire, resourcesToWire } from './convert-common.js';
import type { mesos } from './generated/types.js';
import { executorSpecs } from './v0/executors.js';
import { offerConstraintsJson } from './v0/frameworks.js';
import { AGENT_CAPABILITIES } from './v0/slaves.js';
import { inverseOfferToWire, taskStatusToWire } from './scheduler-out.js';
import { SHOW_ALL, visibleResources, type Viewer } from './view-filter.js';

export const timeInfo = (ms: number): mesos.v1.TimeInfo => ({ nanoseconds: Math.round(ms * 1e6) });

export function frameworkInfoToWire(info: FrameworkInfo & { readonly id: string }): mesos.v1.FrameworkInfo {
  const raw = info.raw as mesos.v1.FrameworkInfo | undefined;
  return {
    user: info.user,
    name: info.name,
    id: { value: info.id },
    failover_timeout: info.failoverTimeoutMs / 1000,
    checkpoint: info.checkpoint,
    ...(info.role === undefined ? {} : { role: info.role }),
    ...(info.hostname === undefined ? {} : { hostname: info.hostname }),
    ...(info.principal === undefined ? {} : { principal: info.principal }),
    ...(info.webuiUrl === undefined ? {} : { webui_url: info.webuiUrl }),
    capabilities: info.capabilities.map((type) => ({ type })),
    ...(info.labels.length === 0 ? {} : { labels: labelsToWire(info.labels)! }),
    roles: [...info.roles],
    ...(raw?.offer_filters === undefined ? {} : { offer_filters: raw.offer_filters }),
  };
}

export function frameworkToWire(
  view: ClusterView,
  fw: FrameworkSnapshot,
): mesos.v1.master.Response.GetFrameworks.Framework {
  const subscribed = fw.state === 'subscribed';
  const constraints = offerConstraintsJson(fw.constraints);
  const inverseOffers = view.inverseOffers(fw.info.id);
  return {
    framework_info: frameworkInfoToWire(fw.info),
    active: subscribed,
    connected: subscribed,
    recovered: fw.recovered,
    registered_time: timeInfo(fw.registeredTimeMs),
    ...(fw.reregisteredTimeMs === undefined ? {} : { reregistered_time: timeInfo(fw.reregisteredTimeMs) }),
    ...(fw.unregisteredTimeMs === undefined ? {} : { unregistered_time: timeInfo(fw.unregisteredTimeMs) }),
    offers: fw.offers.map((offer) => ({
      id: { value: offer.id },
      framework_id: { value: offer.frameworkId },
      agent_id: { value: offer.agentId },
      hostname: view.agent(offer.agentId)?.info.hostname ?? '',
      resources: resourcesToWire(offer.resources),
      allocation_info: { role: offer.role },
    })),
    ...(inverseOffers.length === 0 ? {} : { inverse_offers: inverseOffers.map(inverseOfferToWire) }),
    allocated_resources: resourcesToWire(fw.allocated),
    offered_resources: resourcesToWire(fw.offered),
    ...(Object.keys(constraints).length === 0
      ? {}
      : { offer_constraints: constraints as mesos.v1.scheduler.OfferConstraints }),
  };
}

/** The resources are those the reader may view (`view_roles`), in every list. */
export function agentToWire(
  view: ClusterView,
  agent: AgentSnapshot,
  viewer: Viewer = SHOW_ALL,
): mesos.v1.master.Response.GetAgents.Agent {
  const { info } = agent;
  const resources = (bag: Resources) => resourcesToWire(visibleResources(bag, viewer));
  return {
    agent_info: {
      id: { value: agent.id },
      hostname: info.hostname,
      port: info.port,
      resources: resources(info.resources),
      attributes: info.attributes.map(attributeToWire),
    },
    active: agent.active,
    deactivated: agent.deactivated,
    version: view.masterInfo.version,
    pid: agent.pid,
    registered_time: timeInfo(agent.registeredTimeMs),
    ...(agent.reregisteredTimeMs === undefined ? {} : { reregistered_time: timeInfo(agent.reregisteredTimeMs) }),
    total_resources: resources(info.resources),
    allocated_resources: resources(agent.allocated),
    offered_resources: resources(agent.offered),
    capabilities: AGENT_CAPABILITIES.map((type) => ({ type })),
    ...(agent.drain === undefined
      ? {}
      : {
          drain_info: {
            state: agent.drain.state,
            config: {
              mark_gone: agent.drain.markGone,
              ...(agent.drain.maxGracePeriodMs === undefined
                ? {}
                : { max_grace_period: { nanoseconds: agent.drain.maxGracePeriodMs * 1e6 } }),
            },
          },
        }),
    ...(agent.drainStartTimeMs === undefined ? {} : { estimated_drain_start_time: timeInfo(agent.drainStartTimeMs) }),
  };
}

/** A task with what its TaskInfo carried that the core does not interpret (container, discovery, checks). */
export function taskToWire(task: Task, user: string): mesos.v1.Task {
  const raw = task.spec.raw as mesos.v1.TaskInfo | undefined;
  return {
    name: task.spec.name,
    task_id: { value: task.spec.taskId },
    framework_id: { value: task.frameworkId },
    ...(task.executorId === undefined ? {} : { executor_id: { value: task.executorId } }),
    agent_id: { value: task.agentId },
    state: task.state,
    resources: resourcesToWire(task.resources),
    statuses: task.statuses.map(taskStatusToWire),
    ...(task.statusUpdateState === undefined ? {} : { status_update_state: task.statusUpdateState }),
    ...(task.statusUpdateUuid === undefined ? {} : { status_update_uuid: hexToBytes(task.statusUpdateUuid) }),
    ...(task.spec.labels.length === 0 ? {} : { labels: labelsToWire(task.spec.labels)! }),
    ...taskInfoExtras(raw, user),
  };
}

/** What a Task shows of its TaskInfo that the core does not interpret, with the user it runs as. */
export function taskInfoExtras(raw: mesos.v1.TaskInfo | undefined, user: string): Partial<mesos.v1.Task> {
  return {
    ...(raw?.discovery === undefined ? {} : { discovery: raw.discovery }),
    ...(raw?.container === undefined ? {} : { container: raw.container }),
    user,
    ...(raw?.health_check === undefined ? {} : { health_check: raw.health_check }),
    ...(raw?.kill_policy === undefined ? {} : { kill_policy: raw.kill_policy }),
    ...(raw?.limits === undefined ? {} : { limits: raw.limits }),
  };
}

/** The registered and the completed frameworks the reader may view. */
function viewedFrameworks(view: ClusterView, viewer: Viewer): FrameworkView[] {
  const all = [...view.frameworks(), ...view.completedFrameworks()];
  return viewer.all ? all : all.filter((fw) => viewer.framework(fw.info.user));
}

/** GET_AGENTS as of now: each agent as the operator API shows it, and the recovered ones as their wire AgentInfo. */
export interface AgentsAsOf {
  readonly agents: readonly AgentSnapshot[];
  readonly recovered: readonly mesos.v1.AgentInfo[];
}

export function agentsAsOf(view: ClusterView): AgentsAsOf {
  const agents = [...view.agents()].map((a) => view.agentSnapshot(a.id)!);
  const recovered = view.recoveredAgents().map((a) => ({
    id: { value: a.agentId },
    hostname: a.hostname,
    port: a.port,
    attributes: a.attributes.map(attributeToWire),
  }));
  return { agents, recovered };
}

export function agentsToWire(
  view: ClusterView,
  asOf: AgentsAsOf,
  viewer: Viewer = SHOW_ALL,
): mesos.v1.master.Response.GetAgents {
  return { agents: asOf.agents.map((a) => agentToWire(view, a, viewer)), recovered_agents: [...asOf.recovered] };
}

export function getAgents(view: ClusterView, viewer: Viewer = SHOW_ALL): mesos.v1.master.Response.GetAgents {
  return agentsToWire(view, agentsAsOf(view), viewer);
}

/** The frameworks the reader may view, whole: upstream filters neither their offers nor their resources here. */
export function getFrameworks(view: ClusterView, viewer: Viewer = SHOW_ALL): mesos.v1.master.Response.GetFrameworks {
  const render = (fw: FrameworkView) => frameworkToWire(view, view.frameworkSnapshot(fw));
  const seen = (fw: FrameworkView) => viewer.framework(fw.info.user);
  return {
    frameworks: [...view.frameworks()].filter(seen).map(render),
    completed_frameworks: view.completedFrameworks().filter(seen).map(render),
  };
}

/**
 * The tasks the reader may view, of frameworks it may view. Unreachable
 * tasks stay among the live ones in the master but are listed apart, as
 * upstream lists them.
 */
export function getTasks(view: ClusterView, viewer: Viewer = SHOW_ALL): mesos.v1.master.Response.GetTasks {
  const tasks: mesos.v1.Task[] = [];
  const unreachable: mesos.v1.Task[] = [];
  const completed: mesos.v1.Task[] = [];
  for (const fw of viewedFrameworks(view, viewer)) {
    const { user } = fw.info;
    const seen = (task: Task) => viewer.task(task.spec, user);
    for (const task of fw.tasks.values())
      if (seen(task)) (task.state === 'TASK_UNREACHABLE' ? unreachable : tasks).push(taskToWire(task, user));
    for (const task of fw.completedTasks) if (seen(task)) completed.push(taskToWire(task, user));
  }
  return { tasks, unreachable_tasks: unreachable, completed_tasks: completed };
}

/**
 * Executors other than command executors, which the master does not track,
 * as upstream; those the reader may view, of frameworks it may view.
 */
export function getExecutors(view: ClusterView, viewer: Viewer = SHOW_ALL): mesos.v1.master.Response.GetExecutors {
  const executors: mesos.v1.master.Response.GetExecutors.Executor[] = [];
  for (const fw of viewedFrameworks(view, viewer)) {
    const specOf = executorSpecs(fw);
    for (const record of fw.executors.values()) {
      const spec = specOf(record);
      if (!viewer.executor(spec, fw.info.user)) continue;
      const raw = spec.raw as mesos.v1.ExecutorInfo | undefined;
      const info: mesos.v1.ExecutorInfo = raw ?? { executor_id: { value: record.executorId }, type: 'DEFAULT' };
      executors.push({
        executor_info: { ...info, framework_id: { value: fw.id } },
        agent_id: { value: record.agentId },
      });
    }
  }
  return { executors };
}

export function getState(view: ClusterView, viewer: Viewer = SHOW_ALL): mesos.v1.master.Response.GetState {
  return {
    get_tasks: getTasks(view, viewer),
    get_executors: getExecutors(view, viewer),
    get_frameworks: getFrameworks(view, viewer),
    get_agents: getAgents(view, viewer),
  };
}
