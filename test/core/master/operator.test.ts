/**
 * Operator calls and the operator event feed in the core: what each call
 * does to frameworks, agents and tasks, what it refuses, and the events the
 * feed sends from the master's one place for each change.
 */
import { describe, expect, it } from 'vitest';
import { commandTask, connect, makeCluster, OperatorSink } from '../helpers.js';

describe('operator calls in the core', () => {
  it('TEARDOWN removes a registered framework and refuses an unknown or removed one', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    expect(cluster.operator({ type: 'TEARDOWN', frameworkId: s.frameworkId })).toEqual({ ok: true, value: undefined });
    expect(cluster.view.framework(s.frameworkId)).toBeUndefined();
    expect(s.sink.closed).toBe(true);
    expect(cluster.operator({ type: 'TEARDOWN', frameworkId: s.frameworkId })).toEqual({
      ok: false,
      error: { code: 'INVALID', message: 'No framework found with specified ID' },
    });
  });

  it('MARK_AGENT_GONE: TASK_GONE_BY_OPERATOR for PARTITION_AWARE frameworks, TASK_LOST for others; the agent is never offered or heard again', () => {
    const cluster = makeCluster({ agents: 2 });
    const aware = connect(cluster, { name: 'aware', capabilities: ['PARTITION_AWARE'] });
    const plain = connect(cluster, { name: 'plain' });
    const agentId = cluster.agents[0]!.id;
    const launchOn = (s: typeof aware, taskId: string) => {
      const offer = s.offers().find((o) => o.agentId === agentId)!;
      s.accept(offer.id, [commandTask(taskId, agentId, 'sleep 100')]);
      s.acknowledgeAll();
    };
    launchOn(aware, 'a-1');
    cluster.advance(2_000);
    launchOn(plain, 'p-1');
    expect(cluster.operator({ type: 'MARK_AGENT_GONE', agentId }).ok).toBe(true);
    expect(aware.sink.updates().at(-1)).toMatchObject({
      taskId: 'a-1',
      state: 'TASK_GONE_BY_OPERATOR',
      reason: 'REASON_AGENT_REMOVED_BY_OPERATOR',
    });
    expect(plain.sink.updates().at(-1)).toMatchObject({
      taskId: 'p-1',
      state: 'TASK_LOST',
      reason: 'REASON_AGENT_REMOVED_BY_OPERATOR',
    });
    expect(aware.sink.of('FAILURE')).toContainEqual({ type: 'FAILURE', agentId });
    expect([...cluster.view.agents()].map((a) => a.id)).toEqual([cluster.agents[1]!.id]);
    expect(cluster.view.agentBooks(agentId)).toEqual({ offered: [], used: [] });
    cluster.advance(60_000);
    expect([...aware.offers(), ...plain.offers()].filter((o) => o.agentId === agentId)).toEqual([]);
    // Restarted, it re-registers; the master does not take it back.
    cluster.crashAgent(agentId);
    cluster.restartAgent(agentId);
    cluster.advance(30_000);
    expect([...cluster.view.agents()].map((a) => a.id)).not.toContain(agentId);
    expect(cluster.operator({ type: 'MARK_AGENT_GONE', agentId }).ok).toBe(true);
    expect(cluster.operator({ type: 'MARK_AGENT_GONE', agentId: 'nope' })).toEqual({
      ok: false,
      error: { code: 'NOT_FOUND', message: "Agent 'nope' not found" },
    });
    cluster.checkAllInvariants();
  });

  it('DEACTIVATE_AGENT stays across a reconnection; REACTIVATE_AGENT offers again', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const agentId = cluster.agents[0]!.id;
    const offerId = s.firstOffer().id;
    expect(cluster.operator({ type: 'DEACTIVATE_AGENT', agentId }).ok).toBe(true);
    expect(s.sink.of('RESCIND')).toEqual([{ type: 'RESCIND', offerId }]);
    cluster.crashAgent(agentId);
    cluster.restartAgent(agentId);
    cluster.advance(30_000);
    s.call({ type: 'REVIVE', roles: [] });
    expect(s.offers()).toEqual([]);
    expect(cluster.view.agentSnapshot(agentId)).toMatchObject({ active: false, deactivated: true });
    expect(cluster.operator({ type: 'REACTIVATE_AGENT', agentId }).ok).toBe(true);
    expect(s.offers().map((o) => o.agentId)).toEqual([agentId]);
    expect(cluster.operator({ type: 'REACTIVATE_AGENT', agentId })).toEqual({
      ok: false,
      error: { code: 'INVALID', message: 'Agent is not deactivated' },
    });
  });

  it('DRAIN_AGENT kills, stays DRAINING until the terminal update is acknowledged, then DRAINED; REACTIVATE_AGENT ends the drain', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const agentId = cluster.agents[0]!.id;
    s.accept(s.firstOffer().id, [commandTask('t', agentId, 'sleep 100')]);
    s.acknowledgeAll();
    expect(cluster.operator({ type: 'DRAIN_AGENT', agentId, maxGracePeriodMs: 1_000, markGone: false }).ok).toBe(true);
    expect(cluster.view.agentSnapshot(agentId)?.drain).toEqual({
      state: 'DRAINING',
      maxGracePeriodMs: 1_000,
      markGone: false,
    });
    expect(s.sink.updates().at(-1)).toMatchObject({ taskId: 't', state: 'TASK_KILLED' });
    expect(cluster.operator({ type: 'REACTIVATE_AGENT', agentId })).toEqual({
      ok: false,
      error: { code: 'INVALID', message: 'Agent is still in the DRAINING state' },
    });
    s.acknowledgeAll();
    expect(cluster.view.agentSnapshot(agentId)?.drain?.state).toBe('DRAINED');
    expect([...cluster.view.agents()].map((a) => a.id)).toEqual([agentId]);
    expect(cluster.operator({ type: 'REACTIVATE_AGENT', agentId }).ok).toBe(true);
    expect(cluster.view.agentSnapshot(agentId)).toMatchObject({ active: true, deactivated: false, drain: undefined });
  });

  it('GET_QUOTA, GET_WEIGHTS and GET_OPERATIONS answer with values, empty on a fresh cluster', () => {
    const cluster = makeCluster();
    expect(cluster.operator({ type: 'GET_QUOTA' })).toEqual({ ok: true, value: { type: 'GET_QUOTA', configs: [] } });
    expect(cluster.operator({ type: 'GET_WEIGHTS' })).toEqual({
      ok: true,
      value: { type: 'GET_WEIGHTS', weights: [] },
    });
    expect(cluster.operator({ type: 'GET_OPERATIONS' })).toEqual({
      ok: true,
      value: { type: 'GET_OPERATIONS', operations: [] },
    });
  });
});

describe('the operator event feed', () => {
  it('sends SUBSCRIBED, then each change once from where it happens, and HEARTBEAT one interval after subscribing', () => {
    const cluster = makeCluster();
    const sink = new OperatorSink();
    const connectionId = cluster.subscribeOperatorWith(sink);
    expect(sink.events).toEqual([{ type: 'SUBSCRIBED', heartbeatIntervalSeconds: 15 }]);
    const s = connect(cluster);
    const agentId = cluster.agents[0]!.id;
    s.accept(s.firstOffer().id, [commandTask('t', agentId, 'sleep 100')]);
    s.acknowledgeAll();
    expect(sink.types()).toEqual(['SUBSCRIBED', 'FRAMEWORK_ADDED', 'TASK_ADDED', 'TASK_UPDATED', 'TASK_UPDATED']);
    const added = sink.events[2]!;
    // The task as it was when added, not as it is now.
    expect(added.type === 'TASK_ADDED' && [added.task.state, added.task.statuses.length]).toEqual(['TASK_STAGING', 0]);
    cluster.advance(14_999);
    expect(sink.types()).not.toContain('HEARTBEAT');
    cluster.advance(1);
    expect(sink.types().at(-1)).toBe('HEARTBEAT');
    // Without a failover timeout, the disconnected framework is removed at once.
    const seen = sink.events.length;
    s.disconnect();
    expect(sink.types().slice(seen)).toEqual(['FRAMEWORK_UPDATED', 'TASK_UPDATED', 'FRAMEWORK_REMOVED']);
    cluster.operator({ type: 'MARK_AGENT_GONE', agentId });
    expect(sink.types().slice(-1)).toEqual(['AGENT_REMOVED']);
    cluster.disconnect(connectionId);
    const before = sink.events.length;
    cluster.advance(60_000);
    expect(sink.events.length).toBe(before);
    expect(cluster.view.operatorSubscribers()).toBe(0);
  });

  it('is replayable: the same seed and inputs give the same trace with an operator subscriber', () => {
    const run = () => {
      const cluster = makeCluster({ seed: 5 });
      cluster.subscribeOperatorWith(new OperatorSink());
      const s = connect(cluster);
      s.accept(s.firstOffer().id, [commandTask('t', cluster.agents[0]!.id, 'sleep 1')]);
      s.acknowledgeAll();
      cluster.advance(20_000);
      s.acknowledgeAll();
      cluster.operator({ type: 'DRAIN_AGENT', agentId: cluster.agents[0]!.id, markGone: true });
      return cluster.trace.hash();
    };
    expect(run()).toBe(run());
  });
});
