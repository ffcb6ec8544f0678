/**
 * An agent's `/metrics/snapshot` (and its GET_METRICS): upstream's `slave/*`
 * keys (src/slave/metrics.cpp), as doubles, keys sorted, from the agent
 * process' own state in the read model.
 *
 * - Tasks staging, starting, running and killing are its live executors'
 *   tasks in those states; finished, failed, killed, lost and gone count
 *   the terminal updates it took since it started (a restart begins at
 *   zero, as upstream's process does), as do the status updates and
 *   framework messages, valid and invalid, the executors terminated and the
 *   containers it could not launch.
 * - Executors registering, running and terminating are its live executors
 *   by state (an HTTP executor not yet subscribed is registering).
 * - `_used` is what its running executors' containers hold (executor and
 *   tasks), `_percent` that over `_total`, its resources' total.
 * - Revocable resources, executor preemption (a QoS controller) and failed
 *   recoveries do not exist here: those keys are zero, as upstream's are
 *   on an agent without oversubscription.
 *
 * Left out, as nothing here can answer them truly: the keys of the other
 * processes upstream's agent hosts (`containerizer/*`, `gc/*`, `system/*`,
 * …), `slave/executor_directory_max_allowed_age_secs` (from the disk's
 * usage) and `slave/recovery_time_secs`.
 */
import { fromMilli, scalarMilli, type Resources } from '../../core/model/resources.js';
import type { AgentExecutorView, AgentNodeView, ClusterView } from '../../core/view.js';
import { agentExecutors, agentFrameworks, containerResources } from '../agent-state.js';
import { Double } from './json.js';
import type { Json } from './summary.js';

const LIVE_TASK_STATES = ['TASK_STAGING', 'TASK_STARTING', 'TASK_RUNNING', 'TASK_KILLING'] as const;
const ENDED_TASK_STATES = ['TASK_FINISHED', 'TASK_FAILED', 'TASK_KILLED', 'TASK_LOST', 'TASK_GONE'] as const;
const RESOURCE_NAMES = ['cpus', 'gpus', 'mem', 'disk'] as const;

/** The executor state upstream's agent would give it: REGISTERING, RUNNING or TERMINATING. */
function executorPhase(executor: AgentExecutorView): 'registering' | 'running' | 'terminating' {
  if (executor.state === 'launched') return 'registering';
  return executor.state === 'terminating' ? 'terminating' : 'running';
}

const taskKey = (state: string): string => `slave/tasks_${state.slice('TASK_'.length).toLowerCase()}`;

export function renderAgentMetrics(view: ClusterView, node: AgentNodeView): Record<string, Json> {
  const m = new Map<string, number>();
  const { counters } = node;
  const { running } = agentExecutors(node);
  m.set('slave/uptime_secs', (view.wallTimeMs() - counters.startedMs) / 1000);
  m.set('slave/registered', node.state === 'active' ? 1 : 0);
  m.set('slave/recovery_errors', 0);
  m.set('slave/frameworks_active', agentFrameworks(node).active.length);
  for (const state of LIVE_TASK_STATES) m.set(taskKey(state), 0);
  for (const executor of running)
    for (const task of executor.tasks.values())
      if (m.has(taskKey(task.state))) m.set(taskKey(task.state), m.get(taskKey(task.state))! + 1);
  for (const state of ENDED_TASK_STATES) m.set(taskKey(state), counters.tasksEnded.get(state) ?? 0);
  for (const phase of ['registering', 'running', 'terminating']) m.set(`slave/executors_${phase}`, 0);
  for (const executor of running) {
    const key = `slave/executors_${executorPhase(executor)}`;
    m.set(key, m.get(key)! + 1);
  }
  m.set('slave/executors_terminated', counters.executorsTerminated);
  m.set('slave/executors_preempted', 0);
  m.set('slave/valid_status_updates', counters.validStatusUpdates);
  m.set('slave/invalid_status_updates', counters.invalidStatusUpdates);
  m.set('slave/valid_framework_messages', counters.validFrameworkMessages);
  m.set('slave/invalid_framework_messages', counters.invalidFrameworkMessages);
  m.set('slave/container_launch_errors', counters.containerLaunchErrors);
  const used = running.flatMap((e): Resources => containerResources(e));
  for (const name of RESOURCE_NAMES) {
    const total = scalarMilli(node.resources, name);
    const inUse = scalarMilli(used, name);
    m.set(`slave/${name}_total`, fromMilli(total));
    m.set(`slave/${name}_used`, fromMilli(inUse));
    m.set(`slave/${name}_percent`, total === 0 ? 0 : inUse / total);
    for (const part of ['total', 'used', 'percent']) m.set(`slave/${name}_revocable_${part}`, 0);
  }
  const out: Record<string, Json> = {};
  for (const key of [...m.keys()].sort()) out[key] = new Double(m.get(key)!);
  return out;
}
