/**
 * `/roles`: one record per role that a registered framework subscribes to
 * or that holds resources, sorted by name. Quantities list only the scalar
 * names present. A role without a quota shows empty `guarantee` and
 * `limit`; `consumed` is what quota charges: unreserved resources in use
 * plus everything reserved to the role and the roles beneath it (offered
 * resources are not charged). `reserved` lists what is reserved to exactly
 * this role.
 */
import { add, fromMilli, scalarQuantities } from '../../core/model/resources.js';
import type { Quantities } from '../../core/model/types.js';
import type { ClusterView, RoleView } from '../../core/view.js';
import { Double } from './json.js';
import { SHOW_ALL, type Viewer } from '../view-filter.js';
import { resourcesSummary, type JsonObject } from './summary.js';

/** Only the roles the reader may view (`view_roles`). */
export function renderRoles(view: ClusterView, viewer: Viewer = SHOW_ALL): JsonObject {
  const roles = view.roles();
  return {
    roles: (viewer.all ? roles : roles.filter((role) => viewer.role(role.name))).map((role) => roleJson(view, role)),
  };
}

function roleJson(view: ClusterView, role: RoleView): JsonObject {
  const { name, frameworks, books, weight, quota, reserved } = role;
  const { used, offered } = books;
  return {
    name,
    weight: new Double(weight),
    quota: {
      role: name,
      guarantee: doubles(quota?.guarantees ?? new Map()),
      limit: doubles(quota?.limits ?? new Map()),
      consumed: doubles(view.consumedQuota(name)),
    },
    resources: resourcesSummary(add(used, offered)),
    allocated: doubles(scalarQuantities(used)),
    offered: doubles(scalarQuantities(offered)),
    reserved: doubles(reserved),
    frameworks: [...frameworks],
  };
}

/** Scalar quantities as an object of doubles, by name, leaving out zeros. */
export function doubles(quantities: Quantities): Record<string, Double> {
  const out: Record<string, Double> = {};
  for (const [name, milli] of [...quantities].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (milli !== 0) out[name] = new Double(fromMilli(milli));
  }
  return out;
}
