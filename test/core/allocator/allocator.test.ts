import { describe, expect, it } from 'vitest';
import { allocate as withAllocationRole } from '../../../src/core/model/resources.js';
import { AllocatorHarness, bag, scalars } from './helpers.js';

const AGENT = 'cpus:4;mem:8192;disk:16384;ports:[31000-32000]';
const facts = (i: number) => ({ hostname: `h${i}`, attributes: [] });

function withAgents(n: number, text = AGENT, seed = 'test'): AllocatorHarness {
  const h = new AllocatorHarness(seed);
  for (let i = 0; i < n; i++) h.allocator.addAgent(`a${String(i).padStart(3, '0')}`, bag(text), facts(i));
  return h;
}

function countByFramework(h: AllocatorHarness): Record<string, number> {
  const out: Record<string, number> = {};
  for (const o of h.offers) out[o.frameworkId] = (out[o.frameworkId] ?? 0) + 1;
  return out;
}

describe('allocator: weighted DRF', () => {
  it('two frameworks in roles weighted 1 and 3 share 40 agents 10 / 30', () => {
    const h = withAgents(40);
    h.allocator.setWeights(new Map([['heavy', 3]]));
    h.allocator.addFramework('f1', { roles: ['light'], suppressedRoles: [] });
    h.allocator.addFramework('f2', { roles: ['heavy'], suppressedRoles: [] });
    h.allocate();
    expect(countByFramework(h)).toEqual({ f1: 10, f2: 30 });
    expect(h.allocator.weight('heavy')).toBe(3);
    expect(h.allocator.weight('light')).toBe(1);
  });

  it('three frameworks in roles weighted 1, 2 and 3 share 60 agents 10 / 20 / 30', () => {
    const h = withAgents(60);
    h.allocator.setWeights(
      new Map([
        ['b', 2],
        ['c', 3],
      ]),
    );
    for (const [id, role] of [
      ['f1', 'a'],
      ['f2', 'b'],
      ['f3', 'c'],
    ] as const)
      h.allocator.addFramework(id, { roles: [role], suppressedRoles: [] });
    h.allocate();
    expect(countByFramework(h)).toEqual({ f1: 10, f2: 20, f3: 30 });
  });

  it('frameworks of one role share by dominant resource: a cpu-heavy holder waits for a mem-light one', () => {
    // Two kinds of agent: cpus:4;mem:1024 and cpus:1;mem:8192. f1 already holds a cpu-heavy
    // agent (dominant share cpus 4/10), f2 a mem-heavy one (mem 8192/18432 = 0.44): f1 is served first.
    const h = new AllocatorHarness();
    h.allocator.addAgent('c1', bag('cpus:4;mem:1024'), facts(1));
    h.allocator.addAgent('m1', bag('cpus:1;mem:8192'), facts(2));
    h.allocator.addFramework('f1', { roles: ['r'], suppressedRoles: [] });
    h.allocate();
    h.allocator.addFramework('f2', { roles: ['r'], suppressedRoles: [] });
    const [first] = h.offers;
    expect(h.offers.map((o) => o.frameworkId)).toEqual(['f1', 'f1']);
    h.decline(h.offers.find((o) => o.agentId === 'm1')!);
    h.allocate();
    expect(h.offersOf('f2').map((o) => o.agentId)).toEqual(['m1']);
    h.allocator.addAgent('c2', bag('cpus:4;mem:1024'), facts(3));
    h.allocator.addAgent('m2', bag('cpus:1;mem:8192'), facts(4));
    h.allocate();
    // Shares now: f1 cpus 4/10 = 0.4, f2 mem 8192/18432 = 0.44: f1 gets the first agent visited.
    expect(first?.agentId).toBe('c1');
    const after = h.offers.filter((o) => o.agentId === 'c2' || o.agentId === 'm2');
    expect(after).toHaveLength(2);
    expect(new Set(after.map((o) => o.frameworkId))).toEqual(new Set(['f1', 'f2']));
  });
});

describe('allocator: quota limits', () => {
  it('cuts unreserved scalars to the headroom and never lets consumption pass the limit', () => {
    const h = withAgents(3, 'cpus:4;mem:1024');
    h.allocator.setQuota('q', { limits: new Map([['cpus', 6000]]), guarantees: new Map() });
    h.allocator.addFramework('f', { roles: ['q'], suppressedRoles: [] });
    h.allocate();
    const cpus = h.offers.map((o) => scalars(o.resources).cpus ?? 0).sort();
    expect(cpus).toEqual([0, 2000, 4000]);
    // Mem is not limited: every agent's mem is offered whole.
    expect(h.offers.every((o) => scalars(o.resources).mem === 1_024_000)).toBe(true);
    expect(h.allocator.quotaConsumption('q').get('cpus')).toBe(6000);
  });

  it('offers again once consumption falls, and a limit on a parent covers its children', () => {
    const h = withAgents(2, 'cpus:4;mem:16');
    h.allocator.setQuota('team', { limits: new Map([['cpus', 4000]]), guarantees: new Map() });
    h.allocator.addFramework('f', { roles: ['team/dev'], suppressedRoles: [] });
    h.allocate();
    expect(h.offers).toHaveLength(1);
    expect(h.allocator.quotaConsumption('team').get('cpus')).toBe(4000);
    expect(h.allocator.quotaConsumption('team/dev').get('cpus')).toBe(4000);
    const [offer] = h.offers;
    h.accept(offer!, withAllocationRole(bag('cpus:1'), 'team/dev'));
    h.advance(1000);
    // The 3 cpus declined come back; the other agent's 4 cpus are cut to the same 3.
    expect(h.offers).toHaveLength(1);
    expect(scalars(h.offers[0]!.resources).cpus).toBe(3000);
    expect(h.allocator.quotaConsumption('team').get('cpus')).toBe(4000);
  });

  it('counts unallocated reservations as consumption, and offering them adds nothing', () => {
    const h = withAgents(1, 'cpus:2;cpus(q):2;mem:64');
    h.allocator.setQuota('q', { limits: new Map([['cpus', 3000]]), guarantees: new Map() });
    expect(h.allocator.quotaConsumption('q').get('cpus')).toBe(2000);
    h.allocator.addFramework('f', { roles: ['q'], suppressedRoles: [] });
    h.allocate();
    expect(h.offers).toHaveLength(1);
    const offered = h.offers[0]!.resources;
    expect(offered.filter((r) => r.name === 'cpus').map((r) => [r.role, r.milli])).toEqual([
      ['*', 1000],
      ['q', 2000],
    ]);
    expect(h.allocator.quotaConsumption('q').get('cpus')).toBe(3000);
  });

  it('gives a role below its guarantee first pick', () => {
    const h = withAgents(1);
    h.allocator.addFramework('f1', { roles: ['a'], suppressedRoles: [] });
    h.allocator.addFramework('f2', { roles: ['z'], suppressedRoles: [] });
    h.allocator.setQuota('z', { limits: new Map(), guarantees: new Map([['cpus', 1000]]) });
    h.allocate();
    expect(h.offers.map((o) => o.frameworkId)).toEqual(['f2']);
  });
});

describe('allocator: suppression, filters, reservations', () => {
  it('offers nothing to a suppressed role, and offers at once on revive', () => {
    const h = withAgents(2);
    h.allocator.addFramework('f', { roles: ['r'], suppressedRoles: ['r'] });
    h.allocate();
    expect(h.offers).toHaveLength(0);
    h.allocator.revive('f', ['r']);
    h.settle();
    expect(h.offers).toHaveLength(2);
  });

  it('does not re-offer filtered resources before expiry; revive clears the filter', () => {
    const h = withAgents(1);
    h.allocator.addFramework('f', { roles: ['r'], suppressedRoles: [] });
    h.allocate();
    h.decline(h.offers[0]!, 5000);
    h.advance(4999);
    expect(h.offers).toHaveLength(0);
    h.advance(1);
    expect(h.offers).toHaveLength(1);
    h.decline(h.offers[0]!, 60_000);
    h.advance(2000);
    expect(h.offers).toHaveLength(0);
    h.allocator.revive('f', []);
    h.settle();
    expect(h.offers).toHaveLength(1);
  });

  it('a filter refuses only what it contains: more free resources are offered again', () => {
    const h = withAgents(1);
    h.allocator.addFramework('f', { roles: ['r'], suppressedRoles: [] });
    h.allocate();
    const offer = h.offers[0]!;
    h.accept(offer, withAllocationRole(bag('cpus:1;mem:128'), 'r'), 60_000);
    h.advance(1000);
    expect(h.offers).toHaveLength(0);
    h.finish(h.used[0]!);
    h.advance(1000);
    expect(h.offers).toHaveLength(1);
  });

  it('skips frameworks that filtered the agent and offers to the next in order', () => {
    const h = withAgents(1);
    for (let i = 0; i < 50; i++)
      h.allocator.addFramework(`f${String(i).padStart(2, '0')}`, { roles: ['r'], suppressedRoles: [] });
    for (let i = 0; i < 49; i++) {
      h.allocate();
      h.decline(h.offers[0]!, 3_600_000);
    }
    h.allocate();
    expect(h.offers.map((o) => o.frameworkId)).toEqual(['f49']);
    h.decline(h.offers[0]!, 3_600_000);
    expect(h.allocate()).toEqual([]);
  });

  it('offers reserved resources only to their role and its sub-roles', () => {
    const h = withAgents(1, 'cpus(web):2;mem(web):256;cpus:1;mem:128');
    h.allocator.addFramework('other', { roles: ['batch'], suppressedRoles: [] });
    h.allocate();
    expect(h.offers).toHaveLength(1);
    expect(h.offers[0]!.resources.every((r) => r.role === '*')).toBe(true);
    h.allocator.addFramework('sub', { roles: ['web/frontend'], suppressedRoles: [] });
    h.allocate();
    const sub = h.offersOf('sub');
    expect(sub).toHaveLength(1);
    expect(sub[0]!.resources.every((r) => r.role === 'web')).toBe(true);
  });
});

describe('allocator: agents', () => {
  it('updateAgentTotal moves free resources and reservation consumption, keeping what is allocated', () => {
    const h = withAgents(1, 'cpus:4;mem:1024');
    h.allocator.addFramework('f', { roles: ['r'], suppressedRoles: [] });
    h.allocate();
    h.accept(h.offers[0]!, withAllocationRole(bag('cpus:1;mem:256'), 'r'));
    h.allocator.updateAgentTotal('a000', bag('cpus:1;cpus(q):3;mem:512;mem(q):512'));
    expect(h.allocator.quotaConsumption('q')).toEqual(
      new Map([
        ['cpus', 3000],
        ['mem', 512_000],
      ]),
    );
    expect(scalars(h.allocator.available('a000'))).toEqual({ mem: 768_000, cpus: 3000 });
    // Only a framework of 'q' may have the reserved part.
    h.advance(1000);
    expect(
      h
        .offersOf('f')
        .flatMap((o) => o.resources)
        .every((r) => r.role === '*'),
    ).toBe(true);
    h.allocator.addFramework('g', { roles: ['q'], suppressedRoles: [] });
    h.settle();
    expect(
      h
        .offersOf('g')
        .flatMap((o) => o.resources)
        .some((r) => r.role === 'q'),
    ).toBe(true);
    expect(() => h.allocator.updateAgentTotal('a000', bag('cpus:0.5;mem:64'))).toThrow();
  });

  it('removeAgent takes its allocations out of the books', () => {
    const h = withAgents(2, 'cpus:4;mem:1024');
    h.allocator.setQuota('r', { limits: new Map([['cpus', 100_000]]), guarantees: new Map() });
    h.allocator.addFramework('f', { roles: ['r'], suppressedRoles: [] });
    h.allocate();
    expect(h.allocator.quotaConsumption('r').get('cpus')).toBe(8000);
    h.allocator.removeAgent('a000');
    expect(h.allocator.quotaConsumption('r').get('cpus')).toBe(4000);
    expect(h.allocator.agentIds()).toEqual(['a001']);
  });

  it('a pass with nothing changed offers nothing and draws nothing', () => {
    const h = withAgents(20);
    h.allocator.addFramework('f', { roles: ['r'], suppressedRoles: [] });
    expect(h.allocate()).toHaveLength(20);
    expect(h.allocate()).toEqual([]);
    h.allocator.addFramework('g', { roles: ['r'], suppressedRoles: [] });
    expect(h.allocate()).toEqual([]);
  });
});
