/**
 * The master's books: what is offered and what is used (live tasks and
 * executors), summed per agent, per framework and per role, kept as the
 * master changes its records rather than recomputed on each read. The read
 * endpoints format these sums; the invariant check compares them with the
 * allocator's own books for every agent an input touched.
 *
 *   allocated(agent) = offered(agent) + used(agent)       (allocator's view)
 *   consumed(role)   = used(role)                          (quota consumption;
 *                                                          reservations come with them)
 *
 * Every bag is tagged with its allocation role; a role's sums group the
 * resources by that tag. Framework and role books are kept per agent: two
 * agents' port ranges may coincide, and only within one agent can a range
 * be added and taken away again exactly. Their totals sum over the agents
 * when read.
 */
import { add, isEmpty, normalise, subtract, type Resource, type Resources } from '../model/resources.js';

export type HoldingKind = 'offered' | 'used';

export interface Holder {
  readonly frameworkId: string;
  readonly agentId: string;
}

export interface Books {
  readonly offered: Resources;
  readonly used: Resources;
}

interface MutableBooks {
  offered: Resources;
  used: Resources;
}

const EMPTY: Books = { offered: [], used: [] };

export class Ledger {
  readonly #agents = new Map<string, MutableBooks>();
  readonly #frameworks = new Map<string, Map<string, MutableBooks>>();
  readonly #roles = new Map<string, Map<string, MutableBooks>>();
  readonly #roleMembers = new Map<string, Set<string>>();
  /** Agents whose books changed since the last `takeTouched()`. */
  #touched = new Set<string>();

  hold(kind: HoldingKind, holder: Holder, resources: Resources): void {
    if (isEmpty(resources)) return;
    this.#change(kind, holder, resources, add);
  }

  release(kind: HoldingKind, holder: Holder, resources: Resources): void {
    if (isEmpty(resources)) return;
    this.#change(kind, holder, resources, subtract);
  }

  agent(agentId: string): Books {
    return this.#agents.get(agentId) ?? EMPTY;
  }

  framework(frameworkId: string): Books {
    return total(this.#frameworks.get(frameworkId));
  }

  /** A framework's books on one agent. */
  frameworkOn(frameworkId: string, agentId: string): Books {
    return this.#frameworks.get(frameworkId)?.get(agentId) ?? EMPTY;
  }

  role(role: string): Books {
    return total(this.#roles.get(role));
  }

  roleOn(role: string, agentId: string): Books {
    return this.#roles.get(role)?.get(agentId) ?? EMPTY;
  }

  /** Every (framework, agent) or (role, agent) pair with books, for the full invariant check. */
  pairs(of: 'framework' | 'role'): [string, string][] {
    const books = of === 'framework' ? this.#frameworks : this.#roles;
    return [...books].flatMap(([key, perAgent]) =>
      [...perAgent.keys()].map((agentId): [string, string] => [key, agentId]),
    );
  }

  /** The frameworks subscribed to a role (set when a framework's roles change). */
  setFrameworkRoles(frameworkId: string, roles: readonly string[]): void {
    for (const [role, members] of this.#roleMembers) {
      if (members.delete(frameworkId) && members.size === 0) this.#roleMembers.delete(role);
    }
    for (const role of roles) {
      let members = this.#roleMembers.get(role);
      if (members === undefined) this.#roleMembers.set(role, (members = new Set()));
      members.add(frameworkId);
    }
  }

  /** Every role with a subscribed framework or with resources, by name. */
  roles(): string[] {
    const names = new Set(this.#roleMembers.keys());
    for (const role of this.#roles.keys()) names.add(role);
    return [...names].sort();
  }

  roleMembers(role: string): string[] {
    return [...(this.#roleMembers.get(role) ?? [])].sort();
  }

  agentIds(): string[] {
    return [...this.#agents.keys()];
  }

  /** The agents whose books changed since the last call, and a fresh set. */
  takeTouched(): ReadonlySet<string> {
    const touched = this.#touched;
    if (touched.size > 0) this.#touched = new Set();
    return touched;
  }

  #change(
    kind: HoldingKind,
    holder: Holder,
    resources: Resources,
    op: (a: Resources, b: Resources) => Resources,
  ): void {
    this.#touched.add(holder.agentId);
    apply(this.#agents, holder.agentId, kind, resources, op);
    applyOn(this.#frameworks, holder.frameworkId, holder.agentId, kind, resources, op);
    for (const [role, bag] of byAllocationRole(resources)) applyOn(this.#roles, role, holder.agentId, kind, bag, op);
  }
}

function applyOn(
  books: Map<string, Map<string, MutableBooks>>,
  key: string,
  agentId: string,
  kind: HoldingKind,
  resources: Resources,
  op: (a: Resources, b: Resources) => Resources,
): void {
  let perAgent = books.get(key);
  if (perAgent === undefined) books.set(key, (perAgent = new Map()));
  apply(perAgent, agentId, kind, resources, op);
  if (perAgent.size === 0) books.delete(key);
}

/**
 * The sum of per-agent books: every bag's entries normalised together,
 * which is what adding the bags one by one gives (entries of one identity
 * merged in agent order, then sorted canonically), in one pass instead of a
 * merge per agent.
 */
function total(perAgent: ReadonlyMap<string, Books> | undefined): Books {
  if (perAgent === undefined) return EMPTY;
  const offered: Resource[] = [];
  const used: Resource[] = [];
  for (const books of perAgent.values()) {
    for (const r of books.offered) offered.push(r);
    for (const r of books.used) used.push(r);
  }
  return { offered: normalise(offered), used: normalise(used) };
}

function apply(
  books: Map<string, MutableBooks>,
  key: string,
  kind: HoldingKind,
  resources: Resources,
  op: (a: Resources, b: Resources) => Resources,
): void {
  let entry = books.get(key);
  if (entry === undefined) books.set(key, (entry = { offered: [], used: [] }));
  entry[kind] = op(entry[kind], resources);
  if (isEmpty(entry.offered) && isEmpty(entry.used)) books.delete(key);
}

function byAllocationRole(resources: Resources): Map<string, Resources> {
  // Most bags are of one allocation role: the bag itself, not a copy, so it stays known as normal.
  const first = resources[0]?.allocationRole;
  if (resources.every((r) => r.allocationRole === first)) return new Map([[first ?? '*', resources]]);
  const out = new Map<string, Resources>();
  for (const r of resources) {
    const role = r.allocationRole ?? '*';
    out.set(role, [...(out.get(role) ?? []), r]);
  }
  return out;
}
