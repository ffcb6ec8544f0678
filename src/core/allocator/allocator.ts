/**
 * The built-in allocator: hierarchical DRF over roles, then over the
 * frameworks of each role, with refuse filters, suppression and offer
 * constraints. It owns the bookkeeping of what is allocated (offered or in
 * use) on each agent; the master owns offers and tasks. `allocate()` decides
 * and returns the decisions as data; the master turns them into offers.
 *
 * Allocation runs event-driven (framework added or revived, agent added,
 * filter expired) and, for recovered resources, batched at the allocation
 * interval, as upstream does. There is no idle periodic timer, so a quiet
 * cluster has an empty event queue.
 */
import type { SimContext } from '../context.js';
import type { Rng } from '../rng.js';
import {
  add,
  allocate as withAllocationRole,
  isEmpty,
  scalarMilli,
  scalarQuantities,
  subtract,
  type Resources,
} from '../resources.js';
import type { OfferConstraints, QuotaConfig } from '../types.js';
import { satisfies, type AgentFacts } from './constraints.js';
import { RefuseFilters } from './filters.js';
import { DrfSorter } from './sorter.js';

export const DEFAULT_ALLOCATION_INTERVAL_MS = 1_000;
/** `--min_allocatable_resources` default: cpus:0.01|mem:32 (either suffices). */
const MIN_CPUS_MILLI = 10;
const MIN_MEM_MILLI = 32_000;

export interface OfferDecision {
  readonly frameworkId: string;
  readonly agentId: string;
  readonly role: string;
  /** Without allocation role; the master adds it. */
  readonly resources: Resources;
}

export interface FrameworkAllocation {
  readonly roles: readonly string[];
  readonly suppressedRoles: readonly string[];
  readonly constraints?: OfferConstraints;
  /** Has the GPU_RESOURCES capability. */
  readonly gpuAware?: boolean;
}

interface AllocAgent {
  readonly facts: AgentFacts;
  /** Deactivated agents (disconnected, unreachable) are not offered. */
  active: boolean;
  readonly total: Resources;
  /** Allocated resources per framework, tagged with their allocation role. */
  readonly allocated: Map<string, Resources>;
}

interface AllocFramework {
  gpuAware: boolean;
  roles: Set<string>;
  suppressed: Set<string>;
  constraints?: OfferConstraints;
  active: boolean;
}

export class Allocator {
  readonly #agents = new Map<string, AllocAgent>();
  readonly #frameworks = new Map<string, AllocFramework>();
  readonly #filters = new RefuseFilters();
  readonly #quotas = new Map<string, QuotaConfig>();
  #weights = new Map<string, number>();
  readonly #rng: Rng;
  readonly #sorter: DrfSorter;
  #scheduledAtMs: number | undefined;
  #totals: Map<string, number> | undefined;
  /** Agents whose allocation changed since the last `takeTouched()`. */
  #touched = new Set<string>();

  constructor(
    private readonly ctx: SimContext,
    private readonly onDecisions: (decisions: readonly OfferDecision[]) => void,
    private readonly allocationIntervalMs = DEFAULT_ALLOCATION_INTERVAL_MS,
  ) {
    this.#rng = ctx.rng.fork('allocator');
    this.#sorter = new DrfSorter(() => this.#clusterTotals());
  }

  addAgent(id: string, total: Resources, facts: AgentFacts): void {
    this.#agents.set(id, { facts, total, active: true, allocated: new Map() });
    this.#totals = undefined;
    this.requestAllocation();
  }

  activateAgent(id: string): void {
    const agent = this.#agents.get(id);
    if (agent === undefined || agent.active) return;
    agent.active = true;
    this.requestAllocation();
  }

  /** Stops offering an agent; what is allocated on it stays allocated. */
  deactivateAgent(id: string): void {
    const agent = this.#agents.get(id);
    if (agent !== undefined) agent.active = false;
  }

  /** An agent's total, as registered. */
  total(agentId: string): Resources {
    return this.#agents.get(agentId)?.total ?? [];
  }

  /** The agents whose allocation changed since the last call, and a fresh set. */
  takeTouched(): ReadonlySet<string> {
    const touched = this.#touched;
    this.#touched = new Set();
    return touched;
  }

  agentIds(): string[] {
    return [...this.#agents.keys()];
  }

  addFramework(id: string, info: FrameworkAllocation): void {
    this.#frameworks.set(id, { gpuAware: false, roles: new Set(), suppressed: new Set(), active: true });
    this.updateFramework(id, info);
  }

  updateFramework(id: string, info: FrameworkAllocation): void {
    const fw = this.#frameworks.get(id);
    if (fw === undefined) return;
    const unsuppressed = [...fw.suppressed].filter((r) => !info.suppressedRoles.includes(r));
    fw.gpuAware = info.gpuAware ?? false;
    fw.roles = new Set(info.roles);
    fw.suppressed = new Set(info.suppressedRoles);
    fw.constraints = info.constraints;
    if (unsuppressed.length > 0) this.#filters.clear(id, unsuppressed);
    this.requestAllocation();
  }

  activateFramework(id: string): void {
    const fw = this.#frameworks.get(id);
    if (fw === undefined) return;
    fw.active = true;
    this.requestAllocation();
  }

  deactivateFramework(id: string): void {
    const fw = this.#frameworks.get(id);
    if (fw !== undefined) fw.active = false;
  }

  /** Forgets a framework; its allocations must have been recovered first. */
  removeFramework(id: string): void {
    this.#frameworks.delete(id);
    this.#filters.clear(id);
    for (const [agentId, agent] of this.#agents) if (agent.allocated.delete(id)) this.#touched.add(agentId);
  }

  suppress(id: string, roles: readonly string[]): void {
    const fw = this.#frameworks.get(id);
    if (fw === undefined) return;
    for (const role of roles.length === 0 ? fw.roles : roles) fw.suppressed.add(role);
  }

  revive(id: string, roles: readonly string[]): void {
    const fw = this.#frameworks.get(id);
    if (fw === undefined) return;
    const target = roles.length === 0 ? [...fw.roles] : [...roles];
    for (const role of target) fw.suppressed.delete(role);
    this.#filters.clear(id, target);
    this.requestAllocation();
  }

  /** Returns resources (tagged with their allocation role) to the pool. */
  recoverResources(frameworkId: string, agentId: string, resources: Resources, refuseMs = 0): void {
    const agent = this.#agents.get(agentId);
    if (agent === undefined || isEmpty(resources)) return;
    this.#touched.add(agentId);
    const held = agent.allocated.get(frameworkId) ?? [];
    const left = subtract(held, resources);
    if (isEmpty(left)) agent.allocated.delete(frameworkId);
    else agent.allocated.set(frameworkId, left);
    if (refuseMs > 0 && this.#frameworks.has(frameworkId)) this.#addFilter(frameworkId, agentId, resources, refuseMs);
    this.requestAllocation(this.allocationIntervalMs);
  }

  /** Quota enforcement arrives with the incremental allocator; until then the limits are stored only. */
  setQuota(role: string, quota: QuotaConfig | undefined): void {
    if (quota === undefined) this.#quotas.delete(role);
    else this.#quotas.set(role, quota);
  }

  setWeights(weights: ReadonlyMap<string, number>): void {
    this.#weights = new Map(weights);
  }

  /** Schedules one allocation run `delayMs` from now, coalescing requests. */
  requestAllocation(delayMs = 0): void {
    const at = this.ctx.loop.now() + delayMs;
    if (this.#scheduledAtMs !== undefined && this.#scheduledAtMs <= at) return;
    this.#scheduledAtMs = at;
    this.ctx.loop.schedule(delayMs, 'allocator:allocate', () => {
      if (this.#scheduledAtMs !== at) return;
      this.#scheduledAtMs = undefined;
      const decisions = this.allocate();
      if (decisions.length > 0) this.onDecisions(decisions);
    });
  }

  /**
   * An agent's total changed (an operation reserved, unreserved, created
   * or destroyed some of it). What is allocated stays as it is; the caller
   * keeps it within the new total.
   */
  updateAgentTotal(agentId: string, total: Resources): void {
    const agent = this.#agents.get(agentId);
    if (agent === undefined) return;
    this.#agents.set(agentId, { ...agent, total });
    this.#totals = undefined;
    this.#touched.add(agentId);
    this.requestAllocation();
  }

  /**
   * An operation in an ACCEPT changed resources a framework holds on an
   * agent: `consumed` (tagged with their allocation role) are replaced by
   * `converted` in its allocation. The agent's total follows separately.
   */
  updateAllocation(frameworkId: string, agentId: string, consumed: Resources, converted: Resources): void {
    const agent = this.#agents.get(agentId);
    if (agent === undefined) return;
    agent.allocated.set(frameworkId, add(subtract(agent.allocated.get(frameworkId) ?? [], consumed), converted));
    this.#touched.add(agentId);
  }

  /** What is allocated on an agent (offered or used), by framework. */
  allocation(agentId: string): ReadonlyMap<string, Resources> {
    return this.#agents.get(agentId)?.allocated ?? new Map();
  }

  /** One allocation run: agents in a seeded random order, DRF within each. */
  allocate(): OfferDecision[] {
    const now = this.ctx.loop.now();
    this.#filters.expire(now);
    const decisions: OfferDecision[] = [];
    const roleAlloc = this.#allocationsBy((_fw, role) => role);
    const fwAlloc = this.#allocationsBy((fw, role) => `${fw}\u0000${role}`);
    const agentIds = this.#rng.shuffle([...this.#agents.keys()].sort());
    for (const agentId of agentIds) {
      const agent = this.#agents.get(agentId)!;
      if (!agent.active) continue;
      let available = this.#available(agent);
      const roles = this.#sorter.sort(this.#activeRoles(), (r) => roleAlloc.get(r) ?? new Map());
      for (const role of roles) {
        const offerable = available.filter((r) => r.role === '*' || r.role === role);
        if (!allocatable(offerable)) continue;
        const frameworks = this.#sorter.sort(this.#frameworksIn(role), (f) => fwAlloc.get(`${f}\u0000${role}`) ?? new Map());
        const chosen = frameworks.find((id) => this.#wants(id, role, agentId, agent, offerable, now));
        if (chosen === undefined) continue;
        decisions.push({ frameworkId: chosen, agentId, role, resources: offerable });
        const tagged = withAllocationRole(offerable, role);
        agent.allocated.set(chosen, add(agent.allocated.get(chosen) ?? [], tagged));
        this.#touched.add(agentId);
        bump(roleAlloc, role, tagged);
        bump(fwAlloc, `${chosen}\u0000${role}`, tagged);
        available = subtract(available, offerable);
      }
    }
    return decisions;
  }

  /**
   * Agents with GPUs go only to frameworks that declare GPU_RESOURCES, so
   * that GPU machines are not filled with work that cannot use them
   * (upstream's `--filter_gpu_resources`, on by default).
   */
  #wants(id: string, role: string, agentId: string, agent: AllocAgent, offerable: Resources, now: number): boolean {
    const fw = this.#frameworks.get(id)!;
    return (
      !fw.suppressed.has(role) &&
      (fw.gpuAware || scalarMilli(agent.total, 'gpus') === 0) &&
      satisfies(fw.constraints, role, agent.facts) &&
      !this.#filters.filtered(id, role, agentId, offerable, now)
    );
  }

  #addFilter(frameworkId: string, agentId: string, resources: Resources, refuseMs: number): void {
    const byRole = new Map<string, Resources>();
    for (const r of resources) {
      const role = r.allocationRole ?? '*';
      byRole.set(role, add(byRole.get(role) ?? [], withAllocationRole([r], undefined)));
    }
    const expiresAtMs = this.ctx.loop.now() + refuseMs;
    for (const [role, bag] of byRole) this.#filters.add(frameworkId, role, agentId, bag, expiresAtMs);
    this.ctx.loop.schedule(refuseMs, 'allocator:filter-expiry', () => {
      this.#filters.expire(this.ctx.loop.now());
      this.requestAllocation();
    });
  }

  #available(agent: AllocAgent): Resources {
    let used: Resources = [];
    for (const bag of agent.allocated.values()) used = add(used, withAllocationRole(bag, undefined));
    return subtract(agent.total, used);
  }

  #activeRoles(): Set<string> {
    const roles = new Set<string>();
    for (const fw of this.#frameworks.values()) if (fw.active) for (const r of fw.roles) roles.add(r);
    return roles;
  }

  #frameworksIn(role: string): string[] {
    const out: string[] = [];
    for (const [id, fw] of this.#frameworks) if (fw.active && fw.roles.has(role)) out.push(id);
    return out;
  }

  #allocationsBy(key: (frameworkId: string, role: string) => string): Map<string, Map<string, number>> {
    const out = new Map<string, Map<string, number>>();
    for (const agent of this.#agents.values()) {
      for (const [fw, bag] of agent.allocated) {
        for (const r of bag) bump(out, key(fw, r.allocationRole ?? '*'), [r]);
      }
    }
    return out;
  }

  #clusterTotals(): Map<string, number> {
    if (this.#totals === undefined) {
      let total: Resources = [];
      for (const agent of this.#agents.values()) total = add(total, agent.total);
      this.#totals = scalarQuantities(total);
    }
    return this.#totals;
  }
}

function allocatable(bag: Resources): boolean {
  return scalarMilli(bag, 'cpus') >= MIN_CPUS_MILLI || scalarMilli(bag, 'mem') >= MIN_MEM_MILLI;
}

function bump(target: Map<string, Map<string, number>>, key: string, bag: Resources): void {
  let q = target.get(key);
  if (q === undefined) {
    q = new Map();
    target.set(key, q);
  }
  for (const [name, milli] of scalarQuantities(bag)) q.set(name, (q.get(name) ?? 0) + milli);
}
