/**
 * The faults that change which agents a cluster has: `add_agent` boots one
 * that registers and is offered like the others, `remove_agent` has the
 * master mark one gone (its tasks lost, or gone by operator for partition-
 * aware frameworks). The books balance after each, and a trace with them
 * replays byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { replay } from '../../../src/scenario/replay.js';
import { commandTask, connect, makeCluster, resources } from '../helpers.js';

describe('agents added and removed by faults', () => {
  it('adds an agent with the resources and attributes given, the rest of it the first agent’s', () => {
    const cluster = makeCluster({ agents: 2 });
    const s = connect(cluster);
    const outcome = cluster.inject({
      type: 'add_agent',
      resources: resources('cpus:8;mem:512'),
      attributes: [{ name: 'rack', type: 'TEXT', text: 'new' }],
    });
    expect(outcome.ok).toBe(true);
    const id = outcome.ok ? outcome.value.agentId! : '';
    const config = cluster.view.agentNode(id)!.config;
    expect(config).toMatchObject({ hostname: 'agent1', port: 5053, attributes: [{ name: 'rack', text: 'new' }] });
    expect([...cluster.view.agents()].map((a) => a.id)).toContain(id);
    cluster.advance(1_000);
    expect(s.offers().map((o) => o.agentId)).toContain(id);
    cluster.checkAllInvariants();
  });

  it('removes an agent for good: its tasks end, it is offered no more, it never comes back', () => {
    const cluster = makeCluster({ agents: 2 });
    const plain = connect(cluster, { name: 'plain' });
    const aware = connect(cluster, { name: 'aware', capabilities: ['PARTITION_AWARE'] });
    const agentId = cluster.agents[0]!.id;
    for (const [s, task] of [
      [plain, 'p'],
      [aware, 'a'],
    ] as const) {
      cluster.advance(1_000);
      const offer = s.offers().find((o) => o.agentId === agentId)!;
      s.accept(offer.id, [commandTask(task, agentId, 'sleep 3600', 'cpus:0.5;mem:32')]);
      s.acknowledgeAll();
    }
    expect(cluster.inject({ type: 'remove_agent', agentId })).toEqual({ ok: true, value: { agentId } });
    expect(plain.states('p').at(-1)).toBe('TASK_LOST');
    expect(aware.states('a').at(-1)).toBe('TASK_GONE_BY_OPERATOR');
    cluster.advance(120_000);
    expect([...cluster.view.agents()].map((a) => a.id)).toEqual([cluster.agents[1]!.id]);
    expect(plain.offers().every((o) => o.agentId !== agentId)).toBe(true);
    cluster.checkAllInvariants();
    // Gone is for good; an unknown agent changes nothing.
    expect(cluster.inject({ type: 'remove_agent', agentId: 'nobody' })).toMatchObject({ ok: false });
  });

  it('replays a trace with agents added and removed', async () => {
    const cluster = makeCluster({ agents: 1, seed: 5 });
    const s = connect(cluster);
    const added = cluster.inject({ type: 'add_agent', resources: resources('cpus:2;mem:256'), attributes: [] });
    cluster.advance(2_000);
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('t', offer.agentId, 'sleep 3600', 'cpus:0.5;mem:32')]);
    s.acknowledgeAll();
    cluster.inject({ type: 'remove_agent', agentId: added.ok ? added.value.agentId! : '' });
    cluster.advance(30_000);
    const entries = cluster.trace.entries();
    const result = await replay(entries.map((e) => ({ seq: e.seq, timeMs: e.timeMs, kind: e.kind, line: e.line })));
    expect(result.divergence).toBeUndefined();
    expect(result.hash).toBe(cluster.trace.hash());
  });
});
