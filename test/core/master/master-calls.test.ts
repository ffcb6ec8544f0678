/**
 * The scheduler calls of the master, driven through `master.subscribe` and
 * `master.call`, against the rows of the specification's tables.
 */
import { describe, expect, it } from 'vitest';
import { RETRY_MIN_MS } from '../../../src/core/model/messages.js';
import type { TestCluster } from '../helpers.js';
import { allocate, format, subtract, type Resources } from '../../../src/core/model/resources.js';
import {
  AGENT_RESOURCES,
  commandTask,
  connect,
  customExecutor,
  defaultExecutor,
  executorTask,
  makeCluster,
  RecordingSink,
  resources,
  traceKinds,
  type TestScheduler,
} from '../helpers.js';

const total = resources(AGENT_RESOURCES);

function unallocated(cluster: TestCluster, agentId = cluster.agents[0]!.id): string {
  return format(cluster.view.unallocated(agentId));
}

function without(bag: Resources, text: string): string {
  return format(subtract(bag, resources(text)));
}

/** Suppresses offers so that what is not in use stays unallocated. */
function quiet(s: TestScheduler): void {
  expect(s.call({ type: 'SUPPRESS', roles: [] }).ok).toBe(true);
}

describe('KILL', () => {
  it('of a task not yet delivered: TASK_KILLED from the master, and the agent never runs it', () => {
    const cluster = makeCluster({ taskLaunchDelayMs: 100 });
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('t1', offer.agentId, 'sleep 10')]);
    quiet(s);
    expect(s.sink.updates()).toEqual([]);

    expect(s.kill('t1').ok).toBe(true);
    const updates = s.sink.updates();
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatchObject({
      taskId: 't1',
      state: 'TASK_KILLED',
      source: 'SOURCE_MASTER',
      reason: 'REASON_TASK_KILLED_DURING_LAUNCH',
      agentId: offer.agentId,
    });
    expect(updates[0]!.uuid).toBeUndefined();

    cluster.advance(60_000);
    expect(s.sink.updates()).toHaveLength(1);
    expect(cluster.view.agentExecutors(cluster.agents[0]!.id)).toEqual([]);
    expect(traceKinds(cluster)).not.toContain('executor:launch');
    expect(s.framework!.tasks.size).toBe(0);
    expect(s.framework!.completedTasks.map((t) => [t.spec.taskId, t.state])).toEqual([['t1', 'TASK_KILLED']]);
    expect(unallocated(cluster)).toBe(format(total));
  });

  it('of a not yet delivered task with a new custom executor returns the executor resources too', () => {
    const cluster = makeCluster({ taskLaunchDelayMs: 100 });
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [executorTask('t1', offer.agentId, customExecutor('x1'))]);
    quiet(s);
    expect(unallocated(cluster)).toBe(without(total, 'cpus:1.1;mem:160'));
    s.kill('t1');
    cluster.advance(1000);
    expect(cluster.view.agentExecutors(cluster.agents[0]!.id)).toEqual([]);
    expect(s.framework!.executors.size).toBe(0);
    expect(unallocated(cluster)).toBe(format(total));
  });

  it('of a not yet delivered task of a group kills the whole group, and nothing is delivered', () => {
    const cluster = makeCluster({ taskLaunchDelayMs: 100 });
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.launchGroup(offer.id, defaultExecutor('e1'), [
      commandTask('g1', offer.agentId, 'sleep 10'),
      commandTask('g2', offer.agentId, 'sleep 10'),
    ]);
    quiet(s);
    s.kill('g1');
    cluster.advance(1000);
    for (const id of ['g1', 'g2']) {
      expect(s.sink.updates().filter((u) => u.taskId === id)).toMatchObject([
        { state: 'TASK_KILLED', source: 'SOURCE_MASTER', reason: 'REASON_TASK_KILLED_DURING_LAUNCH' },
      ]);
    }
    expect(cluster.view.agentExecutors(cluster.agents[0]!.id)).toEqual([]);
    expect(traceKinds(cluster)).not.toContain('executor:launch');
    expect(s.framework!.tasks.size).toBe(0);
    expect(s.framework!.executors.size).toBe(0);
    expect(unallocated(cluster)).toBe(format(total));
  });

  it('of a task unknown to the master: TASK_LOST', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    expect(s.kill('nope', cluster.agents[0]!.id).ok).toBe(true);
    expect(s.sink.updates()).toMatchObject([
      { taskId: 'nope', state: 'TASK_LOST', source: 'SOURCE_MASTER', reason: 'REASON_RECONCILIATION' },
    ]);
    expect(s.sink.updates()[0]!.uuid).toBeUndefined();
  });

  it('of a task unknown to a PARTITION_AWARE master: TASK_GONE on a known agent, else TASK_UNKNOWN', () => {
    const cluster = makeCluster();
    const s = connect(cluster, { capabilities: ['PARTITION_AWARE'] });
    s.kill('a', cluster.agents[0]!.id);
    s.kill('b', 'no-such-agent');
    s.kill('c');
    expect(s.sink.updates().map((u) => [u.taskId, u.state])).toEqual([
      ['a', 'TASK_GONE'],
      ['b', 'TASK_UNKNOWN'],
      ['c', 'TASK_UNKNOWN'],
    ]);
  });

  it('of a task in a task group kills every task of the group', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.launchGroup(offer.id, defaultExecutor('e1'), [
      commandTask('g1', offer.agentId, 'sleep 100'),
      commandTask('g2', offer.agentId, './serve'),
    ]);
    s.acknowledgeAll();
    expect(s.states('g1')).toEqual(['TASK_STARTING', 'TASK_RUNNING']);
    s.kill('g1', offer.agentId);
    s.acknowledgeAll();
    expect(s.states('g1')).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_KILLED']);
    expect(s.states('g2')).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_KILLED']);
    expect(s.sink.updates().find((u) => u.state === 'TASK_KILLED')?.source).toBe('SOURCE_EXECUTOR');
  });

  it("of a task that ignores SIGTERM waits out the kill policy's grace period: the call's, else the task's, else 3 s", () => {
    const cluster = makeCluster();
    const s = connect(cluster, { capabilities: ['TASK_KILLING_STATE'] });
    const offer = s.firstOffer();
    const stubborn = (id: string, graceMs?: number) => ({
      ...commandTask(id, offer.agentId, "trap '' TERM; sleep 3600", 'cpus:0.5;mem:64'),
      ...(graceMs === undefined ? {} : { killGracePeriodMs: graceMs }),
    });
    s.accept(offer.id, [stubborn('own', 10_000), stubborn('plain'), stubborn('called', 10_000)]);
    s.acknowledgeAll();
    s.kill('own', offer.agentId);
    s.kill('plain', offer.agentId);
    s.call({ type: 'KILL', taskId: 'called', agentId: offer.agentId, gracePeriodMs: 1_000 });
    s.acknowledgeAll();
    for (const id of ['own', 'plain', 'called'])
      expect(s.states(id)).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_KILLING']);
    cluster.advance(1_000);
    s.acknowledgeAll();
    expect(s.states('called').at(-1)).toBe('TASK_KILLED');
    expect(s.states('plain').at(-1)).toBe('TASK_KILLING');
    cluster.advance(2_000);
    s.acknowledgeAll();
    expect(s.states('plain').at(-1)).toBe('TASK_KILLED');
    expect(s.states('own').at(-1)).toBe('TASK_KILLING');
    cluster.advance(7_000);
    s.acknowledgeAll();
    expect(s.states('own')).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_KILLING', 'TASK_KILLED']);
    expect(s.sink.updates().find((u) => u.taskId === 'own' && u.state === 'TASK_KILLED')?.message).toBe(
      'Command terminated with signal Killed',
    );
  });

  it('of a task of a custom executor is forwarded and answered TASK_KILLED; the executor stays up', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [executorTask('t1', offer.agentId, customExecutor('x1'))]);
    s.acknowledgeAll();
    cluster.advance(60_000);
    expect(s.states('t1')).toEqual(['TASK_STARTING', 'TASK_RUNNING']);
    s.kill('t1', offer.agentId);
    s.acknowledgeAll();
    expect(s.states('t1')).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_KILLED']);
    const killed = s.sink.updates().find((u) => u.state === 'TASK_KILLED')!;
    expect(killed).toMatchObject({ source: 'SOURCE_EXECUTOR', executorId: 'x1' });
    expect(killed.uuid).toMatch(/^[0-9a-f]{32}$/);
    expect(cluster.view.agentExecutors(cluster.agents[0]!.id).map((e) => [e.executorId, e.kind, e.alive])).toEqual([
      ['x1', 'custom', true],
    ]);
    expect(s.sink.of('FAILURE')).toEqual([]);
  });

  it('sends TASK_KILLING before TASK_KILLED to a framework with TASK_KILLING_STATE, and not otherwise', () => {
    for (const [capabilities, expected] of [
      [['TASK_KILLING_STATE'], ['TASK_STARTING', 'TASK_RUNNING', 'TASK_KILLING', 'TASK_KILLED']],
      [[], ['TASK_STARTING', 'TASK_RUNNING', 'TASK_KILLED']],
    ] as const) {
      const cluster = makeCluster();
      const s = connect(cluster, { capabilities: [...capabilities] });
      const offer = s.firstOffer();
      s.accept(offer.id, [commandTask('t1', offer.agentId, 'sleep 100')]);
      s.acknowledgeAll();
      s.kill('t1', offer.agentId);
      s.acknowledgeAll();
      expect(s.states('t1')).toEqual(expected);
    }
  });
});

describe('RECONCILE', () => {
  function twoRunningTasks() {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('t1', offer.agentId, 'sleep 100'), commandTask('t2', offer.agentId, './serve')]);
    s.acknowledgeAll();
    return { cluster, s, agentId: offer.agentId };
  }

  it('explicit: the latest state of a known task from the master, TASK_LOST for an unknown one', () => {
    const { s, agentId } = twoRunningTasks();
    const before = s.sink.updates().length;
    s.call({ type: 'RECONCILE', tasks: [{ taskId: 't1', agentId }, { taskId: 'zz' }] });
    const answers = s.sink.updates().slice(before);
    expect(answers).toMatchObject([
      { taskId: 't1', state: 'TASK_RUNNING', source: 'SOURCE_MASTER', reason: 'REASON_RECONCILIATION', agentId },
      { taskId: 'zz', state: 'TASK_LOST', source: 'SOURCE_MASTER', reason: 'REASON_RECONCILIATION' },
    ]);
    for (const a of answers) expect(a.uuid).toBeUndefined();
  });

  it('explicit: reports what the master knows, which a retried update brings up to date', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('t1', offer.agentId, 'true')]);
    quiet(s);
    // Only TASK_STARTING has reached the master; the task has finished on the agent.
    s.call({ type: 'RECONCILE', tasks: [{ taskId: 't1' }] });
    expect(s.sink.updates().at(-1)).toMatchObject({
      taskId: 't1',
      state: 'TASK_STARTING',
      reason: 'REASON_RECONCILIATION',
    });
    expect(unallocated(cluster)).toBe(without(total, 'cpus:1;mem:128'));
    // The retry carries the latest state: the master learns the task finished and frees it.
    cluster.advance(RETRY_MIN_MS);
    expect(s.sink.updates().at(-1)).toMatchObject({ state: 'TASK_STARTING', source: 'SOURCE_EXECUTOR' });
    expect(unallocated(cluster)).toBe(format(total));
    s.call({ type: 'RECONCILE', tasks: [{ taskId: 't1' }] });
    expect(s.sink.updates().at(-1)).toMatchObject({
      taskId: 't1',
      state: 'TASK_FINISHED',
      reason: 'REASON_RECONCILIATION',
    });
  });

  it('implicit: one update per known task', () => {
    const { s } = twoRunningTasks();
    const before = s.sink.updates().length;
    s.call({ type: 'RECONCILE', tasks: [] });
    const answers = s.sink.updates().slice(before);
    expect(answers.map((u) => [u.taskId, u.state, u.reason, u.uuid])).toEqual([
      ['t1', 'TASK_RUNNING', 'REASON_RECONCILIATION', undefined],
      ['t2', 'TASK_RUNNING', 'REASON_RECONCILIATION', undefined],
    ]);
  });
});

describe('ACCEPT', () => {
  it('with an unknown offer: TASK_LOST with REASON_INVALID_OFFERS, nothing launched, good offers returned', () => {
    const cluster = makeCluster({ agents: 1 });
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept([offer.id, 'bogus'], [commandTask('t1', offer.agentId, 'sleep 1')]);
    expect(s.sink.updates()).toMatchObject([
      { taskId: 't1', state: 'TASK_LOST', source: 'SOURCE_MASTER', reason: 'REASON_INVALID_OFFERS' },
    ]);
    expect(s.sink.updates()[0]!.message).toMatch(/bogus/);
    expect(s.framework!.tasks.size).toBe(0);
    expect(s.offers()).toEqual([]);
    expect(traceKinds(cluster)).not.toContain('task:launch');
    cluster.advance(1000);
    expect(cluster.view.agentExecutors(cluster.agents[0]!.id)).toEqual([]);
    // The valid offer went back without a filter, so it comes again.
    expect(s.offers()).toHaveLength(1);
  });

  it('for a partition-aware framework the tasks of invalid offers are TASK_DROPPED', () => {
    const cluster = makeCluster();
    const s = connect(cluster, { capabilities: ['PARTITION_AWARE'] });
    s.accept('bogus', [commandTask('t1', cluster.agents[0]!.id, 'sleep 1')]);
    expect(s.sink.updates()).toMatchObject([{ taskId: 't1', state: 'TASK_DROPPED', reason: 'REASON_INVALID_OFFERS' }]);
  });

  it('with a rescinded offer is invalid', () => {
    const cluster = makeCluster({ offerTimeoutMs: 5000 });
    const s = connect(cluster);
    const offer = s.firstOffer();
    cluster.advance(5000);
    expect(s.sink.of('RESCIND')).toEqual([{ type: 'RESCIND', offerId: offer.id }]);
    s.accept(offer.id, [commandTask('t1', offer.agentId, 'sleep 1')]);
    expect(s.sink.updates()).toMatchObject([{ taskId: 't1', state: 'TASK_LOST', reason: 'REASON_INVALID_OFFERS' }]);
    expect(s.framework!.tasks.size).toBe(0);
  });

  it('an offer id may be used in only one ACCEPT', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('t1', offer.agentId, 'sleep 100')]);
    s.accept(offer.id, [commandTask('t2', offer.agentId, 'sleep 100')]);
    const t2 = s.sink.updates().filter((u) => u.taskId === 't2');
    expect(t2).toMatchObject([{ state: 'TASK_LOST', reason: 'REASON_INVALID_OFFERS' }]);
    expect([...s.framework!.tasks.keys()]).toEqual(['t1']);
  });

  it('the same offer twice in one ACCEPT is invalid', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept([offer.id, offer.id], [commandTask('t1', offer.agentId, 'sleep 100')]);
    expect(s.sink.updates()).toMatchObject([{ state: 'TASK_LOST', reason: 'REASON_INVALID_OFFERS' }]);
    expect(s.framework!.tasks.size).toBe(0);
  });

  it('answers invalid tasks with TASK_ERROR and launches the valid ones', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    const agentId = offer.agentId;
    const both = { ...commandTask('both', agentId, 'sleep 1'), executor: customExecutor('x1') };
    s.accept(offer.id, [
      commandTask('ok', agentId, 'sleep 100'),
      commandTask('ok', agentId, 'sleep 100'),
      commandTask('big', agentId, 'sleep 1', 'cpus:100;mem:1'),
      both,
      { ...commandTask('none', agentId, 'sleep 1'), command: undefined },
      commandTask('elsewhere', 'other-agent', 'sleep 1'),
    ]);
    const errors = s.sink.updates().filter((u) => u.state === 'TASK_ERROR');
    expect(errors.map((u) => [u.taskId, u.source, u.reason])).toEqual([
      ['ok', 'SOURCE_MASTER', 'REASON_TASK_INVALID'],
      ['big', 'SOURCE_MASTER', 'REASON_TASK_INVALID'],
      ['both', 'SOURCE_MASTER', 'REASON_TASK_INVALID'],
      ['none', 'SOURCE_MASTER', 'REASON_TASK_INVALID'],
      ['elsewhere', 'SOURCE_MASTER', 'REASON_TASK_INVALID'],
    ]);
    expect(errors[0]!.message).toMatch(/duplicate/);
    expect(errors[1]!.message).toMatch(/more resources/);
    expect(errors[2]!.message).toMatch(/not both/);
    expect([...s.framework!.tasks.keys()]).toEqual(['ok']);
    quiet(s);
    cluster.advance(1000);
    expect(unallocated(cluster)).toBe(without(total, 'cpus:1;mem:128'));
  });

  it('a task group whose new executor does not fit the offer is TASK_ERROR for every task', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    // Leave an offer of 0.1 cpus and 8 MiB, too small for the executor's 32 MiB.
    s.accept(offer.id, [
      commandTask('big', offer.agentId, './serve', 'cpus:3.9;mem:8184;disk:16384;ports:[31000-32000]'),
    ]);
    cluster.advance(1000);
    const small = s.firstOffer();
    expect(format(small.resources)).toBe('cpus(*,alloc:*):0.1; mem(*,alloc:*):8');
    s.launchGroup(small.id, defaultExecutor('e1', 'cpus:0.1;mem:32'), [
      commandTask('g1', small.agentId, 'sleep 1', 'cpus:0.01;mem:1'),
    ]);
    expect(s.sink.updates().filter((u) => u.taskId === 'g1')).toMatchObject([
      {
        state: 'TASK_ERROR',
        reason: 'REASON_TASK_GROUP_INVALID',
        message: expect.stringMatching(/^Executor uses more resources/),
      },
    ]);
    expect(s.framework!.executors.size).toBe(0);
  });

  it('a task whose resources the offer holds only with other tasks fails alone', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [
      commandTask('a', offer.agentId, './serve', 'cpus:3;mem:128'),
      commandTask('b', offer.agentId, './serve', 'cpus:3;mem:128'),
      commandTask('c', offer.agentId, './serve', 'cpus:1;mem:128;ports:[31000-31000]'),
    ]);
    expect([s.states('a'), s.states('b'), s.states('c')]).toEqual([
      ['TASK_STARTING'],
      ['TASK_ERROR'],
      ['TASK_STARTING'],
    ]);
  });
});

describe('DECLINE, REVIVE and SUPPRESS', () => {
  it('a refuse filter keeps the resources from that framework until it expires', () => {
    const cluster = makeCluster();
    const a = connect(cluster, { name: 'a' });
    const b = connect(cluster, { name: 'b' });
    expect(b.offers()).toEqual([]);
    const offer = a.firstOffer();
    const t0 = cluster.now();
    expect(a.decline([offer.id], 10_000).ok).toBe(true);
    expect(a.offers()).toEqual([]);
    // The other framework gets the declined resources at the next allocation.
    cluster.advance(1000);
    expect(b.offers()).toHaveLength(1);
    b.decline([b.firstOffer().id], 60_000);
    cluster.advance(10_000 - 1 - (cluster.now() - t0));
    expect(a.offers()).toEqual([]);
    expect(a.sink.of('OFFERS')).toHaveLength(1);
    cluster.advance(1);
    expect(a.offers()).toHaveLength(1);
    expect(a.sink.of('OFFERS')).toHaveLength(2);
    expect(b.offers()).toEqual([]);
  });

  it('a decline without a filter lets the resources come back at the next allocation', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    s.decline([s.firstOffer().id], 0);
    cluster.advance(999);
    expect(s.offers()).toEqual([]);
    cluster.advance(1);
    expect(s.offers()).toHaveLength(1);
  });

  it('unused resources of an ACCEPT count as declined with its filter', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('t1', offer.agentId, './serve')], 30_000);
    cluster.advance(29_999);
    expect(s.offers()).toEqual([]);
    cluster.advance(1);
    expect(format(s.firstOffer().resources)).toBe(format(allocate(subtract(total, resources('cpus:1;mem:128')), '*')));
  });

  it('REVIVE clears the filters at once', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    s.decline([s.firstOffer().id], 3_600_000);
    cluster.advance(60_000);
    expect(s.offers()).toEqual([]);
    s.call({ type: 'REVIVE', roles: [] });
    expect(s.offers()).toHaveLength(1);
  });

  it('SUPPRESS stops offers but not status updates, and REVIVE resumes them', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('t1', offer.agentId, 'sleep 5')]);
    quiet(s);
    for (let i = 0; i < 60; i++) {
      cluster.advance(10_000);
      s.acknowledgeAll();
    }
    expect(s.offers()).toEqual([]);
    expect(s.sink.of('OFFERS')).toHaveLength(1);
    expect(s.states('t1')).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_FINISHED']);
    s.call({ type: 'REVIVE', roles: [] });
    expect(s.offers()).toHaveLength(1);
  });

  it('UPDATE_FRAMEWORK taking a role out of the suppressed set clears its filters', () => {
    const cluster = makeCluster();
    const s = connect(cluster, { capabilities: ['MULTI_ROLE'], roles: ['a'] });
    s.decline([s.firstOffer().id], 3_600_000);
    const update = (suppressedRoles: string[]) =>
      s.call({ type: 'UPDATE_FRAMEWORK', subscription: { info: { ...s.framework!.info }, suppressedRoles } });
    expect(update(['a']).ok).toBe(true);
    cluster.advance(60_000);
    expect(s.offers()).toEqual([]);
    expect(update([]).ok).toBe(true);
    expect(s.offers()).toHaveLength(1);
  });

  it('SUPPRESS of one role keeps offers coming for the others', () => {
    const cluster = makeCluster({ agents: 2 });
    const s = connect(cluster, { capabilities: ['MULTI_ROLE'], roles: ['a', 'b'] });
    expect(
      s
        .offers()
        .map((o) => o.role)
        .sort(),
    ).toEqual(['a', 'b']);
    s.call({ type: 'SUPPRESS', roles: ['a'] });
    s.decline(
      s.offers().map((o) => o.id),
      0,
    );
    cluster.advance(1000);
    expect(s.offers().map((o) => o.role)).toEqual(['b', 'b']);
  });
});

describe('framework lifecycle', () => {
  it('SUBSCRIBED comes first, then a HEARTBEAT every interval', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    expect(s.sink.events[0]).toMatchObject({
      type: 'SUBSCRIBED',
      frameworkId: s.frameworkId,
      heartbeatIntervalSeconds: 15,
    });
    expect(s.sink.of('HEARTBEAT')).toHaveLength(1);
    cluster.advance(14_999);
    expect(s.sink.of('HEARTBEAT')).toHaveLength(1);
    cluster.advance(1);
    expect(s.sink.of('HEARTBEAT')).toHaveLength(2);
    cluster.advance(45_000);
    expect(s.sink.of('HEARTBEAT')).toHaveLength(5);
  });

  it('a disconnected framework gets FRAMEWORK_NOT_SUBSCRIBED, its events are dropped', () => {
    const cluster = makeCluster();
    const s = connect(cluster, { failoverTimeoutMs: 60_000 });
    const offer = s.firstOffer();
    s.disconnect();
    expect(s.framework!.state).toBe('disconnected');
    const outcome = s.call({ type: 'REVIVE', roles: [] });
    expect(outcome).toEqual({
      ok: false,
      error: { code: 'FRAMEWORK_NOT_SUBSCRIBED', message: 'Framework is not subscribed' },
    });
    expect(s.accept(offer.id, []).ok).toBe(false);
    // Offers were taken back silently, and no new ones go to it.
    expect(s.sink.of('RESCIND')).toEqual([]);
    cluster.advance(30_000);
    expect(s.offers()).toEqual([]);
    expect(unallocated(cluster)).toBe(format(total));
  });

  it('failover timeout expiry removes the framework, kills its tasks and returns their resources', () => {
    const cluster = makeCluster();
    const s = connect(cluster, { failoverTimeoutMs: 10_000 });
    const offer = s.firstOffer();
    s.accept(offer.id, [
      commandTask('t1', offer.agentId, './serve'),
      executorTask('t2', offer.agentId, customExecutor('x1')),
    ]);
    s.acknowledgeAll();
    s.disconnect();
    cluster.advance(9_999);
    expect(s.framework?.state).toBe('disconnected');
    expect(cluster.view.agentExecutors(cluster.agents[0]!.id).filter((e) => e.alive)).toHaveLength(2);
    cluster.advance(1);
    expect(s.framework).toBeUndefined();
    const removed = cluster.view.completedFrameworks().find((f) => f.id === s.frameworkId)!;
    expect(removed.state).toBe('removed');
    expect(removed.completedTasks.map((t) => [t.spec.taskId, t.state])).toEqual([
      ['t1', 'TASK_KILLED'],
      ['t2', 'TASK_KILLED'],
    ]);
    expect(traceKinds(cluster)).toContain('framework:failover-expired');
    expect(cluster.view.agentExecutors(cluster.agents[0]!.id)).toEqual([]);
    expect(unallocated(cluster)).toBe(format(total));
    // Its id cannot come back.
    const sink = new RecordingSink();
    cluster.subscribeWith({ info: { ...removed.info }, suppressedRoles: [] }, sink);
    expect(sink.events).toMatchObject([{ type: 'ERROR' }]);
    expect(sink.closed).toBe(true);
  });

  it('re-SUBSCRIBE within the failover timeout restores the framework with its tasks', () => {
    const cluster = makeCluster();
    const s = connect(cluster, { failoverTimeoutMs: 10_000 });
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('t1', offer.agentId, './serve')]);
    const oldStream = s.streamId;
    s.disconnect();
    cluster.advance(5_000);
    const sink = s.resubscribe();
    expect(sink.events[0]).toMatchObject({ type: 'SUBSCRIBED', frameworkId: s.frameworkId });
    expect(s.streamId).not.toBe(oldStream);
    expect(s.framework!.state).toBe('subscribed');
    expect([...s.framework!.tasks.keys()]).toEqual(['t1']);
    // The timer of the old subscription does not fire any more.
    cluster.advance(60_000);
    expect(s.framework?.state).toBe('subscribed');
    // The unacknowledged TASK_STARTING is retried on the new stream.
    expect(sink.updates().map((u) => u.state)).toContain('TASK_STARTING');
    expect(cluster.call(s.frameworkId, oldStream, { type: 'REVIVE', roles: [] })).toMatchObject({
      ok: false,
      error: { code: 'STREAM_ID' },
    });
    expect(s.call({ type: 'REVIVE', roles: [] }).ok).toBe(true);
  });

  it('a second SUBSCRIBE on a new connection sends ERROR to the old stream and closes it', () => {
    const cluster = makeCluster();
    const s = connect(cluster, { failoverTimeoutMs: 10_000 });
    const old = s.sink;
    const sink = s.resubscribe({ name: 'renamed' });
    expect(old.events.at(-1)).toEqual({ type: 'ERROR', message: 'Framework failed over' });
    expect(old.closed).toBe(true);
    expect(sink.closed).toBe(false);
    expect(sink.events[0]).toMatchObject({ type: 'SUBSCRIBED', frameworkId: s.frameworkId });
    expect(s.framework!.info.name).toBe('renamed');
    cluster.advance(1000);
    expect(s.offers()).toHaveLength(1);
  });

  it('TEARDOWN removes the framework, closes its stream and frees its resources', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [
      commandTask('t1', offer.agentId, 'sleep 100'),
      executorTask('t2', offer.agentId, customExecutor('x1')),
    ]);
    s.acknowledgeAll();
    expect(s.call({ type: 'TEARDOWN' }).ok).toBe(true);
    expect(s.sink.closed).toBe(true);
    expect(s.framework).toBeUndefined();
    cluster.advance(1000);
    expect(cluster.view.agentExecutors(cluster.agents[0]!.id)).toEqual([]);
    expect(unallocated(cluster)).toBe(format(total));
    expect(s.call({ type: 'REVIVE', roles: [] })).toMatchObject({ ok: false, error: { code: 'FRAMEWORK_NOT_FOUND' } });
  });

  it('rejects unknown frameworks and wrong or missing stream ids', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const call = { type: 'REVIVE', roles: [] } as const;
    expect(cluster.call('nope', s.streamId, call)).toMatchObject({ ok: false, error: { code: 'FRAMEWORK_NOT_FOUND' } });
    expect(cluster.call(s.frameworkId, undefined, call)).toMatchObject({ ok: false, error: { code: 'STREAM_ID' } });
    expect(cluster.call(s.frameworkId, 'other', call)).toMatchObject({ ok: false, error: { code: 'STREAM_ID' } });
    expect(cluster.call(s.frameworkId, s.streamId, { type: 'UNKNOWN' })).toMatchObject({
      ok: false,
      error: { code: 'NOT_IMPLEMENTED' },
    });
  });
});

describe('status updates', () => {
  it('are retried after 10 s, then 20 s, 40 s, ... until acknowledged', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('t1', offer.agentId, 'sleep 10000')]);
    const count = () => s.sink.updates().length;
    expect(count()).toBe(1);
    const steps = [RETRY_MIN_MS, 2 * RETRY_MIN_MS, 4 * RETRY_MIN_MS, 8 * RETRY_MIN_MS];
    for (const [i, step] of steps.entries()) {
      cluster.advance(step - 1);
      expect(count()).toBe(i + 1);
      cluster.advance(1);
      expect(count()).toBe(i + 2);
    }
    expect(new Set(s.sink.updates().map((u) => u.uuid)).size).toBe(1);
    s.acknowledgeAll();
    // The next update goes at once, and once acknowledged nothing is retried.
    expect(s.sink.updates().at(-1)!.state).toBe('TASK_RUNNING');
    s.acknowledgeAll();
    const settled = count();
    cluster.advance(3_600_000);
    expect(count()).toBe(settled);
    expect(cluster.view.pendingUpdates(cluster.agents[0]!.id)).toBe(0);
  });

  it('release resources on the terminal update; the task completes when that update is acknowledged', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('t1', offer.agentId, 'sleep 1', 'cpus:1.5;mem:256')]);
    quiet(s);
    s.acknowledgeAll();
    expect(unallocated(cluster)).toBe(without(total, 'cpus:1.5;mem:256'));
    cluster.advance(1000);
    const finished = s.sink.updates().at(-1)!;
    expect(finished.state).toBe('TASK_FINISHED');
    expect(unallocated(cluster)).toBe(format(total));
    expect(s.framework!.tasks.get('t1')?.state).toBe('TASK_FINISHED');
    expect(s.framework!.completedTasks).toEqual([]);
    s.acknowledgeAll();
    expect(s.framework!.tasks.size).toBe(0);
    expect(s.framework!.completedTasks.map((t) => [t.spec.taskId, t.state])).toEqual([['t1', 'TASK_FINISHED']]);
  });

  it('an update acknowledged with the wrong uuid is retried anyway', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('t1', offer.agentId, 'sleep 100')]);
    s.call({ type: 'ACKNOWLEDGE', agentId: offer.agentId, taskId: 't1', uuid: '0'.repeat(32) });
    cluster.advance(RETRY_MIN_MS);
    expect(s.sink.updates().map((u) => u.state)).toEqual(['TASK_STARTING', 'TASK_STARTING']);
  });

  it('report the outcome of the command: exit codes, echo, unknown commands', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    const res = 'cpus:0.5;mem:32';
    s.accept(offer.id, [
      commandTask('exit2', offer.agentId, 'exit 2', res),
      commandTask('echo', offer.agentId, 'echo hi', res),
      commandTask('false', offer.agentId, 'false', res),
      commandTask('serve', offer.agentId, './serve', res),
    ]);
    s.acknowledgeAll();
    cluster.advance(3_600_000);
    s.acknowledgeAll();
    expect(s.states('exit2').at(-1)).toBe('TASK_FAILED');
    expect(s.sink.updates().find((u) => u.taskId === 'exit2' && u.state === 'TASK_FAILED')?.message).toBe(
      'Command exited with status 2',
    );
    expect(s.states('echo').at(-1)).toBe('TASK_FINISHED');
    expect(s.states('false').at(-1)).toBe('TASK_FAILED');
    expect(s.states('serve')).toEqual(['TASK_STARTING', 'TASK_RUNNING']);
  });
});

describe('UPDATE_FRAMEWORK', () => {
  it.each([
    ['principal', { principal: 'someone-else' }, /principal/],
    ['user', { user: 'nobody' }, /user/],
    ['checkpoint', { checkpoint: true }, /checkpoint/],
  ] as const)('changing %s is INVALID and changes nothing', (_field, change, message) => {
    const cluster = makeCluster();
    const s = connect(cluster, { principal: 'me' });
    const before = s.framework!.info;
    const outcome = s.call({
      type: 'UPDATE_FRAMEWORK',
      subscription: { info: { ...before, name: 'new-name', ...change }, suppressedRoles: [] },
    });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'INVALID', message: expect.stringMatching(message) } });
    expect(s.framework!.info).toBe(before);
  });

  it('a suppressed role outside the roles is INVALID and changes nothing', () => {
    const cluster = makeCluster();
    const s = connect(cluster, { capabilities: ['MULTI_ROLE'], roles: ['a'] });
    const before = s.framework!.info;
    const outcome = s.call({
      type: 'UPDATE_FRAMEWORK',
      subscription: { info: { ...before, roles: ['a', 'b'] }, suppressedRoles: ['c'] },
    });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'INVALID' } });
    expect(s.framework!.info).toBe(before);
    expect(s.framework!.roles()).toEqual(['a']);
    expect([...s.framework!.suppressedRoles]).toEqual([]);
  });

  it('removing a role rescinds its outstanding offers; tasks of the role are unaffected', () => {
    const cluster = makeCluster({ agents: 2 });
    const s = connect(cluster, { capabilities: ['MULTI_ROLE'], roles: ['a', 'b'] });
    const byRole = new Map(s.offers().map((o) => [o.role, o]));
    expect([...byRole.keys()].sort()).toEqual(['a', 'b']);
    const b = byRole.get('b')!;
    const t = commandTask('tb', b.agentId, './serve', 'cpus:1;mem:32');
    s.accept(b.id, [t]);
    cluster.advance(1000);
    const bOffers = s.offers().filter((o) => o.role === 'b');
    expect(bOffers).toHaveLength(1);
    expect(
      s.call({
        type: 'UPDATE_FRAMEWORK',
        subscription: { info: { ...s.framework!.info, roles: ['a'] }, suppressedRoles: [] },
      }).ok,
    ).toBe(true);
    expect(s.sink.of('RESCIND').map((e) => e.offerId)).toEqual(bOffers.map((o) => o.id));
    expect(s.offers().every((o) => o.role === 'a')).toBe(true);
    cluster.advance(60_000);
    expect(s.states('tb')).toEqual(['TASK_STARTING']);
    expect(s.framework!.tasks.get('tb')?.state).toBe('TASK_RUNNING');
    expect(s.offers().every((o) => o.role === 'a')).toBe(true);
  });

  it('suppressing a role by UPDATE_FRAMEWORK does not rescind its offers', () => {
    const cluster = makeCluster({ agents: 2 });
    const s = connect(cluster, { capabilities: ['MULTI_ROLE'], roles: ['a', 'b'] });
    const outcome = s.call({
      type: 'UPDATE_FRAMEWORK',
      subscription: { info: { ...s.framework!.info }, suppressedRoles: ['b'] },
    });
    expect(outcome.ok).toBe(true);
    expect(s.sink.of('RESCIND')).toEqual([]);
    expect(s.offers()).toHaveLength(2);
  });
});

describe('executor exits', () => {
  it('a custom executor shut down produces a FAILURE event', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [executorTask('t1', offer.agentId, customExecutor('x1'))]);
    quiet(s);
    s.acknowledgeAll();
    s.call({ type: 'SHUTDOWN', executorId: 'x1', agentId: offer.agentId });
    expect(s.sink.of('FAILURE')).toEqual([{ type: 'FAILURE', agentId: offer.agentId, executorId: 'x1', status: 15 }]);
    s.acknowledgeAll();
    expect(s.states('t1').at(-1)).toBe('TASK_KILLED');
    expect(unallocated(cluster)).toBe(format(total));
  });

  it('a default executor whose task group ended produces a FAILURE event', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.launchGroup(offer.id, defaultExecutor('e1'), [
      commandTask('g1', offer.agentId, 'sleep 1'),
      commandTask('g2', offer.agentId, 'sleep 2'),
    ]);
    quiet(s);
    s.acknowledgeAll();
    cluster.advance(1000);
    expect(s.sink.of('FAILURE')).toEqual([]);
    cluster.advance(1000);
    s.acknowledgeAll();
    expect(s.sink.of('FAILURE')).toEqual([{ type: 'FAILURE', agentId: offer.agentId, executorId: 'e1', status: 0 }]);
    expect(unallocated(cluster)).toBe(format(total));
  });

  it('a command executor exiting produces no FAILURE event', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('t1', offer.agentId, 'sleep 1'), commandTask('t2', offer.agentId, 'exit 3')]);
    s.acknowledgeAll();
    cluster.advance(2000);
    s.acknowledgeAll();
    expect(s.states('t1').at(-1)).toBe('TASK_FINISHED');
    expect(s.states('t2').at(-1)).toBe('TASK_FAILED');
    expect(traceKinds(cluster)).toContain('executor:exit');
    expect(s.sink.of('FAILURE')).toEqual([]);
  });
});

describe('DECLINE of several offers', () => {
  it('filters every valid offer, across agents, and skips ids that are no longer valid', async () => {
    const { makeCluster, subscribe } = await import('../helpers.js');
    const cluster = makeCluster({ agents: 3 });
    const { sink, frameworkId, streamId } = subscribe(cluster);
    const offers = sink.lastOffers();
    expect(offers).toHaveLength(3);
    const ids = [...offers.map((o) => o.id), 'no-such-offer', offers[0]!.id];
    const outcome = cluster.call(frameworkId, streamId, {
      type: 'DECLINE',
      offerIds: ids,
      filters: { refuseMs: 1_000_000 },
    });
    expect(outcome.ok).toBe(true);
    const before = sink.of('OFFERS').length;
    cluster.advance(999_000);
    expect(sink.of('OFFERS').length).toBe(before);
    cluster.advance(2_000);
    expect(sink.of('OFFERS').length).toBeGreaterThan(before);
  });
});

describe('GPU agents', () => {
  it('are offered only to frameworks with the GPU_RESOURCES capability', async () => {
    const { frameworkInfo, RecordingSink, resources, TestCluster } = await import('../helpers.js');
    const cluster = new TestCluster({
      seed: 1,
      master: { hostname: 'h', ip: '127.0.0.1', port: 5050, version: 'test' },
    });
    cluster.addAgent({
      hostname: 'gpu',
      ip: '127.0.0.1',
      port: 5051,
      resources: resources('cpus:4;mem:4096;gpus:1'),
      attributes: [],
    });
    cluster.addAgent({
      hostname: 'cpu',
      ip: '127.0.0.1',
      port: 5052,
      resources: resources('cpus:4;mem:4096'),
      attributes: [],
    });
    const plain = new RecordingSink();
    cluster.subscribeWith({ info: frameworkInfo(), suppressedRoles: [] }, plain);
    expect(plain.lastOffers().map((o) => o.hostname)).toEqual(['cpu']);
    const gpu = new RecordingSink();
    cluster.subscribeWith({ info: frameworkInfo({ capabilities: ['GPU_RESOURCES'] }), suppressedRoles: [] }, gpu);
    expect(gpu.lastOffers().map((o) => o.hostname)).toEqual(['gpu']);
  });
});

describe('reconciling a completed task', () => {
  it('answers TASK_LOST, as for any task the master no longer tracks, and names the agent it ran on', async () => {
    const { commandTask, makeCluster, subscribe } = await import('../helpers.js');
    const cluster = makeCluster();
    const { sink, frameworkId, streamId } = subscribe(cluster);
    const [offer] = sink.lastOffers();
    const call = (c: Parameters<typeof cluster.call>[2]) => cluster.call(frameworkId, streamId, c);
    call({
      type: 'ACCEPT',
      offerIds: [offer!.id],
      operations: [{ type: 'LAUNCH', tasks: [commandTask('done', offer!.agentId, 'true')] }],
      filters: { refuseMs: 0 },
    });
    for (let i = 0; i < 3; i++) {
      const u = sink.updates()[i]!;
      call({ type: 'ACKNOWLEDGE', agentId: u.agentId!, taskId: u.taskId, uuid: u.uuid! });
    }
    expect(sink.updates().map((u) => u.state)).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_FINISHED']);
    call({ type: 'RECONCILE', tasks: [{ taskId: 'done' }] });
    const last = sink.updates().at(-1)!;
    expect(last).toMatchObject({
      taskId: 'done',
      state: 'TASK_LOST',
      agentId: offer!.agentId,
      source: 'SOURCE_MASTER',
    });
  });
});
