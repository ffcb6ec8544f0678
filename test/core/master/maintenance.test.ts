/**
 * Maintenance in the core: the `schedule_maintenance` fault drains one
 * agent's machine (its offers carry the unavailability, its users get
 * inverse offers), the registry keeps the schedule and the machines' modes
 * across a failover, an agent of a DOWN machine is refused, and a trace
 * with maintenance replays.
 */
import { describe, expect, it } from 'vitest';
import { replay } from '../../../src/scenario/replay.js';
import { commandTask, connect, makeCluster, resources, twoMasters } from '../helpers.js';

const MINUTE = 60_000;

describe('maintenance in the core', () => {
  it('schedule_maintenance drains the machine of one agent: its offers carry the unavailability, its users get inverse offers', () => {
    const cluster = makeCluster({ agents: 2 });
    const s = connect(cluster);
    const [a, b] = cluster.agents.map((x) => x.id) as [string, string];
    cluster.advance(1_000);
    const offer = s.offers().find((o) => o.agentId === a)!;
    s.accept(offer.id, [commandTask('t', a, 'sleep 3600', 'cpus:0.5;mem:32')]);
    s.acknowledgeAll();
    expect(
      cluster.inject({ type: 'schedule_maintenance', agentId: a, startInMs: 10 * MINUTE, durationMs: 60 * MINUTE }),
    ).toEqual({
      ok: true,
      value: { agentId: a },
    });
    const inverse = s.sink.of('INVERSE_OFFERS');
    expect(inverse).toHaveLength(1);
    expect(inverse[0]!.inverseOffers.map((io) => io.agentId)).toEqual([a]);
    const start = cluster.view.maintenanceSchedule().windows[0]!.unavailability;
    expect(start.durationNs).toBe(60 * MINUTE * 1e6);
    cluster.advance(10_000);
    const offers = s.sink.of('OFFERS').flatMap((e) => e.offers);
    const last = (agentId: string) => offers.filter((o) => o.agentId === agentId).at(-1)!;
    expect(last(a).unavailability).toEqual(start);
    expect(last(b).unavailability).toBeUndefined();
    expect(cluster.view.maintenanceStatus().draining).toHaveLength(1);
    cluster.checkAllInvariants();
  });

  it('the registry keeps the schedule and a DOWN machine across a failover; an agent of a DOWN machine is refused', () => {
    const cluster = twoMasters(2);
    const [a] = cluster.agents.map((x) => x.id) as [string, string];
    const machine = { hostname: 'agent1', ip: '127.0.0.1' };
    const schedule = { windows: [{ machines: [machine], unavailability: { startNs: 5 } }] };
    expect(cluster.operator({ type: 'UPDATE_MAINTENANCE_SCHEDULE', schedule }).ok).toBe(true);
    expect(cluster.operator({ type: 'START_MAINTENANCE', machines: [machine] }).ok).toBe(true);
    expect(cluster.view.agent(a)?.state).toBe('gone');
    cluster.inject({ type: 'master_failover' });
    cluster.advance(60_000);
    expect(cluster.view.maintenanceSchedule()).toEqual(schedule);
    expect(cluster.view.maintenanceStatus()).toEqual({ draining: [], down: [machine] });
    // An agent started on the DOWN machine (add_agent takes the first agent's hostname and IP) is refused.
    const refused = cluster.inject({ type: 'add_agent', resources: resources('cpus:1;mem:256'), attributes: [] });
    cluster.advance(10_000);
    const refusedId = refused.ok ? refused.value.agentId! : '';
    expect(cluster.trace.entries().some((e) => e.kind === 'agent:register-refused')).toBe(true);
    expect(cluster.view.agent(refusedId)).toBeUndefined();
    // Once the machine is up, it leaves the schedule and an agent started there registers.
    expect(cluster.operator({ type: 'STOP_MAINTENANCE', machines: [machine] }).ok).toBe(true);
    expect(cluster.view.maintenanceSchedule()).toEqual({ windows: [] });
    const back = cluster.inject({ type: 'add_agent', resources: resources('cpus:1;mem:256'), attributes: [] });
    cluster.advance(10_000);
    expect(cluster.view.agent(back.ok ? back.value.agentId! : '')?.state).toBe('active');
    cluster.checkAllInvariants();
  });

  it('a new unavailability rescinds the inverse offers; a framework that disconnects loses its own and gets new ones back', () => {
    const cluster = makeCluster({ agents: 1 });
    const s = connect(cluster, { failoverTimeoutMs: 3_600_000 });
    const a = cluster.agents[0]!.id;
    cluster.advance(1_000);
    s.accept(s.firstOffer().id, [commandTask('t', a, 'sleep 3600', 'cpus:0.5;mem:32')]);
    s.acknowledgeAll();
    cluster.inject({ type: 'schedule_maintenance', agentId: a, startInMs: 0, durationMs: MINUTE });
    const first = s.sink.of('INVERSE_OFFERS')[0]!.inverseOffers[0]!;
    cluster.inject({ type: 'schedule_maintenance', agentId: a, startInMs: MINUTE, durationMs: MINUTE });
    expect(s.sink.of('RESCIND_INVERSE_OFFER').map((e) => e.inverseOfferId)).toEqual([first.id]);
    const second = s.sink.of('INVERSE_OFFERS')[1]!.inverseOffers[0]!;
    expect(second.unavailability.startNs).toBe(first.unavailability.startNs + MINUTE * 1e6);
    cluster.disconnect(s.connectionId);
    cluster.advance(1_000);
    const again = connect(cluster, { id: s.frameworkId, failoverTimeoutMs: 3_600_000 });
    cluster.advance(1_000);
    expect(again.sink.of('INVERSE_OFFERS').map((e) => e.inverseOffers[0]!.id)).not.toContain(second.id);
    expect(again.sink.of('INVERSE_OFFERS')).toHaveLength(1);
  });

  it('replays a trace with maintenance', async () => {
    const cluster = makeCluster({ agents: 2, seed: 5 });
    const s = connect(cluster);
    const a = cluster.agents[0]!.id;
    cluster.advance(1_000);
    s.accept(s.offers().find((o) => o.agentId === a)!.id, [commandTask('t', a, 'sleep 3600', 'cpus:0.5;mem:32')]);
    s.acknowledgeAll();
    cluster.inject({ type: 'schedule_maintenance', agentId: a, startInMs: 0, durationMs: MINUTE });
    const io = s.sink.of('INVERSE_OFFERS')[0]!.inverseOffers[0]!;
    s.call({ type: 'DECLINE_INVERSE_OFFERS', offerIds: [io.id], filters: { refuseMs: 20_000 } });
    cluster.advance(30_000);
    expect(s.sink.of('INVERSE_OFFERS')).toHaveLength(2);
    const entries = cluster.trace.entries();
    const result = await replay(entries.map((e) => ({ seq: e.seq, timeMs: e.timeMs, kind: e.kind, line: e.line })));
    expect(result.divergence).toBeUndefined();
    expect(result.hash).toBe(cluster.trace.hash());
  });
});
