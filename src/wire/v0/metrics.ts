/**
 * `/metrics/snapshot`: a flat object of doubles under the upstream keys
 * (`master/elected`, `master/frameworks_active`, `master/tasks_running`,
 * `master/cpus_total`, ...). Only metrics this cluster can compute truly
 * are listed; keys are sorted, as upstream prints them. `_used` counts what
 * tasks and executors use, not what is on offer; task counts cover live and
 * completed tasks (completed ones as far as they are kept).
 */
import { fromMilli, scalarMilli } from '../../core/model/resources.js';
import { TASK_STATES } from '../../core/model/types.js';
import type { ClusterView } from '../../core/view.js';
import { Double } from './json.js';
import type { Json } from './summary.js';

/**
 * A standby master's metrics: it is not elected, and it holds no state of
 * the cluster (upstream's standby reports its own, empty, books; only the
 * fact this one can state is listed).
 */
export function renderStandbyMetrics(): Record<string, Json> {
  return { 'master/elected': new Double(0) };
}

/** Uptime counts from the master's start, in cluster time. */
export function renderMetrics(view: ClusterView): Record<string, Json> {
  const m = new Map<string, number>();
  const frameworks = [...view.frameworks()];
  const connected = frameworks.filter((f) => f.state === 'subscribed').length;
  m.set('master/elected', 1);
  m.set('master/uptime_secs', (view.wallTimeMs() - view.startTimeMs) / 1000);
  m.set('master/frameworks_active', connected);
  m.set('master/frameworks_inactive', frameworks.length - connected);
  m.set('master/frameworks_connected', connected);
  m.set('master/frameworks_disconnected', frameworks.length - connected);
  const agents = [...view.agents()];
  const active = agents.filter((a) => a.active).length;
  m.set('master/slaves_active', active);
  m.set('master/slaves_inactive', agents.length - active);
  m.set('master/slaves_connected', active);
  m.set('master/slaves_disconnected', agents.length - active);
  m.set('master/slaves_unreachable', view.unreachableAgentCount());
  m.set(
    'master/outstanding_offers',
    frameworks.reduce((n, f) => n + f.offers.size, 0),
  );
  taskCounts(view, m);
  usage(view, m);
  quotas(view, m);
  const out: Record<string, Json> = {};
  for (const key of [...m.keys()].sort()) out[key] = new Double(m.get(key)!);
  return out;
}

/** Active tasks by state, and terminal ones (completed tasks of every framework). */
function taskCounts(view: ClusterView, m: Map<string, number>): void {
  for (const state of TASK_STATES) m.set(taskKey(state), 0);
  const all = [...view.frameworks(), ...view.completedFrameworks()].flatMap((f) => [
    ...f.tasks.values(),
    ...f.completedTasks,
  ]);
  for (const task of all) {
    m.set(taskKey(task.state), (m.get(taskKey(task.state)) ?? 0) + 1);
  }
}

function taskKey(state: string): string {
  return `master/tasks_${state.slice('TASK_'.length).toLowerCase()}`;
}

function usage(view: ClusterView, m: Map<string, number>): void {
  for (const name of ['cpus', 'gpus', 'mem', 'disk']) {
    let total = 0;
    let used = 0;
    for (const agent of view.agents()) {
      total += scalarMilli(agent.info.resources, name);
      used += scalarMilli(view.agentBooks(agent.id).used, name);
    }
    m.set(`master/${name}_total`, fromMilli(total));
    m.set(`master/${name}_used`, fromMilli(used));
    m.set(`master/${name}_percent`, total === 0 ? 0 : used / total);
  }
}

/** `allocator/cluster/quota/roles/<role>/resources/<name>/{limit,guarantee}` for each role with a quota. */
function quotas(view: ClusterView, m: Map<string, number>): void {
  for (const quota of view.quotas()) {
    const prefix = `allocator/cluster/quota/roles/${quota.role}/resources`;
    for (const [name, milli] of quota.limits) m.set(`${prefix}/${name}/limit`, fromMilli(milli));
    for (const [name, milli] of quota.guarantees) m.set(`${prefix}/${name}/guarantee`, fromMilli(milli));
  }
}
