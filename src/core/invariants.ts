/**
 * Resources are conserved. Three sets of books must agree on every agent:
 *
 *   allocator's allocation(agent) = ledger.offered(agent) + ledger.used(agent)
 *   ledger(agent, framework, role) = the sums of the master's records
 *                                    (live offers, tasks holding resources, executors)
 *   allocation(agent) <= total(agent)
 *
 * After each input only the agents it touched are compared (the allocator
 * and the ledger both note them), so the check costs what the input
 * changed, not the size of the cluster. The full check recomputes every
 * book from the records; tests and scenarios run it.
 *
 * Bags are compared as quantities per identity (scalar milli, range and
 * set sizes), which is cheap; the books' own `subtract` already asserts
 * the exact containment of ranges and sets.
 */
import type { Agent } from './agent/agent.js';
import type { Books } from './master/ledger.js';
import type { Master } from './master/master.js';
import { add, format, identityKey, normalise, type Resources } from './model/resources.js';
import { rangesSize } from './model/ranges.js';

export class InvariantError extends Error {
  constructor(
    readonly seed: string,
    readonly timeMs: number,
    detail: string,
  ) {
    super(`invariant violated at ${timeMs} ms (seed '${seed}'): ${detail}`);
    this.name = 'InvariantError';
  }
}

export type CheckScope = 'touched' | 'full';

/**
 * The check of `scope` on the leading master, each agent's total taken as
 * the master that led last knows it (`current`); a broken invariant throws.
 */
export function assertInvariants(
  leader: Master,
  current: Master,
  agents: ReadonlyMap<string, Agent>,
  scope: CheckScope,
  seed: string,
  timeMs: number,
): void {
  const failure = checkAgents(leader, agentTotals(current, agents), scope);
  if (failure !== undefined) throw new InvariantError(seed, timeMs, failure);
}

/**
 * Each agent's total as the master knows it: operations change it on the
 * master first, and the agent follows when their message arrives.
 */
function agentTotals(master: Master, agents: ReadonlyMap<string, Agent>): (agentId: string) => Resources | undefined {
  return (agentId) => {
    const record = master.agents.get(agentId);
    // A gone or unreachable agent is out of the cluster: nothing of it may be held or counted.
    if (record?.state === 'gone' || record?.state === 'unreachable') return [];
    return record?.info.resources ?? agents.get(agentId)?.config.resources;
  };
}

/** Returns a description of the first broken invariant, or undefined. */
export function checkAgents(
  master: Master,
  totalOf: (agentId: string) => Resources | undefined,
  scope: CheckScope,
): string | undefined {
  const touched = union(master.ledger.takeTouched(), master.allocator.takeTouched());
  const agentIds = scope === 'full' ? new Set([...master.allocator.agentIds(), ...master.ledger.agentIds()]) : touched;
  for (const agentId of agentIds) {
    const failure = checkAgent(master, agentId, totalOf(agentId) ?? master.allocator.total(agentId));
    if (failure !== undefined) return failure;
  }
  return scope === 'full' ? checkRecords(master) : undefined;
}

/** Both sets' members, the first's first; one of them as it is when the other is empty (checked after most inputs, which touch nothing). */
function union(first: ReadonlySet<string>, second: ReadonlySet<string>): ReadonlySet<string> {
  if (second.size === 0) return first;
  if (first.size === 0) return second;
  return new Set([...first, ...second]);
}

function checkAgent(master: Master, agentId: string, total: Resources): string | undefined {
  const allocated = [...master.allocator.allocation(agentId).values()];
  const books = master.ledger.agent(agentId);
  if (!sameQuantities(quantities(allocated), quantities([books.offered, books.used]))) {
    return `agent '${agentId}' total {${format(total)}}, allocator holds {${sum(allocated)}}, master accounts {${sum([books.offered, books.used])}}`;
  }
  const totals = quantities([total], true);
  const allocatorTotal = master.allocator.total(agentId);
  if (allocatorTotal !== total && !sameQuantities(totals, quantities([allocatorTotal], true))) {
    return `agent '${agentId}' total {${format(total)}}, allocator's total {${format(allocatorTotal)}}`;
  }
  for (const [key, n] of quantities(allocated, true)) {
    if (n > (totals.get(key) ?? 0))
      return `agent '${agentId}' allocates {${sum(allocated)}} beyond its total {${format(total)}}`;
  }
  return undefined;
}

/** Every book of the ledger equals the sum of the master's records. */
function checkRecords(master: Master): string | undefined {
  const agents = new Map<string, Resources[][]>();
  const frameworks = new Map<string, Resources[][]>();
  const roles = new Map<string, Resources[][]>();
  const put = (books: Map<string, Resources[][]>, key: string, kind: 0 | 1, bag: Resources) => {
    let entry = books.get(key);
    if (entry === undefined) books.set(key, (entry = [[], []]));
    entry[kind]!.push(bag);
  };
  const hold = (frameworkId: string, agentId: string, kind: 0 | 1, bag: Resources) => {
    put(agents, agentId, kind, bag);
    put(frameworks, pairKey(frameworkId, agentId), kind, bag);
    for (const r of bag) put(roles, pairKey(r.allocationRole ?? '*', agentId), kind, [r]);
  };
  for (const fw of master.frameworks.values()) {
    for (const offer of fw.offers.values()) hold(fw.id, offer.agentId, 0, offer.resources);
    for (const task of fw.tasks.values()) if (!task.resourcesRecovered) hold(fw.id, task.agentId, 1, task.resources);
    for (const e of fw.executors.values()) hold(fw.id, e.agentId, 1, e.resources);
  }
  const { ledger } = master;
  const pairs = (of: 'framework' | 'role') => ledger.pairs(of).map(([key, agentId]) => pairKey(key, agentId));
  const onAgent = (read: (key: string, agentId: string) => Books) => (id: string) => {
    const [key = '', agentId = ''] = id.split('\u0000');
    return read(key, agentId);
  };
  return (
    compareBooks('agent', agents, (id) => ledger.agent(id), ledger.agentIds()) ??
    compareBooks(
      'framework',
      frameworks,
      onAgent((f, a) => ledger.frameworkOn(f, a)),
      pairs('framework'),
    ) ??
    compareBooks(
      'role',
      roles,
      onAgent((r, a) => ledger.roleOn(r, a)),
      pairs('role'),
    )
  );
}

function pairKey(key: string, agentId: string): string {
  return `${key}\u0000${agentId}`;
}

function compareBooks(
  what: string,
  records: ReadonlyMap<string, Resources[][]>,
  books: (id: string) => Books,
  bookIds: readonly string[],
): string | undefined {
  for (const id of new Set([...records.keys(), ...bookIds])) {
    const [offered = [], used = []] = records.get(id) ?? [];
    const kept = books(id);
    if (!sameQuantities(quantities(offered), quantities([kept.offered]))) {
      return `${what} '${id.replace('\u0000', "' on '")}': books say offered {${format(kept.offered)}}, records say {${sum(offered)}}`;
    }
    if (!sameQuantities(quantities(used), quantities([kept.used]))) {
      return `${what} '${id.replace('\u0000', "' on '")}': books say used {${format(kept.used)}}, records say {${sum(used)}}`;
    }
  }
  return undefined;
}

function sum(bags: readonly Resources[]): string {
  let out: Resources = [];
  for (const bag of bags) out = add(out, bag);
  return format(normalise(out));
}

/** Quantity per resource identity: scalar milli, number of range values, set size. Read-only. */
function quantities(bags: Iterable<Resources>, ignoreAllocation = false): ReadonlyMap<string, number> {
  let out: Map<string, number> | undefined;
  let only: ReadonlyMap<string, number> | undefined;
  for (const bag of bags) {
    if (bag.length === 0) continue;
    const counted = bagQuantities(bag, ignoreAllocation);
    if (only === undefined && out === undefined) {
      only = counted;
      continue;
    }
    out ??= new Map(only);
    for (const [key, n] of counted) out.set(key, (out.get(key) ?? 0) + n);
  }
  return out ?? only ?? new Map();
}

/** Bags are never changed: each is counted once per way of counting (the books check the same bags again and again). */
const COUNTED = [
  new WeakMap<Resources, ReadonlyMap<string, number>>(),
  new WeakMap<Resources, ReadonlyMap<string, number>>(),
];

function bagQuantities(bag: Resources, ignoreAllocation: boolean): ReadonlyMap<string, number> {
  const cache = COUNTED[ignoreAllocation ? 1 : 0]!;
  let out = cache.get(bag) as Map<string, number> | undefined;
  if (out !== undefined) return out;
  out = new Map<string, number>();
  for (const r of bag) {
    const key = identityKey(r, ignoreAllocation);
    const n =
      r.type === 'SCALAR' ? (r.milli ?? 0) : r.type === 'RANGES' ? rangesSize(r.ranges ?? []) : (r.set?.length ?? 0);
    out.set(key, (out.get(key) ?? 0) + n);
  }
  cache.set(bag, out);
  return out;
}

function sameQuantities(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): boolean {
  for (const [key, n] of a) if (n !== 0 && (b.get(key) ?? 0) !== n) return false;
  for (const [key, n] of b) if (n !== 0 && (a.get(key) ?? 0) !== n) return false;
  return true;
}
