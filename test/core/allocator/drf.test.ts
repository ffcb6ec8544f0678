/**
 * Dominant resource fairness with role weights: known results for two and
 * three frameworks. Agents join one by one after the frameworks have
 * subscribed, so each one goes, whole, to the role with the lowest
 * weighted share at that moment (offered resources count as allocated).
 */
import { describe, expect, it } from 'vitest';
import { AGENT_RESOURCES, connect, makeCluster, resources, type TestCluster, type TestScheduler } from '../helpers.js';

function addAgents(cluster: TestCluster, n: number): void {
  for (let i = 0; i < n; i++) {
    cluster.addAgent({
      hostname: `agent${i + 1}`,
      ip: '127.0.0.1',
      port: 5051 + i,
      resources: resources(AGENT_RESOURCES),
      attributes: [],
    });
  }
}

function offered(...schedulers: TestScheduler[]): number[] {
  return schedulers.map((s) => s.offers().length);
}

describe('weighted DRF', () => {
  it('two roles weighted 1 and 3 share eight agents 2 : 6', () => {
    const cluster = makeCluster({ agents: 0, weights: new Map([['b', 3]]) });
    const a = connect(cluster, { name: 'a', roles: ['a'], capabilities: ['MULTI_ROLE'] });
    const b = connect(cluster, { name: 'b', roles: ['b'], capabilities: ['MULTI_ROLE'] });
    addAgents(cluster, 8);
    expect(offered(a, b)).toEqual([2, 6]);
  });

  it('three roles weighted 1, 2 and 1 share eight agents 2 : 4 : 2', () => {
    const cluster = makeCluster({ agents: 0 });
    expect(cluster.updateWeights([{ role: 'b', weight: 2 }]).ok).toBe(true);
    const a = connect(cluster, { name: 'a', roles: ['a'], capabilities: ['MULTI_ROLE'] });
    const b = connect(cluster, { name: 'b', roles: ['b'], capabilities: ['MULTI_ROLE'] });
    const c = connect(cluster, { name: 'c', roles: ['c'], capabilities: ['MULTI_ROLE'] });
    addAgents(cluster, 8);
    expect(offered(a, b, c)).toEqual([2, 4, 2]);
  });

  it('without weights, two frameworks of one role share equally', () => {
    const cluster = makeCluster({ agents: 0 });
    const a = connect(cluster, { name: 'a', roles: ['r'], capabilities: ['MULTI_ROLE'] });
    const b = connect(cluster, { name: 'b', roles: ['r'], capabilities: ['MULTI_ROLE'] });
    addAgents(cluster, 6);
    expect(offered(a, b)).toEqual([3, 3]);
  });

  it('a quota limit stops a role at its limit while the other takes the rest', () => {
    const cluster = makeCluster({ agents: 0 });
    expect(
      cluster.updateQuota({
        force: true,
        configs: [{ role: 'a', limits: new Map([['cpus', 8]]), guarantees: new Map() }],
      }).ok,
    ).toBe(true);
    const a = connect(cluster, { name: 'a', roles: ['a'], capabilities: ['MULTI_ROLE'] });
    const b = connect(cluster, { name: 'b', roles: ['b'], capabilities: ['MULTI_ROLE'] });
    addAgents(cluster, 6);
    const cpus = (s: TestScheduler) =>
      s.offers().reduce((n, o) => n + (o.resources.find((r) => r.name === 'cpus')?.milli ?? 0), 0) / 1000;
    expect(cpus(a)).toBeLessThanOrEqual(8);
    expect(cpus(a) + cpus(b)).toBe(24);
  });
});
