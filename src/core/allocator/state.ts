/**
 * The allocator's records and the one place allocations change: what each
 * agent holds per framework, what is free on it, and the sums the sorters
 * and quota read (per role, per framework within a role, per role
 * subtree), all kept as allocations change rather than recomputed.
 *
 *   available(agent) = total(agent) - sum over frameworks of allocated(agent, framework)
 */
import { isEmpty, scalarMilli, scalarQuantities, type Resource, type Resources } from '../model/resources.js';
import { minus, plus, tag } from './bags.js';
import type { OfferConstraints } from '../model/types.js';
import { BitSet } from './bitset.js';
import type { AgentFacts } from './constraints.js';
import type { FilterGroup, FilterHolder } from './filters.js';
import { QuotaBooks, unreservedScalars } from './quota.js';
import { DrfSorter, type DrfClient } from './sorter.js';

/** `--min_allocatable_resources` default: cpus:0.01|mem:32 (either suffices). */
const MIN_CPUS_MILLI = 10;
const MIN_MEM_MILLI = 32_000;

export function allocatable(bag: Resources): boolean {
  return scalarMilli(bag, 'cpus') >= MIN_CPUS_MILLI || scalarMilli(bag, 'mem') >= MIN_MEM_MILLI;
}

export interface AgentState {
  readonly id: string;
  readonly facts: AgentFacts;
  /** Deactivated agents (disconnected, unreachable) are not offered. */
  active: boolean;
  total: Resources;
  /** Untagged: the total less everything allocated. */
  available: Resources;
  /** Allocated resources per framework, tagged with their allocation role. */
  readonly allocated: Map<string, Resources>;
  hasGpus: boolean;
  hasReserved: boolean;
  /** Counts the times `available` grew: refuse filters' cover is cached per epoch. */
  epoch: number;
}

export interface FrameworkState {
  readonly id: string;
  gpuAware: boolean;
  roles: Set<string>;
  suppressed: Set<string>;
  constraints?: OfferConstraints;
  active: boolean;
  /** One client per role the framework is in or holds resources of. */
  readonly clients: Map<string, Client>;
  /** Agents where it holds something. */
  readonly agents: Set<string>;
}

/** A framework within one role: the unit of the role's DRF order and of refuse filters. */
export interface Client extends DrfClient, FilterHolder {
  readonly framework: FrameworkState;
  readonly roleState: RoleState;
}

export interface RoleState extends DrfClient {
  readonly sorter: DrfSorter<Client>;
  /** Numbers of the clients in the sorter's order (active, in the role, not suppressed). */
  readonly eligible: BitSet;
  readonly byIndex: (Client | undefined)[];
  readonly freeIndexes: number[];
}

export class Books {
  readonly agents = new Map<string, AgentState>();
  readonly frameworks = new Map<string, FrameworkState>();
  readonly roles = new Map<string, RoleState>();
  readonly quota = new QuotaBooks();
  readonly weights = new Map<string, number>();
  /** Scalar totals of every agent, milli by name. */
  readonly totals = new Map<string, number>();
  readonly roleSorter = new DrfSorter<RoleState>(() => this.totals);
  /** Agents whose allocation changed since the last `takeTouched()`. */
  touched = new Set<string>();

  role(name: string): RoleState {
    let role = this.roles.get(name);
    if (role === undefined) {
      const weight = this.weights.get(name) ?? 1;
      const sorter = new DrfSorter<Client>(() => this.totals);
      role = {
        name,
        allocation: new Map(),
        weight,
        share: 0,
        inOrder: false,
        sorter,
        eligible: new BitSet(),
        byIndex: [],
        freeIndexes: [],
      };
      this.roles.set(name, role);
    }
    return role;
  }

  client(fw: FrameworkState, roleName: string): Client {
    let c = fw.clients.get(roleName);
    if (c === undefined) {
      const roleState = this.role(roleName);
      const index = roleState.freeIndexes.pop() ?? roleState.byIndex.length;
      const groups = new Set<FilterGroup>();
      c = {
        name: fw.id,
        allocation: new Map(),
        weight: 1,
        share: 0,
        inOrder: false,
        framework: fw,
        roleState,
        index,
        role: roleName,
        groups,
      };
      roleState.byIndex[index] = c;
      fw.clients.set(roleName, c);
    }
    return c;
  }

  /** Drops a client that holds nothing (its filters must be cleared first). */
  dropClient(c: Client): void {
    this.setEligible(c, false);
    c.roleState.byIndex[c.index] = undefined;
    c.roleState.freeIndexes.push(c.index);
    c.framework.clients.delete(c.role);
  }

  /** Puts a client in or out of its role's order; true when it came in. */
  setEligible(c: Client, eligible: boolean): boolean {
    const role = c.roleState;
    if (eligible === c.inOrder) return false;
    if (eligible) {
      role.sorter.activate(c);
      role.eligible.add(c.index);
      this.roleSorter.activate(role);
      return true;
    }
    role.sorter.deactivate(c);
    role.eligible.delete(c.index);
    if (role.sorter.size === 0) this.roleSorter.deactivate(role);
    return false;
  }

  /** An agent's total joins (sign 1) or leaves (sign -1) the cluster's totals. */
  countTotal(total: Resources, sign: 1 | -1): void {
    for (const [name, milli] of scalarQuantities(total)) {
      const next = (this.totals.get(name) ?? 0) + sign * milli;
      if (next === 0) this.totals.delete(name);
      else this.totals.set(name, next);
    }
    this.roleSorter.totalsChanged();
    for (const role of this.roles.values()) role.sorter.totalsChanged();
  }

  /** Records an offer decision: `offer` (untagged) goes from free to the client. */
  allocate(agent: AgentState, c: Client, offer: Resources): void {
    const tagged = tag(offer, c.role);
    const fwId = c.framework.id;
    agent.allocated.set(fwId, plus(agent.allocated.get(fwId) ?? [], tagged));
    agent.available = offer === agent.available ? [] : minus(agent.available, offer);
    c.framework.agents.add(agent.id);
    this.touched.add(agent.id);
    const q = scalarQuantities(offer);
    this.roleSorter.allocate(c.roleState, q, 1);
    c.roleState.sorter.allocate(c, q, 1);
    this.quota.charge(c.role, agent.hasReserved ? unreservedScalars(offer) : q, 1);
  }

  /**
   * Returns resources (tagged) of a framework to the agent's free pool.
   * Returns the allocation roles whose consumption fell.
   */
  recover(agent: AgentState, frameworkId: string, resources: Resources): Map<string, Resources> {
    const held = agent.allocated.get(frameworkId) ?? [];
    const left = minus(held, resources);
    const fw = this.frameworks.get(frameworkId);
    if (isEmpty(left)) {
      agent.allocated.delete(frameworkId);
      fw?.agents.delete(agent.id);
    } else agent.allocated.set(frameworkId, left);
    const byRole = splitByAllocationRole(resources);
    for (const [roleName, bag] of byRole) {
      agent.available = plus(agent.available, bag);
      const q = scalarQuantities(bag);
      this.roleSorter.allocate(this.role(roleName), q, -1);
      const c = fw?.clients.get(roleName);
      if (c !== undefined) c.roleState.sorter.allocate(c, q, -1);
      this.quota.charge(roleName, unreservedScalars(bag), -1);
    }
    agent.epoch++;
    this.touched.add(agent.id);
    return byRole;
  }

  /**
   * An operation changed what a framework holds on an agent: `consumed`
   * (tagged) became `converted` (tagged), in place. Shares and quota
   * charges follow; nothing becomes free.
   */
  convert(agent: AgentState, frameworkId: string, consumed: Resources, converted: Resources): void {
    const held = agent.allocated.get(frameworkId) ?? [];
    agent.allocated.set(frameworkId, plus(minus(held, consumed), converted));
    const fw = this.frameworks.get(frameworkId);
    for (const [bag, sign] of [
      [consumed, -1],
      [converted, 1],
    ] as const) {
      for (const [roleName, part] of splitByAllocationRole(bag)) {
        const q = scalarQuantities(part);
        this.roleSorter.allocate(this.role(roleName), q, sign);
        const c = fw?.clients.get(roleName);
        if (c !== undefined) c.roleState.sorter.allocate(c, q, sign);
        this.quota.charge(roleName, unreservedScalars(part), sign);
      }
    }
    this.touched.add(agent.id);
  }

  /** Resources reserved to a role or to an ancestor of it, and unreserved ones: what the role may be offered. */
  offerable(agent: AgentState, role: string): Resources {
    if (!agent.hasReserved) return agent.available;
    return agent.available.filter((r) => r.role === '*' || r.role === role || role.startsWith(`${r.role}/`));
  }
}

/** A tagged bag by allocation role, each part untagged. */
export function splitByAllocationRole(resources: Resources): Map<string, Resources> {
  const first = resources[0]?.allocationRole;
  if (resources.every((r) => r.allocationRole === first)) return new Map([[first ?? '*', tag(resources, undefined)]]);
  const byRole = new Map<string, Resource[]>();
  for (const r of resources) {
    const role = r.allocationRole ?? '*';
    let part = byRole.get(role);
    if (part === undefined) byRole.set(role, (part = []));
    part.push(r);
  }
  return new Map([...byRole].map(([role, bag]) => [role, tag(bag, undefined)]));
}
