/**
 * `/roles`: one record per role that a registered framework subscribes to
 * or that holds resources, sorted by name. Quantities list only the scalar
 * names present. Consumption is allocation plus reservation; offered
 * resources are not charged. Weights are 1.0 and no quota is set until the
 * quota calls exist, so `guarantee` and `limit` are empty.
 */
import { fromMilli, scalarQuantities, type Resources } from '../../core/resources.js';
import type { Master } from '../../core/master/master.js';
import { Double } from './legacy-json.js';
import { resourcesSummary, type JsonObject } from './summary.js';

interface RoleUsage {
  readonly frameworks: Set<string>;
  readonly allocated: Resources[];
  readonly offered: Resources[];
}

export function renderRoles(master: Master): JsonObject {
  const roles = new Map<string, RoleUsage>();
  const usage = (role: string): RoleUsage => {
    let u = roles.get(role);
    if (u === undefined) {
      u = { frameworks: new Set(), allocated: [], offered: [] };
      roles.set(role, u);
    }
    return u;
  };
  for (const fw of master.frameworks.values()) {
    for (const role of fw.roles()) usage(role).frameworks.add(fw.id);
    for (const task of fw.tasks.values()) if (!task.resourcesRecovered) usage(task.role).allocated.push(task.resources);
    for (const e of fw.executors.values()) {
      for (const r of e.resources) usage(r.allocationRole ?? '*').allocated.push([r]);
    }
    for (const offer of fw.offers.values()) usage(offer.role).offered.push(offer.resources);
  }
  const names = [...roles.keys()].sort();
  return { roles: names.map((name) => roleJson(name, roles.get(name)!)) };
}

function roleJson(name: string, u: RoleUsage): JsonObject {
  const allocated = u.allocated.flat();
  const offered = u.offered.flat();
  return {
    name,
    weight: new Double(1),
    quota: { role: name, guarantee: {}, limit: {}, consumed: quantities(allocated) },
    resources: resourcesSummary([...allocated, ...offered]),
    allocated: quantities(allocated),
    offered: quantities(offered),
    reserved: {},
    frameworks: [...u.frameworks].sort(),
  };
}

function quantities(bag: Resources): Record<string, Double> {
  const out: Record<string, Double> = {};
  for (const [name, milli] of [...scalarQuantities(bag)].sort(([a], [b]) => (a < b ? -1 : 1))) {
    out[name] = new Double(fromMilli(milli));
  }
  return out;
}
