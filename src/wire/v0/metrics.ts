/**
 * `/metrics/snapshot`: a flat object of doubles under the upstream keys
 * (`master/elected`, `master/frameworks_active`, `master/tasks_running`,
 * `master/cpus_total`, ...). Only metrics this cluster can compute truly
 * are listed; keys are sorted, as upstream prints them. `_used` counts what
 * tasks and executors use, not what is on offer. Tasks in a live state
 * (`master/tasks_running`...) are counted as they are now; those in a
 * terminal one (`master/tasks_finished`...) are the leader's counters, every
 * task that ended so since it started, as upstream counts them.
 */
import { fromMilli, scalarMilli } from '../../core/model/resources.js';
import { isTerminal } from '../../core/model/task-state.js';
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

/**
 * Tasks by state: those the frameworks hold now (a task that ended stays
 * there until its last update is acknowledged), plus, for each terminal
 * state, those that ended so and were let go since the leader started.
 */
function taskCounts(view: ClusterView, m: Map<string, number>): void {
  for (const state of TASK_STATES) m.set(taskKey(state), isTerminal(state) ? view.endedTaskCount(state) : 0);
  for (const framework of view.frameworks())
    for (const task of framework.tasks.values()) m.set(taskKey(task.state), m.get(taskKey(task.state))! + 1);
}

/** The snapshot's keys that count (only ever grow while a master leads): the terminal task states'. */
export const COUNTER_KEYS: ReadonlySet<string> = new Set(TASK_STATES.filter(isTerminal).map(taskKey));

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
