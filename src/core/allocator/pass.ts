/**
 * One allocation pass over the agents it is given, in the order given (the
 * allocator shuffles them). On each agent, roles in DRF order (roles below
 * a quota guarantee first), and within a role the first framework in DRF
 * order that wants the agent gets what the role may be offered there, cut
 * down to the role's quota headroom.
 *
 * An agent is visited either fully (its free resources changed: every
 * framework is a candidate) or for the frameworks that became able to take
 * offers only (nothing changed on the agent, so the others still do not
 * want it). Candidates are found without walking frameworks that refuse
 * the agent: the refuse-filter groups that cover what is offerable take
 * their members out by bit set, and when few frameworks are left they are
 * listed from the bits directly.
 */
import type { Resources } from '../model/resources.js';
import { within } from './bags.js';
import { type BitSet, coveredBy, difference } from './bitset.js';
import { satisfies } from './constraints.js';
import { groupKey, type FilterGroup, type RefuseFilters } from './filters.js';
import { allocatable, type AgentState, type Books, type Client, type RoleState } from './state.js';

export interface OfferDecision {
  readonly frameworkId: string;
  readonly agentId: string;
  readonly role: string;
  /** Without allocation role; the master adds it. */
  readonly resources: Resources;
}

/** Below this many candidates, list them from the bits and sort them; above, walk the order. */
const LIST_LIMIT = 32;

export class Pass {
  readonly decisions: OfferDecision[] = [];
  /** Roles an offer was cut down (or skipped) for by a quota limit. */
  readonly cutRoles = new Set<string>();

  constructor(
    private readonly books: Books,
    private readonly filters: RefuseFilters,
    /** Per role, the frameworks that became able to take offers, by number. */
    private readonly able: ReadonlyMap<RoleState, BitSet>,
  ) {}

  visit(agent: AgentState, full: boolean): void {
    const { books } = this;
    for (const role of this.#roleOrder()) {
      if (!allocatable(agent.available)) return;
      const allowed = full ? role.eligible : this.able.get(role);
      if (allowed === undefined || allowed.count === 0) continue;
      const offerable = books.offerable(agent, role.name);
      if (offerable !== agent.available && !allocatable(offerable)) continue;
      const { offer, cut } = books.quota.fit(role.name, offerable);
      if (cut) this.cutRoles.add(role.name);
      if (offer !== offerable && !allocatable(offer)) continue;
      const chosen = this.#choose(agent, role, allowed, full, offerable, offer);
      if (chosen === undefined) continue;
      this.decisions.push({ frameworkId: chosen.framework.id, agentId: agent.id, role: role.name, resources: offer });
      books.allocate(agent, chosen, offer);
    }
  }

  /** Roles in DRF order, those below a guarantee first (a copy: allocating reorders). */
  #roleOrder(): RoleState[] {
    const order = [...this.books.roleSorter.order()];
    const { quota } = this.books;
    if (!quota.hasGuarantees) return order;
    const first = order.filter((r) => quota.belowGuarantee(r.name));
    return first.length === 0 ? order : [...first, ...order.filter((r) => !quota.belowGuarantee(r.name))];
  }

  #choose(
    agent: AgentState,
    role: RoleState,
    allowed: BitSet,
    full: boolean,
    offerable: Resources,
    offer: Resources,
  ): Client | undefined {
    const groups = this.filters.groups(agent.id, role.name);
    const covering = groups.length === 0 ? NONE : groups.filter((g) => covers(g, agent, offerable));
    if (full && covering.length === 0) return this.#walk(role, agent, offer, groups, covering, undefined);
    const refusing = covering.map((g) => g.members);
    if (coveredBy(allowed, refusing)) return undefined;
    const listed = difference(allowed, refusing, LIST_LIMIT);
    if (listed === undefined) return this.#walk(role, agent, offer, groups, covering, full ? undefined : allowed);
    const candidates: Client[] = [];
    for (const i of listed) {
      const c = role.byIndex[i];
      if (c?.inOrder) candidates.push(c);
    }
    candidates.sort((a, b) => (role.sorter.before(a, b) ? -1 : 1));
    return candidates.find((c) => this.#wants(c, agent, offer, groups, covering));
  }

  /** The first client in DRF order that wants the agent, skipping covered ones by bit. */
  #walk(
    role: RoleState,
    agent: AgentState,
    offer: Resources,
    groups: readonly FilterGroup[],
    covering: readonly FilterGroup[],
    allowed: BitSet | undefined,
  ): Client | undefined {
    for (const c of role.sorter.order()) {
      if (allowed !== undefined && !allowed.has(c.index)) continue;
      if (covering.some((g) => g.members.has(c.index))) continue;
      if (this.#wants(c, agent, offer, groups, covering)) return c;
    }
    return undefined;
  }

  /**
   * Agents with GPUs go only to frameworks that declare GPU_RESOURCES, so
   * that GPU machines are not filled with work that cannot use them
   * (upstream's `--filter_gpu_resources`, on by default). A filter whose
   * group did not cover all that is offerable may still cover the offer.
   */
  #wants(
    c: Client,
    agent: AgentState,
    offer: Resources,
    groups: readonly FilterGroup[],
    covering: readonly FilterGroup[],
  ): boolean {
    const fw = c.framework;
    if (agent.hasGpus && !fw.gpuAware) return false;
    if (fw.constraints !== undefined && !satisfies(fw.constraints, c.role, agent.facts)) return false;
    for (const g of groups) {
      if (!covering.includes(g) && g.members.has(c.index) && within(g.resources, offer)) return false;
    }
    return true;
  }
}

const NONE: readonly FilterGroup[] = [];

/**
 * Whether a group's resources contain all the role may be offered on the
 * agent. Cached per epoch of the agent: between two growths of its free
 * resources what is offerable only shrinks, so a group that covered still
 * covers, and one that did not is checked exactly per offer.
 */
function covers(g: FilterGroup, agent: AgentState, offerable: Resources): boolean {
  if (g.coverEpoch !== agent.epoch) {
    g.coverEpoch = agent.epoch;
    g.covers =
      g.resources === offerable ||
      (offerable === agent.available && g.key === availableKey(agent)) ||
      within(g.resources, offerable);
  }
  return g.covers;
}

/** The filter-group key of what is free on the agent, kept while `available` is the same bag. */
const keys = new WeakMap<Resources, string>();

function availableKey(agent: AgentState): string {
  let key = keys.get(agent.available);
  if (key === undefined) keys.set(agent.available, (key = groupKey(agent.available)));
  return key;
}
