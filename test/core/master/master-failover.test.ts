/**
 * Masters with a leader: the leader's crash, the election after the
 * session timeout, a new master built from the registry that learns tasks
 * from re-registering agents, the allocator pause, and agents that never
 * come back.
 */
import { describe, expect, it } from 'vitest';
import type { ClusterOptions } from '../../../src/core/cluster.js';
import type { FrameworkInfo } from '../../../src/core/model/types.js';
import {
  AGENT_RESOURCES,
  commandTask,
  connect,
  OperatorSink,
  resources,
  TestCluster,
  type TestScheduler,
} from '../helpers.js';

const MINUTE = 60_000;

function makeMasters(
  options: { agents?: number; masters?: number; seed?: number; master?: Partial<ClusterOptions['master']> } = {},
): TestCluster {
  const cluster = new TestCluster({
    seed: options.seed ?? 7,
    recordTrace: true,
    masters: options.masters ?? 3,
    master: {
      hostname: 'localhost',
      ip: '127.0.0.1',
      port: 5050,
      version: '1.11.0',
      taskLaunchDelayMs: 0,
      ...options.master,
    },
  });
  for (let i = 0; i < (options.agents ?? 2); i++) {
    cluster.addAgent({
      hostname: `agent${i + 1}`,
      ip: '127.0.0.1',
      port: 5051 + i,
      resources: resources(AGENT_RESOURCES),
      attributes: [],
    });
  }
  return cluster;
}

/** A framework running one `sleep` task on each agent, every update acknowledged. */
function runOnEachAgent(
  cluster: TestCluster,
  info: Partial<FrameworkInfo> = {},
  command = 'sleep 3600',
): TestScheduler {
  const s = connect(cluster, { failoverTimeoutMs: 3_600_000, ...info });
  cluster.advance(1_000);
  for (const offer of s.offers())
    s.accept(offer.id, [commandTask(`t-${offer.agentId.slice(-2)}`, offer.agentId, command)]);
  s.acknowledgeAll();
  cluster.advance(1_000);
  s.acknowledgeAll();
  return s;
}

describe('masters with a leader', () => {
  it('starts with master 0 leading and the others standing by, on consecutive ports', () => {
    const cluster = makeMasters();
    expect(cluster.view.leaderIndex()).toBe(0);
    expect(cluster.view.masterSeats()).toEqual([
      { index: 0, port: 5050, state: 'leading' },
      { index: 1, port: 5051, state: 'standby' },
      { index: 2, port: 5052, state: 'standby' },
    ]);
  });

  it('a standby that crashes changes nothing for the cluster', () => {
    const cluster = makeMasters();
    const s = runOnEachAgent(cluster);
    const leaderId = cluster.view.masterInfo.id;
    expect(cluster.inject({ type: 'crash_master', master: 2 })).toEqual({ ok: true, value: { master: 2 } });
    cluster.advance(60_000);
    expect(cluster.view.leaderIndex()).toBe(0);
    expect(cluster.view.masterInfo.id).toBe(leaderId);
    expect(s.sink.closed).toBe(false);
    expect(cluster.inject({ type: 'crash_master', master: 5 })).toEqual({
      ok: false,
      error: { code: 'NOT_FOUND', message: 'Master 5 not found' },
    });
  });

  it("the leader's crash closes every stream; a new leader is elected after the session timeout and rebuilds tasks from the agents", () => {
    const cluster = makeMasters();
    const s = runOnEachAgent(cluster);
    const before = cluster.view.masterInfo.id;
    expect([...s.framework!.tasks.values()].map((t) => t.state)).toEqual(['TASK_RUNNING', 'TASK_RUNNING']);

    const operator = new OperatorSink();
    cluster.subscribeOperatorWith(operator);
    cluster.crashMaster();
    cluster.advance(0);
    expect(s.sink.closed).toBe(true);
    expect(operator.closed).toBe(true);
    expect(cluster.operator({ type: 'GET_QUOTA' })).toEqual({
      ok: false,
      error: { code: 'UNAVAILABLE', message: 'No leader elected' },
    });
    expect(cluster.view.leaderIndex()).toBeUndefined();
    expect(cluster.call(s.frameworkId, s.streamId, { type: 'REVIVE', roles: [] })).toEqual({
      ok: false,
      error: { code: 'UNAVAILABLE', message: 'No leader elected' },
    });

    cluster.advance(9_999);
    expect(cluster.view.leaderIndex()).toBeUndefined();
    cluster.advance(1);
    expect(cluster.view.leaderIndex()).toBe(1);
    expect(cluster.view.masterInfo.id).not.toBe(before);
    expect(cluster.view.masterInfo.port).toBe(5051);

    // The agents re-registered at once: the framework is known again, recovered, with its tasks.
    const fw = cluster.view.framework(s.frameworkId)!;
    expect(fw.recovered).toBe(true);
    expect(fw.state).toBe('disconnected');
    expect([...fw.tasks.values()].map((t) => [t.spec.taskId, t.state]).sort()).toEqual([
      [`t-${cluster.agents[0]!.id.slice(-2)}`, 'TASK_RUNNING'],
      [`t-${cluster.agents[1]!.id.slice(-2)}`, 'TASK_RUNNING'],
    ]);
    expect([...cluster.view.agents()].length).toBe(2);
    expect(cluster.view.recoveredAgents()).toEqual([]);

    const sink = s.resubscribe();
    const subscribed = sink.of('SUBSCRIBED')[0]!;
    expect(subscribed.frameworkId).toBe(s.frameworkId);
    expect(subscribed.masterInfo.id).toBe(cluster.view.masterInfo.id);
    expect(cluster.view.framework(s.frameworkId)!.recovered).toBe(false);
    s.call({ type: 'RECONCILE', tasks: [] });
    expect(sink.updates().map((u) => u.state)).toEqual(['TASK_RUNNING', 'TASK_RUNNING']);
    // What the tasks hold is not offered again: each agent offers its remaining 3 cpus.
    cluster.advance(1_000);
    const cpus = sink
      .of('OFFERS')
      .flatMap((e) => e.offers)
      .map((o) => o.resources.find((r) => r.name === 'cpus')?.milli);
    expect(cpus).toEqual([3000, 3000]);
    cluster.checkAllInvariants();
  });

  it('updates sent after the failover reach the framework through the new leader', () => {
    const cluster = makeMasters();
    const s = runOnEachAgent(cluster, {}, 'sleep 30');
    cluster.crashMaster();
    cluster.advance(10_000);
    s.resubscribe();
    cluster.advance(30_000);
    s.acknowledgeAll();
    expect(
      new Set(
        s.sink
          .updates()
          .filter((u) => u.state === 'TASK_FINISHED')
          .map((u) => u.taskId),
      ).size,
    ).toBe(2);
    cluster.advance(1_000);
    expect(cluster.view.framework(s.frameworkId)!.tasks.size).toBe(0);
    cluster.checkAllInvariants();
  });

  it('a master that restarts stands by behind the others; with one master, it leads again after the timeout', () => {
    const cluster = makeMasters({ masters: 1 });
    const s = runOnEachAgent(cluster);
    expect(cluster.inject({ type: 'master_failover' })).toEqual({ ok: true, value: { master: 0 } });
    expect(cluster.view.leaderIndex()).toBeUndefined();
    expect(cluster.view.masterSeats()[0]!.state).toBe('standby');
    cluster.advance(10_000);
    expect(cluster.view.leaderIndex()).toBe(0);
    expect(cluster.view.framework(s.frameworkId)!.tasks.size).toBe(2);

    const three = makeMasters();
    three.crashMaster(0);
    three.restartMaster(0);
    three.advance(10_000);
    expect(three.view.leaderIndex()).toBe(1);
    three.crashMaster(1);
    three.advance(10_000);
    expect(three.view.leaderIndex()).toBe(2);
  });

  it('the registry keeps quotas, weights and unreachable and gone agents; frameworks, offers and completed tasks are gone', () => {
    const cluster = makeMasters({ agents: 3 });
    const [a, b, c] = cluster.agents.map((x) => x.id) as [string, string, string];
    expect(
      cluster.updateQuota({
        force: true,
        configs: [{ role: 'r1', guarantees: new Map(), limits: new Map([['cpus', 2]]) }],
      }).ok,
    ).toBe(true);
    expect(cluster.updateWeights([{ role: 'r1', weight: 3 }]).ok).toBe(true);
    const s = runOnEachAgent(cluster, {}, 'sleep 1');
    cluster.advance(5_000);
    s.acknowledgeAll();
    expect(cluster.view.framework(s.frameworkId)!.completedTasks.length).toBeGreaterThan(0);
    cluster.partition(b, 'master');
    cluster.advance(100_000);
    expect(cluster.operator({ type: 'MARK_AGENT_GONE', agentId: c }).ok).toBe(true);
    cluster.crashMaster();
    cluster.advance(10_000);
    expect(cluster.view.quotas().map((q) => q.role)).toEqual(['r1']);
    expect(cluster.view.weights()).toEqual([{ role: 'r1', weight: 3 }]);
    expect([...cluster.view.agents()].map((x) => x.id)).toEqual([a]);
    expect(cluster.view.unreachableAgentCount()).toBe(1);
    expect(cluster.view.agent(c)?.state).toBe('gone');
    // No task runs any more, so no agent reported the framework: the new leader does not know it.
    expect(cluster.view.framework(s.frameworkId)).toBeUndefined();
    cluster.checkAllInvariants();
  });

  it('an agent the operator deactivated stays unoffered under the new leader', () => {
    const cluster = makeMasters({ agents: 2 });
    const [a, b] = cluster.agents.map((x) => x.id) as [string, string];
    expect(cluster.operator({ type: 'DEACTIVATE_AGENT', agentId: b }).ok).toBe(true);
    const s = connect(cluster, { failoverTimeoutMs: 3_600_000 });
    cluster.crashMaster();
    cluster.advance(10_000);
    const sink = s.resubscribe();
    cluster.advance(5_000);
    expect(new Set(sink.of('OFFERS').flatMap((e) => e.offers.map((o) => o.agentId)))).toEqual(new Set([a]));
    expect(cluster.view.agentSnapshot(b)?.deactivated).toBe(true);
    expect(cluster.operator({ type: 'REACTIVATE_AGENT', agentId: b }).ok).toBe(true);
    cluster.advance(5_000);
    expect(new Set(sink.of('OFFERS').flatMap((e) => e.offers.map((o) => o.agentId)))).toEqual(new Set([a, b]));
  });

  it('no leader is elected while every master is down; the first to restart after the timeout leads', () => {
    const cluster = makeMasters({ masters: 2 });
    cluster.crashMaster(1);
    cluster.crashMaster(0);
    cluster.advance(60_000);
    expect(cluster.view.leaderIndex()).toBeUndefined();
    cluster.inject({ type: 'restart_master', master: 1 });
    expect(cluster.view.leaderIndex()).toBe(1);
  });
});

describe('the allocator after a master failover', () => {
  /** When the re-subscribed framework first gets an offer, with `back` of `agents` agents returning. */
  function firstOfferAfter(agents: number, back: number, quota: boolean): number | undefined {
    const cluster = makeMasters({ agents });
    if (quota) {
      const limits = new Map([['cpus', 100]]);
      expect(cluster.updateQuota({ force: true, configs: [{ role: 'r1', guarantees: new Map(), limits }] }).ok).toBe(
        true,
      );
    }
    const s = connect(cluster, { role: 'r1', failoverTimeoutMs: 3_600_000 });
    for (const agent of cluster.agents.slice(back)) cluster.partition(agent.id, 'master');
    cluster.crashMaster();
    cluster.advance(10_000);
    const sink = s.resubscribe({ role: 'r1' });
    const start = cluster.now();
    for (let t = 0; t <= 11 * MINUTE; t += 1_000) {
      if (sink.of('OFFERS').length > 0) return cluster.now() - start;
      cluster.advance(1_000);
    }
    return undefined;
  }

  it.each([
    // agents, back, quota: offers after (ms; 0 = at once, 600_000 = the recovery timeout)
    [5, 5, true, 0],
    [5, 4, true, 0],
    [5, 3, true, 600_000],
    [10, 8, true, 0],
    [10, 7, true, 600_000],
    [1, 1, true, 0],
    [5, 1, false, 0],
    [5, 3, false, 0],
  ])('%i agents, %i back, quota %s: first offer after %i ms', (agents, back, quota, after) => {
    const got = firstOfferAfter(agents, back, quota);
    // The framework re-subscribes 0 to 1 s into the pause; the timeout runs from the election.
    if (after === 0) expect(got).toBe(0);
    else expect(got).toBeGreaterThanOrEqual(after - 1_000);
    if (after !== 0) expect(got).toBeLessThanOrEqual(after);
  });
});

describe('agents that never return', () => {
  it('become unreachable after the re-register timeout; reconciliation says where their tasks are; a late one is taken back', () => {
    const cluster = makeMasters({ agents: 2 });
    const aware = runOnEachAgent(cluster, { capabilities: ['PARTITION_AWARE'] });
    const [kept, lost] = [cluster.agents[0]!.id, cluster.agents[1]!.id];
    cluster.partition(lost, 'master');
    cluster.crashMaster();
    cluster.advance(10_000);
    const sink = aware.resubscribe();
    expect(cluster.view.recoveredAgents().map((a) => a.agentId)).toEqual([lost]);
    // While the agent may still come back, reconciling its task answers nothing.
    aware.call({ type: 'RECONCILE', tasks: [{ taskId: `t-${lost.slice(-2)}`, agentId: lost }] });
    expect(sink.updates()).toEqual([]);

    cluster.advance(10 * MINUTE);
    expect(cluster.view.recoveredAgents()).toEqual([]);
    expect(cluster.view.unreachableAgentCount()).toBe(1);
    expect(sink.of('FAILURE')).toEqual([{ type: 'FAILURE', agentId: lost }]);
    aware.call({ type: 'RECONCILE', tasks: [{ taskId: `t-${lost.slice(-2)}`, agentId: lost }] });
    expect(sink.updates().map((u) => [u.state, u.unreachableTimeMs !== undefined])).toEqual([
      ['TASK_UNREACHABLE', true],
    ]);
    expect(cluster.view.framework(aware.frameworkId)!.tasks.size).toBe(1);

    // The partition heals: the agent registers again with its task, which the partition-aware framework keeps.
    cluster.heal(lost, 'master');
    cluster.advance(2 * MINUTE);
    expect(cluster.view.unreachableAgentCount()).toBe(0);
    expect([...cluster.view.framework(aware.frameworkId)!.tasks.values()].map((t) => t.agentId).sort()).toEqual(
      [kept, lost].sort(),
    );
    cluster.checkAllInvariants();
  });

  it('a framework that is not partition-aware learns TASK_LOST, and its tasks on a late agent are shut down', () => {
    const cluster = makeMasters({ agents: 2 });
    const s = runOnEachAgent(cluster);
    const lost = cluster.agents[1]!.id;
    cluster.partition(lost, 'master');
    cluster.crashMaster();
    cluster.advance(10_000);
    const sink = s.resubscribe();
    cluster.advance(10 * MINUTE);
    s.call({ type: 'RECONCILE', tasks: [{ taskId: `t-${lost.slice(-2)}`, agentId: lost }] });
    expect(sink.updates().map((u) => u.state)).toEqual(['TASK_LOST']);
    cluster.heal(lost, 'master');
    cluster.advance(2 * MINUTE);
    expect(cluster.view.framework(s.frameworkId)!.tasks.size).toBe(1);
    expect(cluster.view.agentExecutors(lost).filter((e) => e.alive)).toEqual([]);
    cluster.checkAllInvariants();
  });
});

describe('an agent whose registration crossed the failover', () => {
  it('registers with the new leader and is not taken for missing', () => {
    const cluster = makeMasters({ agents: 1 });
    const rule = cluster.addNetworkRule({ action: 'drop', types: ['AGENT_REGISTERED'] });
    cluster.addAgent({
      hostname: 'late',
      ip: '127.0.0.1',
      port: 5060,
      resources: resources(AGENT_RESOURCES),
      attributes: [],
    });
    const late = cluster.agents[1]!.id;
    cluster.crashMaster();
    cluster.removeNetworkRule(rule);
    cluster.advance(12_000);
    // It registered (its retries of the first registration go on), so it is no longer expected back.
    expect(cluster.view.recoveredAgents()).toEqual([]);
    cluster.advance(10 * MINUTE);
    expect(cluster.view.agent(late)?.state).toBe('active');
    expect(cluster.view.unreachableAgentCount()).toBe(0);
    cluster.checkAllInvariants();
  });
});

describe('determinism', () => {
  it('the same seed and inputs give the same trace through a failover', () => {
    const run = (): string => {
      const cluster = makeMasters({ agents: 3, seed: 42 });
      const s = runOnEachAgent(cluster, {}, 'sleep 20');
      cluster.partition(cluster.agents[2]!.id, 'master');
      cluster.inject({ type: 'master_failover' });
      cluster.advance(10_000);
      s.resubscribe();
      cluster.advance(11 * MINUTE);
      s.acknowledgeAll();
      return JSON.stringify(cluster.trace.entries());
    };
    const first = run();
    expect(first).toContain('master:elected');
    expect(run()).toBe(first);
  });
});
