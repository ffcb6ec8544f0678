/**
 * What the registered agents hold in total, kept as agents come, go and
 * change their resources: the cluster's scalar capacity, the scalar
 * quantities reserved to each role, and the value type each resource name
 * has been seen with. Quota validation (capacity, consumption, which names
 * are scalar) reads these without a walk over the agents.
 */
import { scalarQuantities, type Resources, type ValueType } from '../model/resources.js';
import type { Quantities } from '../model/types.js';

export class AgentTotals {
  readonly #byAgent = new Map<string, Resources>();
  readonly #capacity = new Map<string, number>();
  readonly #reserved = new Map<string, Map<string, number>>();
  readonly #types = new Map<string, ValueType>();

  /** An agent's total, as registered or after an operation; undefined when it leaves. */
  set(agentId: string, total: Resources | undefined): void {
    const before = this.#byAgent.get(agentId);
    if (before !== undefined) this.#count(before, -1);
    if (total === undefined) {
      this.#byAgent.delete(agentId);
      return;
    }
    this.#byAgent.set(agentId, total);
    this.#count(total, 1);
    for (const r of total) if (!this.#types.has(r.name)) this.#types.set(r.name, r.type);
  }

  capacity(): Quantities {
    return this.#capacity;
  }

  /** What is reserved to `role` or to any role beneath it (`role/...`). */
  reservedToSubtree(role: string): Map<string, number> {
    const out = new Map<string, number>();
    for (const [reservedTo, quantities] of this.#reserved) {
      if (!inSubtree(reservedTo, role)) continue;
      for (const [name, milli] of quantities) out.set(name, (out.get(name) ?? 0) + milli);
    }
    return out;
  }

  /** What is reserved to exactly `role`. */
  reservedTo(role: string): Quantities {
    return this.#reserved.get(role) ?? new Map();
  }

  /** Roles with scalar resources reserved to them. */
  reservedRoles(): IterableIterator<string> {
    return this.#reserved.keys();
  }

  /** The value type resources of this name have on the agents, if any has one. */
  typeOf(name: string): ValueType | undefined {
    return this.#types.get(name);
  }

  #count(total: Resources, sign: 1 | -1): void {
    bump(this.#capacity, scalarQuantities(total), sign);
    for (const r of total) {
      if (r.role === '*' || r.type !== 'SCALAR') continue;
      let book = this.#reserved.get(r.role);
      if (book === undefined) this.#reserved.set(r.role, (book = new Map()));
      bump(book, new Map([[r.name, r.milli ?? 0]]), sign);
      if (book.size === 0) this.#reserved.delete(r.role);
    }
  }
}

/** True when `role` is `root` or a role beneath it. */
export function inSubtree(role: string, root: string): boolean {
  return role === root || role.startsWith(`${root}/`);
}

function bump(target: Map<string, number>, by: Quantities, sign: 1 | -1): void {
  for (const [name, milli] of by) {
    const next = (target.get(name) ?? 0) + sign * milli;
    if (next === 0) target.delete(name);
    else target.set(name, next);
  }
}
