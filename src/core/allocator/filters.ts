/**
 * Refuse filters: after a framework declines (or leaves unused) resources of
 * an agent for a role, offers of a subset of those resources are withheld
 * from it until the filter expires. REVIVE clears them.
 */
import { contains, type Resources } from '../resources.js';

interface Filter {
  readonly resources: Resources;
  readonly expiresAtMs: number;
}

export class RefuseFilters {
  readonly #filters = new Map<string, Filter[]>();

  add(frameworkId: string, role: string, agentId: string, resources: Resources, expiresAtMs: number): void {
    const key = filterKey(frameworkId, role, agentId);
    const list = this.#filters.get(key) ?? [];
    list.push({ resources, expiresAtMs });
    this.#filters.set(key, list);
  }

  /** Whether offering `resources` would be withheld at time `nowMs`. */
  filtered(frameworkId: string, role: string, agentId: string, resources: Resources, nowMs: number): boolean {
    const list = this.#filters.get(filterKey(frameworkId, role, agentId));
    return list?.some((f) => f.expiresAtMs > nowMs && contains(f.resources, resources)) ?? false;
  }

  /** Drops filters that have expired by `nowMs`. */
  expire(nowMs: number): void {
    for (const [key, list] of this.#filters) {
      const live = list.filter((f) => f.expiresAtMs > nowMs);
      if (live.length === 0) this.#filters.delete(key);
      else this.#filters.set(key, live);
    }
  }

  /** Clears a framework's filters for the given roles (all roles if undefined). */
  clear(frameworkId: string, roles?: readonly string[]): void {
    for (const key of [...this.#filters.keys()]) {
      const [fw, role] = key.split('\u0000');
      if (fw === frameworkId && (roles === undefined || roles.includes(role!))) this.#filters.delete(key);
    }
  }

  get size(): number {
    return this.#filters.size;
  }
}

function filterKey(frameworkId: string, role: string, agentId: string): string {
  return `${frameworkId}\u0000${role}\u0000${agentId}`;
}
