/**
 * The agent lifecycle in the master: pings, an agent marked unreachable
 * after five missed pings, and its re-registration, for frameworks with and
 * without PARTITION_AWARE.
 */
import { describe, expect, it } from 'vitest';
import { AGENT_PING_TIMEOUT_MS, MAX_AGENT_PING_TIMEOUTS } from '../../../src/core/master/agent-health.js';
import { Double } from '../../../src/wire/v0/json.js';
import { renderMetrics } from '../../../src/wire/v0/metrics.js';
import { renderState } from '../../../src/wire/v0/state.js';
import { getTasks } from '../../../src/wire/operator-state.js';
import { taskStatusToWire } from '../../../src/wire/scheduler-out.js';
import { commandTask, connect, makeCluster, OperatorSink, traceKinds, type TestScheduler } from '../helpers.js';

const UNREACHABLE_AFTER_MS = AGENT_PING_TIMEOUT_MS * MAX_AGENT_PING_TIMEOUTS;
/** Five missed pings take 75 s to 90 s from the last answer: the count starts with the first ping lost. */
const MARKED_BY_MS = UNREACHABLE_AFTER_MS + AGENT_PING_TIMEOUT_MS;

/** One agent running a task `a` of a PARTITION_AWARE framework and a task `p` of a plain one, with an offer outstanding. */
function twoFrameworks() {
  const cluster = makeCluster({ agents: 1 });
  const aware = connect(cluster, { name: 'aware', capabilities: ['PARTITION_AWARE'] });
  const plain = connect(cluster, { name: 'plain' });
  const first = aware.offers().length > 0 ? aware : plain;
  const second = first === aware ? plain : aware;
  const offer = first.firstOffer();
  const agentId = offer.agentId;
  first.accept(offer.id, [commandTask(first === aware ? 'a' : 'p', agentId, 'sleep 3600')]);
  cluster.advance(1_000);
  const next = second.firstOffer();
  second.accept(next.id, [commandTask(second === aware ? 'a' : 'p', agentId, 'sleep 3600')]);
  aware.acknowledgeAll();
  plain.acknowledgeAll();
  cluster.advance(1_000);
  aware.acknowledgeAll();
  plain.acknowledgeAll();
  expect(aware.states('a')).toEqual(['TASK_STARTING', 'TASK_RUNNING']);
  expect(plain.states('p')).toEqual(['TASK_STARTING', 'TASK_RUNNING']);
  const outstanding = [...aware.offers(), ...plain.offers()];
  expect(outstanding).toHaveLength(1);
  return { cluster, aware, plain, agentId, offerId: outstanding[0]!.id };
}

function last(s: TestScheduler, taskId: string) {
  const updates = s.sink.updates().filter((u) => u.taskId === taskId);
  return updates[updates.length - 1]!;
}

describe('agent health', () => {
  it('a connected agent answers every ping and stays registered', () => {
    const { cluster, agentId } = twoFrameworks();
    cluster.advance(10 * UNREACHABLE_AFTER_MS);
    expect(cluster.view.agent(agentId)?.state).toBe('active');
    expect(traceKinds(cluster)).not.toContain('agent:unreachable');
  });

  it('a partitioned agent is still registered 75 s after the partition', () => {
    const { cluster, agentId } = twoFrameworks();
    cluster.partition(agentId, 'master');
    cluster.advance(UNREACHABLE_AFTER_MS - 1);
    expect(cluster.view.agent(agentId)?.state).toBe('active');
  });
});

describe('an agent partitioned from the master', () => {
  it('is marked unreachable after five missed pings, with every effect on its tasks, offers and resources', () => {
    const { cluster, aware, plain, agentId, offerId } = twoFrameworks();
    cluster.partition(agentId, 'master');
    cluster.advance(MARKED_BY_MS + 1_000);
    expect(cluster.view.agent(agentId)?.state).toBe('unreachable');

    const a = last(aware, 'a');
    expect(a).toMatchObject({
      state: 'TASK_UNREACHABLE',
      source: 'SOURCE_MASTER',
      reason: 'REASON_AGENT_REMOVED',
      agentId,
    });
    expect(a.uuid).toBeUndefined();
    expect(a.unreachableTimeMs).toBe(a.timestampMs);
    const p = last(plain, 'p');
    expect(p).toMatchObject({ state: 'TASK_LOST', source: 'SOURCE_MASTER', reason: 'REASON_AGENT_REMOVED', agentId });
    expect(p.unreachableTimeMs).toBe(a.unreachableTimeMs);

    for (const s of [aware, plain]) expect(s.sink.of('FAILURE')).toEqual([{ type: 'FAILURE', agentId }]);
    const rescinded = [...aware.sink.of('RESCIND'), ...plain.sink.of('RESCIND')].map((e) => e.offerId);
    expect(rescinded).toEqual([offerId]);
    expect([...aware.offers(), ...plain.offers()]).toEqual([]);

    // What the tasks held is recovered; the agent is not offered.
    expect(cluster.view.agentBooks(agentId).used).toEqual([]);
    cluster.advance(10_000);
    expect([...aware.offers(), ...plain.offers()]).toEqual([]);

    const state = renderState(cluster.view);
    expect(state.unreachable_slaves).toBe(1);
    expect(state.activated_slaves).toBe(0);
    expect(state.slaves).toEqual([]);
    expect(renderMetrics(cluster.view)['master/slaves_unreachable']).toEqual(new Double(1));
    expect(renderMetrics(cluster.view)['master/tasks_unreachable']).toEqual(new Double(1));
    const frameworks = state.frameworks as { name: string; unreachable_tasks: { id: string; state: string }[] }[];
    const unreachableOf = (name: string) =>
      frameworks.find((f) => f.name === name)!.unreachable_tasks.map((t) => [t.id, t.state]);
    expect(unreachableOf('aware')).toEqual([['a', 'TASK_UNREACHABLE']]);
    expect(unreachableOf('plain')).toEqual([]);
    const tasks = getTasks(cluster.view);
    expect(tasks.unreachable_tasks?.map((t) => [t.task_id.value, t.state])).toEqual([['a', 'TASK_UNREACHABLE']]);
    expect(tasks.completed_tasks?.map((t) => [t.task_id.value, t.state])).toEqual([['p', 'TASK_LOST']]);
    cluster.checkAllInvariants();
  });

  it('re-registers once healed: partition-aware tasks run on, the others are shut down', () => {
    const { cluster, aware, plain, agentId } = twoFrameworks();
    cluster.partition(agentId, 'master');
    cluster.advance(MARKED_BY_MS + 1_000);
    cluster.heal(agentId, 'master');
    cluster.advance(5_000);
    expect(cluster.view.agent(agentId)?.state).toBe('active');
    expect(traceKinds(cluster)).toContain('agent:master-lost');
    expect(traceKinds(cluster)).toContain('agent:reachable');

    expect(cluster.view.framework(aware.frameworkId)?.tasks.get('a')?.state).toBe('TASK_RUNNING');
    expect(renderState(cluster.view).unreachable_slaves).toBe(0);
    expect(renderMetrics(cluster.view)['master/slaves_unreachable']).toEqual(new Double(0));
    expect(getTasks(cluster.view).unreachable_tasks).toEqual([]);
    // Task `a` holds its resources again; the plain framework's task is gone from the agent.
    expect(cluster.view.agentBooks(agentId).used).not.toEqual([]);
    expect(cluster.view.framework(plain.frameworkId)?.tasks.has('p')).toBe(false);
    expect(cluster.view.agentExecutors(agentId).map((e) => e.frameworkId)).toEqual([aware.frameworkId]);

    // The agent is offered again and the partition-aware task can be killed as usual.
    cluster.advance(2_000);
    expect([...aware.offers(), ...plain.offers()].map((o) => o.agentId)).toContain(agentId);
    aware.kill('a');
    aware.acknowledgeAll();
    expect(aware.states('a')).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_UNREACHABLE', 'TASK_KILLED']);
    cluster.checkAllInvariants();
  });

  it('a crashed agent that does not come back is unreachable too, and may still return', () => {
    const { cluster, aware, agentId } = twoFrameworks();
    cluster.crashAgent(agentId);
    expect(cluster.view.agent(agentId)?.state).toBe('disconnected');
    cluster.advance(MARKED_BY_MS + 1_000);
    expect(cluster.view.agent(agentId)?.state).toBe('unreachable');
    expect(last(aware, 'a').state).toBe('TASK_UNREACHABLE');
    cluster.restartAgent(agentId);
    cluster.advance(1_000);
    expect(cluster.view.agent(agentId)?.state).toBe('active');
    // Without checkpointing the task died with the agent: the master learns it on re-registration.
    expect(last(aware, 'a')).toMatchObject({ state: 'TASK_DROPPED', reason: 'REASON_TASK_UNKNOWN' });
    cluster.checkAllInvariants();
  });
});

describe('what frameworks and operators see of an unreachable agent', () => {
  it('reconciliation answers TASK_UNREACHABLE for partition-aware frameworks, TASK_LOST for others, both with unreachable_time', () => {
    const { cluster, aware, plain, agentId } = twoFrameworks();
    cluster.partition(agentId, 'master');
    cluster.advance(MARKED_BY_MS + 1_000);
    const since = last(aware, 'a').unreachableTimeMs;
    aware.call({
      type: 'RECONCILE',
      tasks: [
        { taskId: 'a', agentId },
        { taskId: 'ghost', agentId },
      ],
    });
    expect(last(aware, 'a')).toMatchObject({
      state: 'TASK_UNREACHABLE',
      reason: 'REASON_RECONCILIATION',
      unreachableTimeMs: since,
    });
    expect(last(aware, 'ghost')).toMatchObject({
      state: 'TASK_UNREACHABLE',
      message: 'Reconciliation: Task is unreachable',
      unreachableTimeMs: since,
    });
    plain.call({ type: 'RECONCILE', tasks: [{ taskId: 'p', agentId }] });
    expect(last(plain, 'p')).toMatchObject({ state: 'TASK_LOST', reason: 'REASON_RECONCILIATION' });
    expect(last(plain, 'p').unreachableTimeMs).toBe(since);
    expect(taskStatusToWire(last(aware, 'a')).unreachable_time).toEqual({ nanoseconds: since! * 1e6 });
  });

  it('operator subscribers see the agent removed, then added again when it comes back', () => {
    const { cluster, agentId } = twoFrameworks();
    const sink = new OperatorSink();
    cluster.subscribeOperatorWith(sink);
    cluster.partition(agentId, 'master');
    cluster.advance(MARKED_BY_MS + 1_000);
    expect(sink.events.filter((e) => e.type === 'AGENT_REMOVED')).toEqual([{ type: 'AGENT_REMOVED', agentId }]);
    cluster.heal(agentId, 'master');
    cluster.advance(5_000);
    expect(sink.types().filter((t) => t.startsWith('AGENT_'))).toEqual(['AGENT_REMOVED', 'AGENT_ADDED']);
  });
});

describe('determinism', () => {
  it('a partition, its marking and its healing give the same trace for the same seed', () => {
    const run = () => {
      const { cluster, agentId } = twoFrameworks();
      cluster.partition(agentId, 'master');
      cluster.advance(MARKED_BY_MS + 1_000);
      cluster.heal(agentId, 'master');
      cluster.advance(5_000);
      return JSON.stringify(cluster.trace.entries());
    };
    const first = run();
    expect(first).toContain('agent:unreachable');
    expect(run()).toBe(first);
  });
});

describe('an unreachable agent and the cluster totals', () => {
  it('leaves the capacity quota is checked against until it re-registers', () => {
    const cluster = makeCluster({ agents: 2 });
    const [lost] = cluster.agents;
    const guarantee = (cpus: number) => ({
      force: false,
      configs: [{ role: 'dev', limits: new Map([['cpus', cpus]]), guarantees: new Map([['cpus', cpus]]) }],
    });
    cluster.partition(lost!.id, 'master');
    cluster.advance(MARKED_BY_MS + 1_000);
    expect(cluster.view.agent(lost!.id)?.state).toBe('unreachable');
    const refused = cluster.updateQuota(guarantee(6));
    expect(refused.ok ? '' : refused.error.message).toMatch(/exceed cluster capacity 'cpus:4;/);
    cluster.heal(lost!.id, 'master');
    cluster.advance(30_000);
    expect(cluster.view.agent(lost!.id)?.state).toBe('active');
    expect(cluster.updateQuota(guarantee(6)).ok).toBe(true);
    cluster.checkAllInvariants();
  });
});
