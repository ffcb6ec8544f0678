/**
 * The built-in allocator: hierarchical DRF over roles, then over the
 * frameworks of each role (weighted by role), with refuse filters,
 * suppression, offer constraints, quota limits and reserved resources. It
 * owns the bookkeeping of what is allocated (offered or in use) on each
 * agent; the master owns offers and tasks. `allocate()` decides and returns
 * the decisions as data; the master turns them into offers.
 *
 * Allocation runs event-driven (framework added or revived, agent added,
 * filter expired) and, for recovered resources, batched at the allocation
 * interval, as upstream does. There is no idle periodic timer, so a quiet
 * cluster has an empty event queue. A pass is incremental: it visits what
 * its work list (worklist.ts) holds.
 */
import type { SimContext } from '../network/context.js';
import type { Rng } from '../kernel/rng.js';
import {
  isEmpty,
  scalarMilli,
  subtract,
  allocate as withAllocationRole,
  add,
  type Resources,
} from '../model/resources.js';
import type { OfferConstraints } from '../model/types.js';
import type { AgentFacts } from './constraints.js';
import { RefuseFilters } from './filters.js';
import { Pass, type OfferDecision } from './pass.js';
import { reservedScalars, type QuotaConfig } from './quota.js';
import { Books, splitByAllocationRole, type AgentState, type FrameworkState } from './state.js';
import { Worklist } from './worklist.js';

export type { OfferDecision } from './pass.js';
export type { QuotaConfig } from './quota.js';

export const DEFAULT_ALLOCATION_INTERVAL_MS = 1_000;

export interface FrameworkAllocation {
  readonly roles: readonly string[];
  readonly suppressedRoles: readonly string[];
  readonly constraints?: OfferConstraints;
  /** Has the GPU_RESOURCES capability. */
  readonly gpuAware?: boolean;
}

export class Allocator {
  readonly #books = new Books();
  readonly #filters = new RefuseFilters();
  #weights = new Map<string, number>();
  readonly #rng: Rng;
  #scheduledAtMs: number | undefined;
  #expiryTimerAtMs: number | undefined;
  readonly #work = new Worklist(this.#books);
  /** Paused after a master failover until this many agents are added (recovery.ts); no pass runs meanwhile. */
  #pausedUntilAgents: number | undefined;

  constructor(
    private readonly ctx: SimContext,
    private readonly onDecisions: (decisions: readonly OfferDecision[]) => void,
    private readonly allocationIntervalMs = DEFAULT_ALLOCATION_INTERVAL_MS,
  ) {
    this.#rng = ctx.rng.fork('allocator');
  }

  // ---- agents ----

  addAgent(id: string, total: Resources, facts: AgentFacts): void {
    const agent: AgentState = {
      id,
      facts,
      total,
      active: true,
      available: total,
      allocated: new Map(),
      hasGpus: scalarMilli(total, 'gpus') > 0,
      hasReserved: total.some((r) => r.role !== '*'),
      epoch: 0,
    };
    this.#books.agents.set(id, agent);
    this.#books.countTotal(total, 1);
    this.#chargeReservations(total, 1);
    this.#work.changed(agent);
    if (this.#pausedUntilAgents !== undefined && this.#books.agents.size >= this.#pausedUntilAgents) this.resume();
    this.requestAllocation();
  }

  /** Forgets an agent and everything allocated on it (the master has dropped its offers and tasks). */
  removeAgent(id: string): void {
    const agent = this.#books.agents.get(id);
    if (agent === undefined) return;
    for (const [fwId, bag] of [...agent.allocated]) this.#books.recover(agent, fwId, bag);
    this.#books.countTotal(agent.total, -1);
    this.#chargeReservations(agent.total, -1);
    this.#filters.forgetAgent(id, (role, index) => this.#books.roles.get(role)?.byIndex[index]);
    this.#books.agents.delete(id);
    this.#work.forgetAgent(agent);
    this.#books.touched.add(id);
    this.#work.consumptionFell();
  }

  activateAgent(id: string): void {
    const agent = this.#books.agents.get(id);
    if (agent === undefined || agent.active) return;
    agent.active = true;
    this.#work.changed(agent);
    this.requestAllocation();
  }

  /** Stops offering an agent; what is allocated on it stays allocated. */
  deactivateAgent(id: string): void {
    const agent = this.#books.agents.get(id);
    if (agent === undefined) return;
    agent.active = false;
    this.#work.refresh(agent);
  }

  /**
   * An agent's total changed (a reservation, an unreservation, a volume).
   * What is allocated on it stays allocated and must be in the new total;
   * the free resources, the reservations' quota consumption and the
   * cluster's totals follow.
   */
  updateAgentTotal(agentId: string, total: Resources): void {
    const agent = this.#books.agents.get(agentId);
    if (agent === undefined) throw new Error(`allocator: no agent '${agentId}'`);
    let used: Resources = [];
    for (const bag of agent.allocated.values()) used = add(used, withAllocationRole(bag, undefined));
    const available = subtract(total, used);
    this.#books.countTotal(agent.total, -1);
    this.#chargeReservations(agent.total, -1);
    agent.total = total;
    agent.available = available;
    agent.hasGpus = scalarMilli(total, 'gpus') > 0;
    agent.hasReserved = total.some((r) => r.role !== '*');
    agent.epoch++;
    this.#books.countTotal(total, 1);
    this.#chargeReservations(total, 1);
    this.#books.touched.add(agentId);
    this.#work.changed(agent);
    this.#work.consumptionFell();
    this.requestAllocation();
  }

  /**
   * An operation in an ACCEPT changed resources a framework holds on an
   * agent: `consumed` (tagged with their allocation role) became
   * `converted`. Call it before `updateAgentTotal` of the same change.
   */
  updateAllocation(frameworkId: string, agentId: string, consumed: Resources, converted: Resources): void {
    const agent = this.#books.agents.get(agentId);
    if (agent === undefined) throw new Error(`allocator: no agent '${agentId}'`);
    this.#books.convert(agent, frameworkId, consumed, converted);
  }

  /** An agent's total, as registered (or last updated). */
  total(agentId: string): Resources {
    return this.#books.agents.get(agentId)?.total ?? [];
  }

  /** What is free on an agent (not offered, not used). */
  available(agentId: string): Resources {
    return this.#books.agents.get(agentId)?.available ?? [];
  }

  /** The agents whose allocation changed since the last call, and a fresh set. */
  takeTouched(): ReadonlySet<string> {
    const touched = this.#books.touched;
    if (touched.size > 0) this.#books.touched = new Set();
    return touched;
  }

  agentIds(): string[] {
    return [...this.#books.agents.keys()];
  }

  /** What is allocated on an agent (offered or used), by framework. */
  allocation(agentId: string): ReadonlyMap<string, Resources> {
    return this.#books.agents.get(agentId)?.allocated ?? new Map();
  }

  // ---- frameworks ----

  addFramework(id: string, info: FrameworkAllocation): void {
    const fw: FrameworkState = {
      id,
      gpuAware: false,
      roles: new Set(),
      suppressed: new Set(),
      active: true,
      clients: new Map(),
      agents: new Set(),
    };
    this.#books.frameworks.set(id, fw);
    this.updateFramework(id, info);
  }

  updateFramework(id: string, info: FrameworkAllocation): void {
    const fw = this.#books.frameworks.get(id);
    if (fw === undefined) return;
    const unsuppressed = [...fw.suppressed].filter((r) => !info.suppressedRoles.includes(r));
    fw.gpuAware = info.gpuAware ?? false;
    fw.roles = new Set(info.roles);
    fw.suppressed = new Set(info.suppressedRoles);
    fw.constraints = info.constraints;
    for (const role of unsuppressed) this.#clearFilters(fw, role);
    for (const role of fw.roles) this.#books.client(fw, role);
    // Constraints or capabilities may have changed: every client may want more.
    this.#work.sync(fw, true);
    this.requestAllocation();
  }

  activateFramework(id: string): void {
    const fw = this.#books.frameworks.get(id);
    if (fw === undefined) return;
    fw.active = true;
    this.#work.sync(fw, true);
    this.requestAllocation();
  }

  deactivateFramework(id: string): void {
    const fw = this.#books.frameworks.get(id);
    if (fw === undefined) return;
    fw.active = false;
    this.#work.sync(fw, false);
  }

  /** Forgets a framework; what it still holds goes back to the agents. */
  removeFramework(id: string): void {
    const fw = this.#books.frameworks.get(id);
    if (fw === undefined) return;
    fw.active = false;
    let recovered = false;
    for (const agentId of [...fw.agents]) {
      const agent = this.#books.agents.get(agentId)!;
      const held = agent.allocated.get(id);
      if (held === undefined) continue;
      this.#books.recover(agent, id, held);
      this.#work.changed(agent);
      recovered = true;
    }
    for (const c of [...fw.clients.values()]) {
      this.#filters.clear(c);
      this.#work.forgetClient(c);
      this.#books.dropClient(c);
    }
    this.#books.frameworks.delete(id);
    if (recovered) {
      this.#work.consumptionFell();
      this.requestAllocation(this.allocationIntervalMs);
    }
  }

  suppress(id: string, roles: readonly string[]): void {
    const fw = this.#books.frameworks.get(id);
    if (fw === undefined) return;
    for (const role of roles.length === 0 ? fw.roles : roles) fw.suppressed.add(role);
    this.#work.sync(fw, false);
  }

  revive(id: string, roles: readonly string[]): void {
    const fw = this.#books.frameworks.get(id);
    if (fw === undefined) return;
    const target = roles.length === 0 ? [...fw.roles] : [...roles];
    for (const role of target) {
      fw.suppressed.delete(role);
      this.#clearFilters(fw, role);
      const c = fw.clients.get(role);
      if (c !== undefined && fw.roles.has(role)) this.#work.able(c);
    }
    this.#work.sync(fw, false);
    this.requestAllocation();
  }

  // ---- quota and weights ----

  /** Sets a role's quota (limits and guarantees, milli by name); empty maps remove it. */
  setQuota(role: string, config: QuotaConfig): void {
    this.#books.quota.set(role, config);
    this.#quotaChanged(role);
  }

  removeQuota(role: string): void {
    this.#books.quota.remove(role);
    this.#quotaChanged(role);
  }

  quota(role: string): QuotaConfig | undefined {
    return this.#books.quota.get(role);
  }

  /** Roles with a quota, sorted. */
  quotaRoles(): string[] {
    return this.#books.quota.roles();
  }

  /**
   * Scalar consumption of a role and its descendants, milli by name:
   * unreserved resources allocated to them (offered or used) plus their
   * reservations. What the master checks a new limit against.
   */
  quotaConsumption(role: string): Map<string, number> {
    return this.#books.quota.consumption(role);
  }

  /** Sets the weights of the roles named (others keep theirs); weight 1 is the default. */
  setWeights(weights: ReadonlyMap<string, number>): void {
    for (const [role, weight] of weights) {
      if (!(weight > 0)) throw new Error(`allocator: weight of '${role}' must be positive, got ${weight}`);
      if (weight === 1) this.#books.weights.delete(role);
      else this.#books.weights.set(role, weight);
      const state = this.#books.roles.get(role);
      if (state !== undefined) this.#books.roleSorter.setWeight(state, weight);
    }
    // A weight orders the roles; it makes no framework want what it declined,
    // so there is nothing to visit until something changes.
  }

  weight(role: string): number {
    return this.#books.weights.get(role) ?? 1;
  }

  /** Roles with a weight other than 1. */
  weights(): ReadonlyMap<string, number> {
    return this.#books.weights;
  }

  // ---- allocation ----

  /**
   * Resources (tagged with their allocation role) a framework holds on an
   * agent without an offer: tasks of an agent that comes back from being
   * unreachable. They leave the free pool and count in shares and quota.
   */
  holdUsed(frameworkId: string, agentId: string, resources: Resources): void {
    const agent = this.#books.agents.get(agentId);
    const fw = this.#books.frameworks.get(frameworkId);
    if (agent === undefined || fw === undefined || isEmpty(resources)) return;
    for (const [role, bag] of splitByAllocationRole(resources)) {
      this.#books.allocate(agent, this.#books.client(fw, role), bag);
    }
    this.#work.changed(agent);
  }

  /** Returns resources (tagged with their allocation role) to the pool. */
  recoverResources(frameworkId: string, agentId: string, resources: Resources, refuseMs = 0): void {
    const agent = this.#books.agents.get(agentId);
    if (agent === undefined || isEmpty(resources)) return;
    const byRole = this.#books.recover(agent, frameworkId, resources);
    this.#work.changed(agent);
    this.#work.consumptionFell();
    const fw = this.#books.frameworks.get(frameworkId);
    if (refuseMs > 0 && fw !== undefined) {
      const expiresAtMs = this.ctx.loop.now() + refuseMs;
      for (const [role, bag] of byRole) {
        const c = fw.clients.get(role);
        if (c !== undefined) this.#filters.add(c, agentId, bag, expiresAtMs);
      }
      this.#scheduleExpiry();
    }
    this.requestAllocation(this.allocationIntervalMs);
  }

  get paused(): boolean {
    return this.#pausedUntilAgents !== undefined;
  }

  /**
   * Upstream's allocator recovery: no allocation pass runs until
   * `expectedAgents` agents are known to it, or `resume()`. What changes
   * meanwhile is remembered, and the first pass after offers it.
   */
  pause(expectedAgents: number): void {
    this.#pausedUntilAgents = expectedAgents;
    this.ctx.trace.append('allocator:pause', { expectedAgents });
  }

  resume(): void {
    if (this.#pausedUntilAgents === undefined) return;
    this.#pausedUntilAgents = undefined;
    this.ctx.trace.append('allocator:resume', { agents: this.#books.agents.size });
    this.requestAllocation();
  }

  /** Schedules one allocation run `delayMs` from now, coalescing requests. */
  requestAllocation(delayMs = 0): void {
    const at = this.ctx.loop.now() + delayMs;
    if (this.#scheduledAtMs !== undefined && this.#scheduledAtMs <= at) return;
    this.#scheduledAtMs = at;
    this.ctx.loop.schedule(delayMs, 'allocator:allocate', () => {
      if (this.#scheduledAtMs !== at) return;
      this.#scheduledAtMs = undefined;
      if (this.paused) return;
      const decisions =
        this.ctx.probes === undefined ? this.allocate() : this.ctx.probes.run('allocation', () => this.allocate());
      if (decisions.length > 0) this.onDecisions(decisions);
    });
  }

  /**
   * One allocation pass: the agents to visit in a seeded random order, DRF
   * within each. Returns the decisions (and applies them to the books).
   */
  allocate(): OfferDecision[] {
    this.#expireFilters();
    const work = this.#work.take();
    if (work === undefined) return [];
    const pass = new Pass(this.#books, this.#filters, work.able);
    for (const agent of this.#rng.shuffle(work.visits)) {
      pass.visit(agent, work.full.has(agent));
      this.#work.refresh(agent);
    }
    this.#work.cut(pass.cutRoles);
    return pass.decisions;
  }

  // ---- internals ----

  #clearFilters(fw: FrameworkState, role: string): void {
    const c = fw.clients.get(role);
    if (c !== undefined) this.#filters.clear(c);
  }

  #chargeReservations(total: Resources, sign: 1 | -1): void {
    for (const [role, q] of reservedScalars(total)) this.#books.quota.charge(role, q, sign);
  }

  #quotaChanged(role: string): void {
    this.#work.quotaChanged(role);
    this.requestAllocation();
  }

  #expireFilters(): void {
    const agents = this.#filters.expire(
      this.ctx.loop.now(),
      (role, index) => this.#books.roles.get(role)?.byIndex[index],
    );
    for (const id of agents) {
      const agent = this.#books.agents.get(id);
      if (agent !== undefined) this.#work.unfiltered(agent);
    }
  }

  #scheduleExpiry(): void {
    const next = this.#filters.nextExpiryMs();
    if (next === undefined || (this.#expiryTimerAtMs !== undefined && this.#expiryTimerAtMs <= next)) return;
    this.#expiryTimerAtMs = next;
    this.ctx.loop.schedule(next - this.ctx.loop.now(), 'allocator:filter-expiry', () => {
      if (this.#expiryTimerAtMs !== next) return;
      this.#expiryTimerAtMs = undefined;
      this.#expireFilters();
      this.#scheduleExpiry();
      this.requestAllocation();
    });
  }
}
