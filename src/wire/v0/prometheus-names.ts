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
import type { Json } from './summary.js';

export interface PrometheusFigure {
  readonly name: string;
  readonly help: string;
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
      labels: { role, resource },
      value,
    };
  }
  return {
    name: SNAPSHOT_PREFIX + key.replace(/[^A-Za-z0-9_]/g, '_'),
    help: `/metrics/snapshot: ${key}`,
    labels: {},
    value,
  };
}

/** Every figure of a rendered snapshot (`renderMetrics`, `renderStandbyMetrics`), in its order. */
export function prometheusFigures(snapshot: Readonly<Record<string, Json>>): PrometheusFigure[] {
  return Object.entries(snapshot).map(([key, value]) =>
    prometheusFigure(key, value instanceof Double ? value.value : Number(value)),
  );
}
