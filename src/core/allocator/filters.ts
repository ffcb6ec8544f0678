/**
 * Refuse filters: after a framework declines (or leaves unused) resources of
 * an agent for a role, offers of resources contained in those are withheld
 * from it until the filter expires. REVIVE clears them.
 *
 * Stored for cheap cycles. On each agent, filters of one role with the same
 * resources form a group, and a group holds its frameworks as a bit set of
 * their numbers within the role: frameworks usually decline whole offers, so
 * a thousand frameworks that declined an agent make one group, and whether
 * any framework of a role is left to offer the agent to is a few word
 * operations, whatever the number of frameworks. Expiries wait in a heap
 * ordered by (time, sequence); only the earliest one has a timer.
 */
import { heapPop, heapPush } from '../kernel/heap.js';
import type { Resources } from '../model/resources.js';
import { within } from './bags.js';
import { BitSet } from './bitset.js';

export interface FilterGroup {
  readonly agentId: string;
  readonly role: string;
  /** Untagged resources the members refuse (and any part of them). */
  readonly resources: Resources;
  readonly key: string;
  /** Framework number within the role -> expiry, ms. */
  readonly expiries: Map<number, number>;
  readonly members: BitSet;
  /** Whether the group covers the agent's offerable resources, as of `coverEpoch`. */
  covers: boolean;
  coverEpoch: number;
}

/** What the filters need of a (framework, role) client. */
export interface FilterHolder {
  readonly index: number;
  readonly role: string;
  readonly groups: Set<FilterGroup>;
}

interface Expiry {
  readonly atMs: number;
  readonly seq: number;
  readonly group: FilterGroup;
  readonly index: number;
}

export class RefuseFilters {
  /** agent -> role -> groups. */
  readonly #byAgent = new Map<string, Map<string, FilterGroup[]>>();
  readonly #heap: Expiry[] = [];
  #seq = 0;

  /** The earliest expiry still waiting, if any. */
  nextExpiryMs(): number | undefined {
    return this.#heap[0]?.atMs;
  }

  add(holder: FilterHolder, agentId: string, resources: Resources, expiresAtMs: number): void {
    let roles = this.#byAgent.get(agentId);
    if (roles === undefined) this.#byAgent.set(agentId, (roles = new Map()));
    let groups = roles.get(holder.role);
    if (groups === undefined) roles.set(holder.role, (groups = []));
    const key = groupKey(resources);
    let group = groups.find((g) => g.key === key);
    if (group === undefined) {
      group = {
        agentId,
        role: holder.role,
        resources,
        key,
        expiries: new Map(),
        members: new BitSet(),
        covers: false,
        coverEpoch: -1,
      };
      groups.push(group);
    }
    // A later filter of the same resources outlives an earlier one.
    if ((group.expiries.get(holder.index) ?? -Infinity) >= expiresAtMs) return;
    group.expiries.set(holder.index, expiresAtMs);
    group.members.add(holder.index);
    holder.groups.add(group);
    heapPush(this.#heap, { atMs: expiresAtMs, seq: ++this.#seq, group, index: holder.index }, earlier);
  }

  /** The groups of a role on an agent (empty when none). */
  groups(agentId: string, role: string): readonly FilterGroup[] {
    return this.#byAgent.get(agentId)?.get(role) ?? NONE;
  }

  /** Whether `holder` refuses `resources` on the agent (exact, at any time before expiry). */
  filtered(holder: FilterHolder, agentId: string, resources: Resources): boolean {
    for (const g of this.groups(agentId, holder.role)) {
      if (g.members.has(holder.index) && within(g.resources, resources)) return true;
    }
    return false;
  }

  /**
   * Drops the filters that expire by `nowMs`; returns the agents that lost
   * one, and the holders' numbers, by role, that are free of a filter again.
   */
  expire(nowMs: number, holderOf: (role: string, index: number) => FilterHolder | undefined): Set<string> {
    const agents = new Set<string>();
    while (this.#heap.length > 0 && this.#heap[0]!.atMs <= nowMs) {
      const { atMs, group, index } = heapPop(this.#heap, earlier)!;
      if (group.expiries.get(index) !== atMs) continue;
      const holder = holderOf(group.role, index);
      this.#drop(group, index, holder);
      agents.add(group.agentId);
    }
    return agents;
  }

  /** Clears every filter of a holder (REVIVE, a role left, a framework removed). */
  clear(holder: FilterHolder): void {
    for (const group of [...holder.groups]) this.#drop(group, holder.index, holder);
  }

  /** Forgets the filters on an agent (the agent is gone). */
  forgetAgent(agentId: string, holderOf: (role: string, index: number) => FilterHolder | undefined): void {
    for (const groups of this.#byAgent.get(agentId)?.values() ?? []) {
      for (const group of [...groups])
        for (const index of [...group.expiries.keys()]) this.#drop(group, index, holderOf(group.role, index));
    }
    this.#byAgent.delete(agentId);
  }

  #drop(group: FilterGroup, index: number, holder: FilterHolder | undefined): void {
    group.expiries.delete(index);
    group.members.delete(index);
    holder?.groups.delete(group);
    if (group.expiries.size > 0) return;
    const roles = this.#byAgent.get(group.agentId);
    const groups = roles?.get(group.role);
    if (roles === undefined || groups === undefined) return;
    const at = groups.indexOf(group);
    if (at >= 0) groups.splice(at, 1);
    if (groups.length === 0) roles.delete(group.role);
    if (roles.size === 0) this.#byAgent.delete(group.agentId);
  }
}

const NONE: readonly FilterGroup[] = [];

/** Equal bags give equal keys (a bag built another way may not: then the groups just do not merge). */
export function groupKey(resources: Resources): string {
  return JSON.stringify(resources);
}

function earlier(a: Expiry, b: Expiry): boolean {
  return a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq);
}
