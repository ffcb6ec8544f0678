/**
 * `/roles`: one record per role that a registered framework subscribes to,
 * that holds resources or that has reservations, sorted by name.
 * Quantities list only the scalar names present. `reserved` sums the
 * role's reservations on every agent. Consumption is reservation plus the
 * unreserved part of the allocation (a reserved resource in use counts
 * once); offered resources are not charged. Weights are 1.0 and no quota
 * is set until the quota calls exist, so `guarantee` and `limit` are empty.
 */
import { add, fromMilli, isReserved, scalarQuantities, type Resources } from '../../core/resources.js';
import type { ClusterView, RoleView } from '../../core/view.js';
import { Double } from './legacy-json.js';
import { resourcesSummary, type JsonObject } from './summary.js';

const EMPTY_BOOKS: RoleView['books'] = { offered: [], used: [] };

export function renderRoles(view: ClusterView): JsonObject {
  const reserved = reservedByRole(view);
  const known = new Map(view.roles().map((r) => [r.name, r]));
  const names = [...new Set([...known.keys(), ...reserved.keys()])].sort();
  const records = names.map((name) => known.get(name) ?? { name, frameworks: [], books: EMPTY_BOOKS });
  return { roles: records.map((r) => roleJson(r, reserved.get(r.name) ?? [])) };
}

/** Every agent's reserved resources, by the role they are reserved to. */
function reservedByRole(view: ClusterView): Map<string, Resources> {
  const out = new Map<string, Resources>();
  for (const agent of view.agents()) {
    for (const r of agent.info.resources) if (isReserved(r)) out.set(r.role, [...(out.get(r.role) ?? []), r]);
  }
  return out;
}

function roleJson({ name, frameworks, books }: RoleView, reserved: Resources): JsonObject {
  const { used, offered } = books;
  return {
    name,
    weight: new Double(1),
    quota: { role: name, guarantee: {}, limit: {}, consumed: quantities(add(reserved, used.filter((r) => !isReserved(r)))) },
    resources: resourcesSummary(add(used, offered)),
    allocated: quantities(used),
    offered: quantities(offered),
    reserved: quantities(reserved),
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
