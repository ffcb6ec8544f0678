/**
 * The allocator under random sequences of what a master does to it:
 * frameworks added, offers accepted in part or declined with filters,
 * resources in use freed, suppress and revive, quota and weight updates,
 * agents added and removed, time passing. After every step:
 *
 *   - resources are conserved: per agent, free + allocated = total
 *   - the allocator's allocation is what the model holds (offers + in use)
 *   - no range value or set item is in two outstanding offers of one agent
 *   - no role's consumption passes its limit, except after a forced update
 *     set the limit below it or a new agent brought reservations of the
 *     role (then it must not grow until under again)
 *   - consumption = unreserved allocated + reservations, recomputed
 *   - suppressed roles get no offers; filtered resources are not offered
 *     to the framework before expiry; reserved resources go only to their role
 *
 * fast-check prints the seed and the shrunk command list on failure.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OfferDecision } from '../../../src/core/allocator/allocator.js';
import {
  allocate as withAllocationRole,
  contains,
  overlap,
  subtract,
  type Resource,
  type Resources,
} from '../../../src/core/model/resources.js';
import { rangesSize } from '../../../src/core/model/ranges.js';
import { AllocatorHarness, bag, type HeldOffer } from './helpers.js';

const ROLES = ['a', 'b', 'a/x', 'c'];
const AGENTS = [
  'cpus:4;mem:1024;ports:[1-100]',
  'cpus:2;cpus(a):2;mem:512;ports:[1-50]',
  'cpus:1;mem(b):256;mem:256;disk:100',
];

type Cmd =
  | { k: 'framework'; role: number; suppressed: boolean }
  | { k: 'agent'; kind: number }
  | { k: 'remove-agent'; pick: number }
  | { k: 'allocate' }
  | { k: 'accept'; pick: number; refuseS: number }
  | { k: 'decline'; pick: number; refuseS: number }
  | { k: 'finish'; pick: number }
  | { k: 'suppress'; fw: number }
  | { k: 'revive'; fw: number }
  | { k: 'quota'; role: number; cpus: number; force: boolean }
  | { k: 'weights'; role: number; weight: number }
  | { k: 'advance'; ms: number };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  fc.record({ k: fc.constant('framework' as const), role: fc.nat(ROLES.length - 1), suppressed: fc.boolean() }),
  fc.record({ k: fc.constant('agent' as const), kind: fc.nat(AGENTS.length - 1) }),
  fc.record({ k: fc.constant('remove-agent' as const), pick: fc.nat(20) }),
  fc.record({ k: fc.constant('allocate' as const) }),
  fc.record({ k: fc.constant('accept' as const), pick: fc.nat(20), refuseS: fc.constantFrom(0, 5, 100) }),
  fc.record({ k: fc.constant('decline' as const), pick: fc.nat(20), refuseS: fc.constantFrom(0, 5, 100) }),
  fc.record({ k: fc.constant('finish' as const), pick: fc.nat(20) }),
  fc.record({ k: fc.constant('suppress' as const), fw: fc.nat(8) }),
  fc.record({ k: fc.constant('revive' as const), fw: fc.nat(8) }),
  fc.record({ k: fc.constant('quota' as const), role: fc.nat(2), cpus: fc.nat(12), force: fc.boolean() }),
  fc.record({
    k: fc.constant('weights' as const),
    role: fc.nat(ROLES.length - 1),
    weight: fc.constantFrom(0.5, 1, 2, 3),
  }),
  fc.record({ k: fc.constant('advance' as const), ms: fc.constantFrom(0, 500, 1000, 5000, 20_000) }),
);

interface Filter {
  readonly frameworkId: string;
  readonly role: string;
  readonly agentId: string;
  readonly resources: Resources;
  readonly untilMs: number;
}

class Model {
  readonly h: AllocatorHarness;
  readonly frameworks: { id: string; role: string; suppressed: boolean }[] = [];
  readonly agents = new Map<string, Resources>();
  readonly limits = new Map<string, number>();
  /** Roles whose limit was forced below consumption: consumption must not grow there. */
  readonly forced = new Map<string, number>();
  filters: Filter[] = [];
  #agentSeq = 0;

  constructor(seed: number) {
    this.h = new AllocatorHarness(String(seed));
    this.h.onDecision = (d) => this.#checkDecision(d);
  }

  apply(c: Cmd): void {
    const { h } = this;
    const a = h.allocator;
    switch (c.k) {
      case 'framework': {
        const id = `f${this.frameworks.length}`;
        const role = ROLES[c.role]!;
        this.frameworks.push({ id, role, suppressed: c.suppressed });
        a.addFramework(id, { roles: [role], suppressedRoles: c.suppressed ? [role] : [] });
        break;
      }
      case 'agent': {
        const id = `ag${this.#agentSeq++}`;
        this.agents.set(id, bag(AGENTS[c.kind]!));
        a.addAgent(id, bag(AGENTS[c.kind]!), { hostname: id, attributes: [] });
        // Reservations of a new agent count at once, whatever the limit.
        for (const [role, limit] of this.limits) {
          const consumed = a.quotaConsumption(role).get('cpus') ?? 0;
          if (consumed > limit) this.forced.set(role, consumed);
        }
        break;
      }
      case 'remove-agent': {
        const ids = [...this.agents.keys()];
        if (ids.length === 0) return;
        const id = ids[c.pick % ids.length]!;
        for (const o of h.offers.filter((x) => x.agentId === id)) h.offers.splice(h.offers.indexOf(o), 1);
        for (const u of h.used.filter((x) => x.agentId === id)) h.used.splice(h.used.indexOf(u), 1);
        a.removeAgent(id);
        this.agents.delete(id);
        this.filters = this.filters.filter((f) => f.agentId !== id);
        break;
      }
      case 'allocate':
        h.allocate();
        break;
      case 'accept':
      case 'decline': {
        const offer = h.offers[c.pick % Math.max(1, h.offers.length)];
        if (offer === undefined) return;
        const refuseMs = c.refuseS * 1000;
        const part = c.k === 'accept' ? withAllocationRole(half(offer.resources), offer.role) : [];
        const rest = c.k === 'accept' ? subtract(offer.resources, part) : offer.resources;
        if (c.k === 'accept') h.accept(offer, part, refuseMs);
        else h.decline(offer, refuseMs);
        if (refuseMs > 0 && rest.length > 0) this.#filter(offer, rest, refuseMs);
        break;
      }
      case 'finish': {
        const used = h.used[c.pick % Math.max(1, h.used.length)];
        if (used !== undefined) h.finish(used);
        break;
      }
      case 'suppress':
      case 'revive': {
        const fw = this.frameworks[c.fw % Math.max(1, this.frameworks.length)];
        if (fw === undefined) return;
        fw.suppressed = c.k === 'suppress';
        if (c.k === 'suppress') a.suppress(fw.id, [fw.role]);
        else {
          a.revive(fw.id, [fw.role]);
          this.filters = this.filters.filter((f) => f.frameworkId !== fw.id);
        }
        break;
      }
      case 'quota':
        this.#quota(ROLES[c.role]!, c.cpus * 1000, c.force);
        break;
      case 'weights':
        a.setWeights(new Map([[ROLES[c.role]!, c.weight]]));
        break;
      case 'advance':
        h.advance(c.ms);
        break;
    }
    h.settle();
  }

  /** As the master will: deny a limit below consumption unless forced. */
  #quota(role: string, cpus: number, force: boolean): void {
    const consumed = this.h.allocator.quotaConsumption(role).get('cpus') ?? 0;
    if (consumed > cpus && !force) return;
    if (consumed > cpus) this.forced.set(role, consumed);
    else this.forced.delete(role);
    this.limits.set(role, cpus);
    this.h.allocator.setQuota(role, { limits: new Map([['cpus', cpus]]), guarantees: new Map() });
  }

  #filter(offer: HeldOffer, rest: Resources, refuseMs: number): void {
    const untagged = withAllocationRole(rest, undefined);
    this.filters.push({
      frameworkId: offer.frameworkId,
      role: offer.role,
      agentId: offer.agentId,
      resources: untagged,
      untilMs: this.h.loop.now() + refuseMs,
    });
  }

  #checkDecision(d: OfferDecision): void {
    const fw = this.frameworks.find((f) => f.id === d.frameworkId)!;
    expect(fw.suppressed, `offer to suppressed ${d.frameworkId}`).toBe(false);
    expect(d.role).toBe(fw.role);
    const now = this.h.loop.now();
    for (const f of this.filters) {
      if (f.frameworkId === d.frameworkId && f.agentId === d.agentId && f.role === d.role && f.untilMs > now) {
        expect(contains(f.resources, d.resources), `filtered resources re-offered at ${now} ms`).toBe(false);
      }
    }
    for (const r of d.resources) {
      if (r.role !== '*')
        expect(d.role === r.role || d.role.startsWith(`${r.role}/`), `reserved ${r.role} to ${d.role}`).toBe(true);
    }
  }

  check(): void {
    const a = this.h.allocator;
    for (const [id, total] of this.agents) {
      const allocated = [...a.allocation(id).values()];
      expect(quantities([a.available(id), ...allocated.map((b) => withAllocationRole(b, undefined))])).toEqual(
        quantities([total]),
      );
      const held = [...this.h.offers, ...this.h.used].filter((o) => o.agentId === id).map((o) => o.resources);
      expect(quantities(allocated, true)).toEqual(quantities(held, true));
      const offers = this.h.offers.filter((o) => o.agentId === id);
      for (let i = 0; i < offers.length; i++) {
        for (let j = i + 1; j < offers.length; j++)
          expect(overlap(offers[i]!.resources, offers[j]!.resources)).toBeUndefined();
      }
    }
    for (const role of ['a', 'b', 'c']) {
      const consumed = a.quotaConsumption(role).get('cpus') ?? 0;
      expect(consumed, `consumption of ${role}`).toBe(this.#consumption(role));
      const limit = this.limits.get(role);
      const forced = this.forced.get(role);
      if (forced !== undefined && consumed <= (limit ?? Infinity)) this.forced.delete(role);
      else if (forced !== undefined) {
        expect(consumed, `forced ${role} grew`).toBeLessThanOrEqual(forced);
        this.forced.set(role, consumed);
      } else if (limit !== undefined) expect(consumed, `${role} above its limit`).toBeLessThanOrEqual(limit);
    }
  }

  /** Unreserved cpus allocated to the role's tree, plus cpus reserved to it. */
  #consumption(role: string): number {
    const inTree = (r: string) => r === role || r.startsWith(`${role}/`);
    let milli = 0;
    for (const o of [...this.h.offers, ...this.h.used]) {
      for (const r of o.resources) if (r.name === 'cpus' && r.role === '*' && inTree(o.role)) milli += r.milli ?? 0;
    }
    for (const total of this.agents.values())
      for (const r of total) if (r.name === 'cpus' && r.role !== '*' && inTree(r.role)) milli += r.milli ?? 0;
    return milli;
  }
}

/** Half of each scalar (whole milli), the first half of each range. */
function half(resources: Resources): Resources {
  const out: Resource[] = [];
  for (const r of resources) {
    if (r.type === 'SCALAR' && (r.milli ?? 0) >= 2) out.push({ ...r, milli: Math.floor((r.milli ?? 0) / 2) });
    if (r.type === 'RANGES' && r.ranges !== undefined && r.ranges.length > 0) {
      const [lo, hi] = r.ranges[0]!;
      out.push({ ...r, ranges: [[lo, lo + Math.floor((hi - lo) / 2)]] });
    }
  }
  return withAllocationRole(out, undefined);
}

function quantities(bags: readonly Resources[], withAllocation = false): Record<string, number> {
  const out: Record<string, number> = {};
  for (const b of bags) {
    for (const r of b) {
      const key = `${r.name}(${r.role})${withAllocation ? (r.allocationRole ?? '') : ''}`;
      const n =
        r.type === 'SCALAR' ? (r.milli ?? 0) : r.type === 'RANGES' ? rangesSize(r.ranges ?? []) : (r.set?.length ?? 0);
      if (n !== 0) out[key] = (out[key] ?? 0) + n;
    }
  }
  return out;
}

describe('allocator properties', () => {
  it('hold after every step of random sequences', () => {
    const seed = Number(process.env.FC_SEED ?? Date.now() % 1_000_000);
    console.log(`allocator properties: fast-check seed ${seed}`);
    fc.assert(
      fc.property(fc.array(cmd, { minLength: 1, maxLength: 80 }), (cmds) => {
        const model = new Model(seed);
        for (let i = 0; i < 4; i++) model.apply({ k: 'agent', kind: i % AGENTS.length });
        for (const c of cmds) {
          model.apply(c);
          model.check();
        }
      }),
      { seed, numRuns: 150 },
    );
  });
});
