/**
 * The figures of `/metrics/snapshot` under Prometheus names: `clustersim_`
 * and the key with every character other than a letter, a digit or `_`
 * made `_` (`master/tasks_running` is `clustersim_master_tasks_running`).
 * The quota figures name a role and a resource in their key; they become
 * one metric per kind with those as labels, so that role names (which may
 * hold `/`, `.` or `-`) never make two keys one name:
 * `allocator/cluster/quota/roles/<role>/resources/<name>/limit` is
 * `clustersim_allocator_quota_limit{role="<role>",resource="<name>"}`.
 */
import { Double } from './json.js';
import { COUNTER_KEYS } from './metrics.js';
import type { Json } from './summary.js';

export interface PrometheusFigure {
  readonly name: string;
  readonly help: string;
  /** A counter only ever grows while its master leads (its name ends in `_total`); a gauge goes up and down. */
  readonly type: 'counter' | 'gauge';
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export const SNAPSHOT_PREFIX = 'clustersim_';

const QUOTA_KEY = /^allocator\/cluster\/quota\/roles\/(.+)\/resources\/([^/]+)\/(limit|guarantee)$/;

/** The Prometheus name, help and labels of one `/metrics/snapshot` figure. */
export function prometheusFigure(key: string, value: number): PrometheusFigure {
  const quota = QUOTA_KEY.exec(key);
  if (quota !== null) {
    const [, role = '', resource = '', kind = ''] = quota;
    return {
      name: `${SNAPSHOT_PREFIX}allocator_quota_${kind}`,
      help: `The quota ${kind} of each role and resource (/metrics/snapshot: allocator/cluster/quota/roles/<role>/resources/<resource>/${kind})`,
      type: 'gauge',
      labels: { role, resource },
      value,
    };
  }
  const counter = COUNTER_KEYS.has(key);
  return {
    name: SNAPSHOT_PREFIX + key.replace(/[^A-Za-z0-9_]/g, '_') + (counter ? '_total' : ''),
    help: `${helpOf(key)} (/metrics/snapshot: ${key})`,
    type: counter ? 'counter' : 'gauge',
    labels: {},
    value,
  };
}

/** What each figure of the leader's snapshot means, a sentence each. */
const HELP: Readonly<Record<string, string>> = {
  'master/elected': 'Whether this master leads (1) or stands by (0)',
  'master/uptime_secs': 'Seconds since this master started, in cluster time',
  'master/frameworks_active': 'Frameworks subscribed now',
  'master/frameworks_inactive':
    'Frameworks the master holds that are not subscribed now (disconnected, within their failover timeout)',
  'master/frameworks_connected': 'Frameworks with an open event stream',
  'master/frameworks_disconnected': 'Frameworks the master holds whose event stream is closed',
  'master/slaves_active': 'Agents registered and active',
  'master/slaves_inactive': 'Agents registered but not active (deactivated, or draining)',
  'master/slaves_connected': 'Agents registered and reachable',
  'master/slaves_disconnected': 'Agents registered whose connection is lost, not yet marked unreachable',
  'master/slaves_unreachable': 'Agents marked unreachable that have not come back',
  'master/outstanding_offers': 'Offers sent to frameworks and not yet accepted, declined or rescinded',
};

const RESOURCE_KEY = /^master\/(cpus|gpus|mem|disk)_(total|used|percent)$/;
const TASK_KEY = /^master\/tasks_([a-z_]+)$/;

/** The sentence of a snapshot key: written out, or made from the resource or task state it names. */
function helpOf(key: string): string {
  const written = HELP[key];
  if (written !== undefined) return written;
  const resource = RESOURCE_KEY.exec(key);
  if (resource !== null) {
    const [, name = '', part = ''] = resource;
    const unit = name === 'mem' || name === 'disk' ? ' (MB)' : '';
    if (part === 'total') return `The ${name}${unit} of every registered agent together`;
    if (part === 'used') return `The ${name}${unit} that tasks and executors use, out of the total`;
    return `The share of the total ${name} in use, from 0 to 1`;
  }
  const task = TASK_KEY.exec(key);
  if (task !== null) {
    const state = `TASK_${task[1]!.toUpperCase()}`;
    return COUNTER_KEYS.has(key)
      ? `Tasks that reached ${state} since this master was elected`
      : `Tasks in ${state} now`;
  }
  return `The figure ${key}`;
}

/** Every figure of a rendered snapshot (`renderMetrics`, `renderStandbyMetrics`), in its order. */
export function prometheusFigures(snapshot: Readonly<Record<string, Json>>): PrometheusFigure[] {
  return Object.entries(snapshot).map(([key, value]) =>
    prometheusFigure(key, value instanceof Double ? value.value : Number(value)),
  );
}
