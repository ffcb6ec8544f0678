/**
 * `/roles`: one record per role that a registered framework subscribes to
 * or that holds resources, sorted by name. Quantities list only the scalar
 * names present. Consumption is allocation plus reservation (reservations
 * come with what tasks and executors use); offered resources are not
 * charged. Weights are 1.0 and no quota is set until the quota calls exist,
 * so `guarantee` and `limit` are empty.
 */
import { add, fromMilli, scalarQuantities, type Resources } from '../../core/resources.js';
import type { ClusterView, RoleView } from '../../core/view.js';
import { Double } from './legacy-json.js';
import { resourcesSummary, type JsonObject } from './summary.js';

export function renderRoles(view: ClusterView): JsonObject {
  return { roles: view.roles().map(roleJson) };
}

function roleJson({ name, frameworks, books }: RoleView): JsonObject {
  const { used, offered } = books;
  return {
    name,
    weight: new Double(1),
    quota: { role: name, guarantee: {}, limit: {}, consumed: quantities(used) },
    resources: resourcesSummary(add(used, offered)),
    allocated: quantities(used),
    offered: quantities(offered),
    reserved: {},
    frameworks: [...frameworks],
  };
}

function quantities(bag: Resources): Record<string, Double> {
  const out: Record<string, Double> = {};
  for (const [name, milli] of [...scalarQuantities(bag)].sort(([a], [b]) => (a < b ? -1 : 1))) {
    out[name] = new Double(fromMilli(milli));
  }
  return out;
}
