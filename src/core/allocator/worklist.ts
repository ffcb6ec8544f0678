/**
 * The allocator's work list: what the next pass must visit, so that a pass
 * is incremental. It keeps the agents whose free resources changed (or
 * that came back, or lost a refuse filter), to visit with every framework
 * as a candidate; the clients that became able to take offers (added,
 * activated, revived, a role's quota raised or its consumption fallen
 * after a limit cut an offer), to visit the other agents with free
 * resources for those clients alone; and the agents with free resources.
 * Whatever else is free was declined by everyone else already, so a pass
 * with nothing on the list costs nothing.
 */
import { BitSet } from './bitset.js';
import { allocatable, type AgentState, type Books, type Client, type FrameworkState, type RoleState } from './state.js';

/** What one pass visits: agents in list order, those in `full` with every framework a candidate. */
export interface Work {
  readonly visits: AgentState[];
  readonly full: ReadonlySet<AgentState>;
  /** The able clients still eligible, as bit sets per role. */
  readonly able: Map<RoleState, BitSet>;
}

export class Worklist {
  /** Agents to visit with every framework as a candidate. */
  #dirty = new Set<AgentState>();
  /** Clients that became able to take offers since the last pass. */
  #able = new Set<Client>();
  /** Active agents with allocatable free resources. */
  readonly #free = new Set<AgentState>();
  /** Roles a quota limit cut an offer for: they are able again when consumption falls. */
  readonly #cutRoles = new Set<string>();

  constructor(private readonly books: Books) {}

  /** Free resources of an agent changed (or it came back): visit it fully. */
  changed(agent: AgentState): void {
    this.refresh(agent);
    if (agent.active) this.#dirty.add(agent);
  }

  /** A refuse filter on the agent expired: visit it fully, if it is offered at all. */
  unfiltered(agent: AgentState): void {
    if (agent.active) this.#dirty.add(agent);
  }

  /** Puts the agent among those with free resources to offer, or takes it out, as it is now. */
  refresh(agent: AgentState): void {
    if (agent.active && allocatable(agent.available)) this.#free.add(agent);
    else this.#free.delete(agent);
  }

  forgetAgent(agent: AgentState): void {
    this.#free.delete(agent);
    this.#dirty.delete(agent);
  }

  able(c: Client): void {
    this.#able.add(c);
  }

  forgetClient(c: Client): void {
    this.#able.delete(c);
  }

  /**
   * Puts a framework's clients in or out of their roles' orders: a client
   * takes offers when the framework is active, in the role and not
   * suppressed in it. `all` marks every eligible client able, else only
   * those that came in.
   */
  sync(fw: FrameworkState, all: boolean): void {
    for (const c of fw.clients.values()) {
      const eligible = fw.active && fw.roles.has(c.role) && !fw.suppressed.has(c.role);
      const cameIn = this.books.setEligible(c, eligible);
      if (eligible && (all || cameIn)) this.#able.add(c);
    }
  }

  /** A quota limit cut an offer for these roles in a pass. */
  cut(roles: Iterable<string>): void {
    for (const role of roles) this.#cutRoles.add(role);
  }

  /**
   * Some consumption fell: roles a limit cut are able again (the roles of
   * one tree share their limits, so any fall may give them room).
   */
  consumptionFell(): void {
    if (this.#cutRoles.size === 0) return;
    for (const role of this.#cutRoles) this.#markRoleAble(role);
    this.#cutRoles.clear();
  }

  /** A role's quota changed: every role of its tree may want more. */
  quotaChanged(role: string): void {
    const top = role.split('/')[0]!;
    for (const name of this.books.roles.keys()) {
      if (name === top || name.startsWith(`${top}/`)) this.#markRoleAble(name);
    }
    this.#cutRoles.delete(role);
  }

  /**
   * Takes the list for a pass: the changed agents with free resources, in
   * full, then, when some clients became able, every other agent with free
   * resources for them alone. Undefined when there is nothing to do.
   */
  take(): Work | undefined {
    if (this.#dirty.size === 0 && this.#able.size === 0) return undefined;
    const able = this.#ableByRole();
    const visits: AgentState[] = [];
    const full = new Set<AgentState>();
    for (const agent of this.#dirty) {
      if (this.#free.has(agent)) {
        visits.push(agent);
        full.add(agent);
      }
    }
    if (able.size > 0) for (const agent of this.#free) if (!full.has(agent)) visits.push(agent);
    this.#dirty = new Set();
    this.#able = new Set();
    return { visits, full, able };
  }

  #ableByRole(): Map<RoleState, BitSet> {
    const out = new Map<RoleState, BitSet>();
    for (const c of this.#able) {
      if (!c.inOrder) continue;
      let bits = out.get(c.roleState);
      if (bits === undefined) out.set(c.roleState, (bits = new BitSet()));
      bits.add(c.index);
    }
    return out;
  }

  #markRoleAble(role: string): void {
    const state = this.books.roles.get(role);
    if (state === undefined) return;
    for (const c of state.sorter.order()) this.#able.add(c);
  }
}
