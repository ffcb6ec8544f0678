/**
 * An agent's own view of itself as the agent operator API's messages, as
 * upstream's agent builds them: its frameworks, executors, tasks and
 * containers (GET_FRAMEWORKS, GET_EXECUTORS, GET_TASKS, GET_STATE,
 * GET_CONTAINERS, GET_AGENT). Everything comes from the agent process'
 * state in the read model (`view.agentNode`), not from the master's books.
 *
 * Task lists: a live executor's tasks are launched, or terminated once
 * terminal; a terminated executor's tasks are completed. This agent has no
 * pending or queued tasks: a task reaches its simulated executor at once.
 *
 * Container statistics are simulated: the cpu limit is the executor's (for
 * a command executor upstream's allowance, 0.1 cpus and 32 MB) and its live
 * tasks' cpus; memory comes from the container's cgroup model
 * (core/agent/cgroups.ts); cpu time is the tasks' cpus while they run.
 */
import { COMMAND_EXECUTOR_RESOURCES, containerResources } from '../core/agent/allotment.js';
import { MAX_COMPLETED_FRAMEWORKS } from '../core/agent/flags.js';
import { fromMilli, scalarMilli } from '../core/model/resources.js';
import type { ExecutorAgentInfo } from '../core/model/executor-api.js';
import type { CommandSpec } from '../core/model/types.js';
import type { AgentExecutorView, AgentNodeView, AgentTaskView } from '../core/view.js';
import type { FrameworkRef } from '../core/model/messages.js';

export { COMMAND_EXECUTOR_RESOURCES, containerResources, executorResources } from '../core/agent/allotment.js';
import { isTerminal } from '../core/model/task-state.js';
import { attributeToWire, labelsToWire, resourcesToWire } from './convert-common.js';
import type { mesos } from './generated/types.js';
import { frameworkInfoToWire, taskInfoExtras } from './operator-state.js';
import { SHOW_ALL, type Viewer } from './view-filter.js';
import { taskStatusToWire } from './scheduler-out.js';

/**
 * The executors the agent runs, then those that exited (its completed
 * frameworks' too); an executor still listed but dead counts as exited.
 */
export function agentExecutors(node: AgentNodeView): { running: AgentExecutorView[]; exited: AgentExecutorView[] } {
  const listed = node.executors();
  return {
    running: listed.filter((e) => e.alive),
    exited: [
      ...listed.filter((e) => !e.alive),
      ...node.completedExecutors(),
      ...node.completedFrameworks().flatMap((f) => f.completed),
    ],
  };
}

/**
 * The frameworks the agent runs executors of, and its completed ones:
 * those it shut down, and those none of whose executors is left running,
 * as upstream's agent moves a framework once its last executor is removed
 * (it comes back, with its completed executors, when it launches a task
 * here again); the newest MAX_COMPLETED_FRAMEWORKS of them.
 */
export function agentFrameworks(node: AgentNodeView): { active: FrameworkRef[]; completed: FrameworkRef[] } {
  const running = new Set(agentExecutors(node).running.map((e) => e.frameworkId));
  const all = node.frameworks();
  const idle = all.filter((f) => !running.has(f.id));
  return {
    active: all.filter((f) => running.has(f.id)),
    completed: [...node.completedFrameworks().map((f) => f.info), ...idle].slice(-MAX_COMPLETED_FRAMEWORKS),
  };
}

export function agentInfoToWire(node: AgentNodeView): mesos.v1.AgentInfo {
  const { id: agentId, hostname, port, attributes } = node.config;
  return agentDescriptionToWire({ agentId, hostname, port, resources: node.resources, attributes });
}

/** AgentInfo from what the agent says of itself (its id, address, total and attributes). */
export function agentDescriptionToWire(agent: ExecutorAgentInfo): mesos.v1.AgentInfo {
  return {
    id: { value: agent.agentId },
    hostname: agent.hostname,
    port: agent.port,
    resources: resourcesToWire(agent.resources),
    attributes: agent.attributes.map(attributeToWire),
  };
}

export function agentGetAgent(node: AgentNodeView): mesos.v1.agent.Response.GetAgent {
  return { agent_info: agentInfoToWire(node) };
}

export function agentGetFrameworks(
  node: AgentNodeView,
  viewer: Viewer = SHOW_ALL,
): mesos.v1.agent.Response.GetFrameworks {
  const { active, completed } = agentFrameworks(node);
  const render = (list: FrameworkRef[]) =>
    list.filter((info) => viewer.framework(info.user)).map((info) => ({ framework_info: frameworkInfoToWire(info) }));
  return { frameworks: render(active), completed_frameworks: render(completed) };
}

/**
 * Whether a reader may see an executor, as upstream's agent asks: its
 * framework (view_frameworks), then the executor by the user it runs as
 * (view_executors): its command's, a command executor's being its task's.
 */
export function executorViewable(
  executor: AgentExecutorView,
  users: ReadonlyMap<string, string>,
  viewer: Viewer,
): boolean {
  if (viewer.all) return true;
  const frameworkUser = users.get(executor.frameworkId) ?? '';
  if (!viewer.framework(frameworkUser)) return false;
  const spec = firstTask(executor)?.spec;
  if (spec?.executor !== undefined) return viewer.executor(spec.executor, frameworkUser);
  return viewer.executorUser(executor.kind === 'command' ? (spec?.command?.user ?? frameworkUser) : frameworkUser);
}

export const usersOf = (node: AgentNodeView): Map<string, string> =>
  new Map(
    [...node.completedFrameworks().map((f) => f.info), ...node.frameworks()].map(
      (f: FrameworkRef) => [f.id, f.user] as const,
    ),
  );

/** How upstream names a command executor: its task, and the command it runs. */
function commandExecutorName(taskId: string, command: CommandSpec | undefined): string {
  const text =
    command?.value === undefined
      ? 'NO EXECUTABLE'
      : command.shell
        ? `sh -c '${command.value}'`
        : `[${[command.value, ...command.arguments].join(', ')}]`;
  return `Command Executor (Task: ${taskId}) (Command: ${text})`;
}

/** The executor's first task, whose TaskInfo launched it. */
const firstTask = (executor: AgentExecutorView): AgentTaskView | undefined => executor.tasks.values().next().value;

/** The ExecutorInfo the executor was launched with; a command executor's is the one the agent makes for its task. */
export function executorInfoOf(executor: AgentExecutorView): mesos.v1.ExecutorInfo {
  const first = firstTask(executor);
  const spec = first?.spec.executor;
  const base = { executor_id: { value: executor.executorId }, framework_id: { value: executor.frameworkId } };
  if (spec !== undefined) {
    const raw = spec.raw as mesos.v1.ExecutorInfo | undefined;
    return { ...(raw ?? { type: spec.type, resources: resourcesToWire(spec.resources) }), ...base };
  }
  return {
    ...base,
    name: commandExecutorName(executor.executorId, first?.spec.command),
    resources: resourcesToWire(COMMAND_EXECUTOR_RESOURCES),
    source: executor.executorId,
  };
}

export function agentGetExecutors(
  node: AgentNodeView,
  viewer: Viewer = SHOW_ALL,
): mesos.v1.agent.Response.GetExecutors {
  const render = (executor: AgentExecutorView) => ({ executor_info: executorInfoOf(executor) });
  const users = usersOf(node);
  const viewable = (executor: AgentExecutorView) => executorViewable(executor, users, viewer);
  const { running, exited } = agentExecutors(node);
  return { executors: running.filter(viewable).map(render), completed_executors: exited.filter(viewable).map(render) };
}

function taskToWire(
  node: AgentNodeView,
  executor: AgentExecutorView,
  task: AgentTaskView,
  user: string,
): mesos.v1.Task {
  const raw = task.spec.raw as mesos.v1.TaskInfo | undefined;
  return {
    name: task.spec.name,
    task_id: { value: task.spec.taskId },
    framework_id: { value: executor.frameworkId },
    // A command task names no executor.
    ...(executor.kind === 'command' ? {} : { executor_id: { value: executor.executorId } }),
    agent_id: { value: node.config.id },
    state: task.state,
    resources: resourcesToWire(task.spec.resources),
    statuses: task.statuses.map(taskStatusToWire),
    ...(task.spec.labels.length === 0 ? {} : { labels: labelsToWire(task.spec.labels)! }),
    ...taskInfoExtras(raw, user),
  };
}

/** The tasks of the frameworks the reader may view, those it may view (view_tasks), as upstream's agent lists them. */
export function agentGetTasks(node: AgentNodeView, viewer: Viewer = SHOW_ALL): mesos.v1.agent.Response.GetTasks {
  const users = usersOf(node);
  const launched: mesos.v1.Task[] = [];
  const terminated: mesos.v1.Task[] = [];
  const completed: mesos.v1.Task[] = [];
  const { running, exited } = agentExecutors(node);
  for (const executor of [...running, ...exited]) {
    const user = users.get(executor.frameworkId) ?? '';
    if (!viewer.framework(user)) continue;
    for (const task of executor.tasks.values()) {
      if (!viewer.task(task.spec, user)) continue;
      const list = !executor.alive ? completed : isTerminal(task.state) ? terminated : launched;
      list.push(taskToWire(node, executor, task, user));
    }
  }
  return {
    pending_tasks: [],
    queued_tasks: [],
    launched_tasks: launched,
    terminated_tasks: terminated,
    completed_tasks: completed,
  };
}

export function agentGetState(node: AgentNodeView, viewer: Viewer = SHOW_ALL): mesos.v1.agent.Response.GetState {
  return {
    get_tasks: agentGetTasks(node, viewer),
    get_executors: agentGetExecutors(node, viewer),
    get_frameworks: agentGetFrameworks(node, viewer),
  };
}

const MiB = 1024 * 1024;

/**
 * Statistics from the container's allotment and its memory cgroup: the
 * hard and soft limits (each unset when unlimited) and the usage while the
 * memory files exist; without memory isolation, the allotted memory as the
 * limit, as upstream's containerizer reports it. Cpu time: each task
 * uses the cpus it was given, all in user time, for as long as it runs
 * (cpuSecondsOf); the executor's own allowance, and system time, stay
 * unused.
 */
export function resourceStatistics(
  node: AgentNodeView,
  executor: AgentExecutorView,
  nowSeconds: number,
): mesos.v1.ResourceStatistics {
  const allotted = containerResources(executor);
  const [cpus, mem] = [fromMilli(scalarMilli(allotted, 'cpus')), fromMilli(scalarMilli(allotted, 'mem'))];
  const cgroup = node.cgroups.view(executor.containerId);
  const isolated = cgroup?.isolated === true;
  const hard = isolated ? cgroup.hardLimitBytes : Math.round(mem * MiB);
  return {
    timestamp: nowSeconds,
    cpus_user_time_secs: cpuSecondsOf(executor, Math.round(nowSeconds * 1000)),
    cpus_system_time_secs: 0,
    cpus_limit: cpus,
    ...(isolated ? { mem_total_bytes: cgroup.usageBytes } : {}),
    ...(hard === Infinity ? {} : { mem_limit_bytes: hard }),
    ...(isolated && cgroup.softLimitBytes !== Infinity ? { mem_soft_limit_bytes: cgroup.softLimitBytes } : {}),
    mem_rss_bytes: cgroup?.usageBytes ?? 0,
  };
}

/**
 * The cpu seconds an executor's tasks have used by `nowMs`: each task's
 * cpus over the time from its first TASK_RUNNING update the agent took to
 * its terminal one (or now), as the agent's status history dates them.
 */
export function cpuSecondsOf(executor: AgentExecutorView, nowMs: number): number {
  let milliCpuMs = 0;
  for (const task of executor.tasks.values()) {
    const running = task.statuses.find((s) => s.state === 'TASK_RUNNING');
    if (running === undefined) continue;
    const ended = task.statuses.find((s) => isTerminal(s.state));
    const untilMs = Math.min(ended?.timestampMs ?? nowMs, nowMs);
    milliCpuMs += scalarMilli(task.spec.resources, 'cpus') * Math.max(0, untilMs - running.timestampMs);
  }
  return milliCpuMs / 1_000_000;
}

/** The running executors' containers (upstream lists those whose executor runs). */
export function agentGetContainers(node: AgentNodeView, nowSeconds: number): mesos.v1.agent.Response.GetContainers {
  return {
    containers: agentExecutors(node).running.map((executor) => {
      const info = executorInfoOf(executor);
      return {
        framework_id: { value: executor.frameworkId },
        executor_id: { value: executor.executorId },
        executor_name: info.name ?? '',
        container_id: { value: executor.containerId },
        container_status: { container_id: { value: executor.containerId } },
        resource_statistics: resourceStatistics(node, executor, nowSeconds),
      };
    }),
  };
}
