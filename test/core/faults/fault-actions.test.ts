/**
 * The faults of frameworks' streams, executors, tasks and the wall clock
 * as core inputs (`Cluster.inject`): what each does, what the framework
 * sees, the trace entry, and the refusals that change nothing.
 */
import { describe, expect, it } from 'vitest';
import type { Fault } from '../../../src/core/faults/vocabulary.js';
import { MIB } from '../../../src/core/process/memory-curve.js';
import type { TaskSpec } from '../../../src/core/model/types.js';
import {
  commandTask,
  connect,
  customExecutor,
  executorTask,
  makeCluster,
  traceKinds,
  type TestCluster,
} from '../helpers.js';

const withMemory = (task: TaskSpec, label: string): TaskSpec => ({
  ...task,
  labels: [{ key: 'memory', value: label }],
});

/** One agent and one framework running `tasks` (made from the offer's agent id), updates acknowledged. */
function running(tasks: (agentId: string) => TaskSpec[], info = {}) {
  const cluster = makeCluster({ agents: 1 });
  const s = connect(cluster, { failoverTimeoutMs: 60_000, ...info });
  const offer = s.firstOffer();
  s.accept(offer.id, tasks(offer.agentId));
  s.acknowledgeAll();
  return { cluster, s, agentId: offer.agentId };
}

function injected(cluster: TestCluster, fault: Fault): void {
  const outcome = cluster.inject(fault);
  if (!outcome.ok) throw new Error(`${fault.type}: ${outcome.error.message}`);
}

/** The refusal's code; the trace has taken the input and nothing else. */
function refused(cluster: TestCluster, fault: Fault): string {
  const before = cluster.trace.entries().length;
  const outcome = cluster.inject(fault);
  expect(
    cluster.trace
      .entries()
      .slice(before)
      .map((e) => e.kind)
      .filter((k) => k !== 'input:inject'),
  ).toEqual([]);
  return outcome.ok ? 'ok' : outcome.error.code;
}

describe('drop_framework_connection', () => {
  it('breaks the stream as a dead connection: the master disconnects the framework and runs its failover timeout', () => {
    const { cluster, s } = running((a) => [commandTask('t', a, 'sleep 3600')]);
    injected(cluster, { type: 'drop_framework_connection', frameworkId: s.frameworkId });
    expect(s.sink.closed).toBe(true);
    expect(s.framework?.state).toBe('disconnected');
    expect(traceKinds(cluster)).toEqual(
      expect.arrayContaining(['fault:drop_framework_connection', 'framework:disconnected']),
    );
    const line = cluster.trace.entries().find((e) => e.kind === 'fault:drop_framework_connection')!.line;
    expect(line).toContain(s.frameworkId);
    expect(s.call({ type: 'REVIVE', roles: [] })).toMatchObject({
      ok: false,
      error: { code: 'FRAMEWORK_NOT_SUBSCRIBED' },
    });
    // Subscribing again within the failover timeout keeps the task.
    cluster.advance(30_000);
    const sink = s.resubscribe();
    expect(sink.of('SUBSCRIBED')).toHaveLength(1);
    expect(cluster.view.framework(s.frameworkId)?.tasks.has('t')).toBe(true);
  });

  it('a framework that never comes back is removed when its failover timeout passes', () => {
    const { cluster, s } = running((a) => [commandTask('t', a, 'sleep 3600')]);
    injected(cluster, { type: 'drop_framework_connection', frameworkId: s.frameworkId });
    cluster.advance(60_000);
    expect(cluster.view.framework(s.frameworkId)).toBeUndefined();
    cluster.checkAllInvariants();
  });

  it('refuses an unknown framework (NOT_FOUND) and one with no stream open (CONFLICT), changing nothing', () => {
    const { cluster, s } = running(() => []);
    expect(refused(cluster, { type: 'drop_framework_connection', frameworkId: 'nobody' })).toBe('NOT_FOUND');
    s.disconnect();
    expect(refused(cluster, { type: 'drop_framework_connection', frameworkId: s.frameworkId })).toBe('CONFLICT');
    expect(refused(cluster, { type: 'stall_heartbeats', frameworkId: s.frameworkId })).toBe('CONFLICT');
  });
});

describe('stall_heartbeats', () => {
  it('holds every event of the open stream for the duration, then lets them arrive in order', () => {
    const { cluster, s } = running(() => []);
    const seen = s.sink.events.length;
    injected(cluster, { type: 'stall_heartbeats', frameworkId: s.frameworkId, durationMs: 40_000 });
    cluster.advance(39_000);
    expect(s.sink.events).toHaveLength(seen);
    expect(s.sink.closed).toBe(false);
    // The master did not notice: the framework is subscribed and its calls work.
    expect(s.framework?.state).toBe('subscribed');
    cluster.advance(1_000);
    const released = s.sink.events.slice(seen).map((e) => e.type);
    expect(released.filter((t) => t === 'HEARTBEAT')).toHaveLength(2);
    expect(traceKinds(cluster)).toEqual(expect.arrayContaining(['fault:stall_heartbeats', 'fault:stall-released']));
    cluster.advance(15_000);
    expect(s.sink.events.length).toBe(seen + released.length + 1);
  });

  it('without a duration lasts until resume_heartbeats; updates wait with the heartbeats', () => {
    const { cluster, s } = running(() => []);
    injected(cluster, { type: 'stall_heartbeats', frameworkId: s.frameworkId });
    cluster.advance(1_000);
    // The offer reached the master's books, not the framework.
    const offer = s.firstOffer();
    expect(s.sink.lastOffers().map((o) => o.id)).not.toContain(offer.id);
    s.accept(offer.id, [commandTask('quick', offer.agentId, 'sleep 1', 'cpus:0.1;mem:8')]);
    cluster.advance(120_000);
    expect(s.states('quick')).toEqual([]);
    injected(cluster, { type: 'resume_heartbeats', frameworkId: s.frameworkId });
    expect(s.states('quick')).toEqual(['TASK_STARTING']);
    expect(s.sink.of('HEARTBEAT').length).toBeGreaterThanOrEqual(8);
  });

  it('stalling the stream a framework subscribed again on lets its old, stalled stream end', () => {
    const { cluster, s } = running(() => []);
    injected(cluster, { type: 'stall_heartbeats', frameworkId: s.frameworkId });
    const old = s.sink;
    s.resubscribe();
    // The master closed the old stream after an ERROR; both wait behind the stall.
    expect(old.closed).toBe(false);
    injected(cluster, { type: 'stall_heartbeats', frameworkId: s.frameworkId });
    expect(old.of('ERROR').map((e) => e.message)).toEqual(['Framework failed over']);
    expect(old.closed).toBe(true);
  });

  it('a stalled stream whose connection dies loses what was held', () => {
    const { cluster, s } = running(() => []);
    injected(cluster, { type: 'stall_heartbeats', frameworkId: s.frameworkId, durationMs: 60_000 });
    cluster.advance(30_000);
    const held = s.sink.events.length;
    injected(cluster, { type: 'drop_framework_connection', frameworkId: s.frameworkId });
    expect(s.sink.closed).toBe(true);
    expect(s.sink.events).toHaveLength(held);
    // The stall's end finds nothing to release.
    cluster.advance(30_000);
    expect(s.framework?.state).toBe('disconnected');
    expect(traceKinds(cluster)).not.toContain('fault:stall-released');
  });

  it('a framework that closes its silent stream loses what was held, and subscribes again', () => {
    const { cluster, s } = running(() => []);
    injected(cluster, { type: 'stall_heartbeats', frameworkId: s.frameworkId, durationMs: 60_000 });
    cluster.advance(30_000);
    const old = s.sink;
    const held = old.events.length;
    s.disconnect();
    const sink = s.resubscribe();
    cluster.advance(60_000);
    expect(old.events).toHaveLength(held);
    expect(sink.of('HEARTBEAT').length).toBeGreaterThanOrEqual(4);
    expect(refused(cluster, { type: 'resume_heartbeats', frameworkId: 'nobody' })).toBe('NOT_FOUND');
  });
});

describe('crash_executor', () => {
  it("a custom executor's process dies: its tasks fail as the agent reports a terminated executor, and the framework gets FAILURE", () => {
    const executor = customExecutor('exec-1');
    const { cluster, s, agentId } = running((a) => [
      executorTask('e1', a, executor),
      executorTask('e2', a, executor, 'cpus:0.5;mem:64'),
    ]);
    injected(cluster, { type: 'crash_executor', executorId: 'exec-1', agentId });
    for (const taskId of ['e1', 'e2']) {
      const failed = s.sink.updates().find((u) => u.taskId === taskId && u.state === 'TASK_FAILED');
      expect(failed).toMatchObject({
        source: 'SOURCE_AGENT',
        reason: 'REASON_EXECUTOR_TERMINATED',
        message: 'Executor terminated',
        executorId: 'exec-1',
      });
    }
    expect(s.sink.of('FAILURE')).toEqual([expect.objectContaining({ agentId, executorId: 'exec-1', status: 9 })]);
    expect(traceKinds(cluster)).toEqual(
      expect.arrayContaining(['fault:crash_executor', 'executor:killed', 'executor:exit']),
    );
    s.acknowledgeAll();
    cluster.checkAllInvariants();
  });

  it('by task: the command executor dies, its task fails, and no FAILURE (upstream does not report command executors)', () => {
    const { cluster, s } = running((a) => [commandTask('t', a, 'sleep 3600')]);
    injected(cluster, { type: 'crash_executor', taskId: 't' });
    expect(s.states('t')).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_FAILED']);
    expect(s.sink.of('FAILURE')).toEqual([]);
    cluster.checkAllInvariants();
  });

  it('a spawned executor is killed through its container record', () => {
    const cluster = makeCluster({ agents: 1, agentFlags: { customExecutors: 'spawn' } });
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [executorTask('e1', offer.agentId, customExecutor('spawned'))]);
    const [launch] = cluster.drainContainers();
    expect(launch?.kind).toBe('launch');
    injected(cluster, { type: 'crash_executor', executorId: 'spawned' });
    const [destroy] = cluster.drainContainers();
    expect(destroy).toMatchObject({ kind: 'destroy', agentId: offer.agentId });
    expect(s.sink.updates().find((u) => u.taskId === 'e1')).toMatchObject({
      state: 'TASK_FAILED',
      reason: 'REASON_EXECUTOR_TERMINATED',
    });
  });

  it('refuses unknown agents, executors and tasks', () => {
    const { cluster } = running((a) => [commandTask('t', a, 'sleep 3600')]);
    expect(refused(cluster, { type: 'crash_executor', executorId: 'nothing' })).toBe('NOT_FOUND');
    expect(refused(cluster, { type: 'crash_executor', executorId: 't', agentId: 'nowhere' })).toBe('NOT_FOUND');
    expect(refused(cluster, { type: 'crash_executor', taskId: 'nothing' })).toBe('NOT_FOUND');
    expect(refused(cluster, { type: 'crash_executor', taskId: 't', frameworkId: 'nobody' })).toBe('NOT_FOUND');
  });
});

describe('fail_task and hang_task', () => {
  it('fail_task: the task exits now with the code, reported by its executor', () => {
    const { cluster, s } = running((a) => [commandTask('t', a, 'sleep 3600')]);
    injected(cluster, { type: 'fail_task', taskId: 't', exitCode: 3 });
    expect(s.sink.updates().find((u) => u.state === 'TASK_FAILED')).toMatchObject({
      source: 'SOURCE_EXECUTOR',
      message: 'Command exited with status 3',
    });
  });

  it('fail_task takes the message given; a task that has ended is not found', () => {
    const { cluster, s } = running((a) => [commandTask('t', a, 'sleep 3600')]);
    injected(cluster, { type: 'fail_task', taskId: 't', exitCode: 137, message: 'segfault' });
    expect(s.sink.updates().at(-1)).toMatchObject({ state: 'TASK_FAILED', message: 'segfault' });
    s.acknowledgeAll();
    expect(refused(cluster, { type: 'fail_task', taskId: 't', exitCode: 1 })).toBe('NOT_FOUND');
  });

  it('hang_task: the task never ends by itself, and a kill ends it only after its grace period', () => {
    const { cluster, s } = running((a) => [commandTask('t', a, 'sleep 10')]);
    injected(cluster, { type: 'hang_task', taskId: 't' });
    cluster.advance(60_000);
    expect(s.states('t')).toEqual(['TASK_STARTING', 'TASK_RUNNING']);
    s.kill('t');
    cluster.advance(2_999);
    expect(s.states('t')).toEqual(['TASK_STARTING', 'TASK_RUNNING']);
    cluster.advance(1);
    expect(s.sink.updates().at(-1)).toMatchObject({
      state: 'TASK_KILLED',
      message: 'Command terminated with signal Killed',
    });
  });

  it('refuses a task of an executor outside the simulation', () => {
    const cluster = makeCluster({ agents: 1, agentFlags: { customExecutors: 'spawn' } });
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [executorTask('e1', offer.agentId, customExecutor('spawned'))]);
    expect(refused(cluster, { type: 'hang_task', taskId: 'e1' })).toBe('CONFLICT');
  });
});

describe('memory faults', () => {
  const task = (a: string) => [withMemory(commandTask('t', a, 'sleep 3600', 'cpus:0.5;mem:128'), 'constant:64')];

  it('memory_spike past the limit: the memory enforcement kills the container', () => {
    const { cluster, s } = running(task);
    injected(cluster, { type: 'memory_spike', taskId: 't', mib: 100, durationMs: 5_000 });
    const failed = s.sink.updates().at(-1);
    expect(failed).toMatchObject({
      state: 'TASK_FAILED',
      source: 'SOURCE_AGENT',
      reason: 'REASON_CONTAINER_LIMITATION_MEMORY',
    });
    expect(traceKinds(cluster)).toEqual(expect.arrayContaining(['fault:memory_spike', 'container:oom']));
    s.acknowledgeAll();
    cluster.checkAllInvariants();
  });

  it('a spike under the limit shows in usage for its duration, then goes', () => {
    const { cluster, s, agentId } = running(task);
    const node = cluster.view.agentNode(agentId)!;
    const containerId = node.executors()[0]!.containerId;
    injected(cluster, { type: 'memory_spike', taskId: 't', mib: 32, durationMs: 5_000 });
    expect(node.cgroups.view(containerId)?.usageBytes).toBe(96 * MIB);
    cluster.advance(5_000);
    expect(node.cgroups.view(containerId)?.usageBytes).toBe(64 * MIB);
    expect(s.states('t')).toEqual(['TASK_STARTING', 'TASK_RUNNING']);
  });

  it('set_memory_limit by task below its use OOM-kills it; by an unknown container is NOT_FOUND', () => {
    const { cluster, s, agentId } = running(task);
    expect(refused(cluster, { type: 'set_memory_limit', agentId, containerId: 'nothing', mib: 32 })).toBe('NOT_FOUND');
    expect(refused(cluster, { type: 'set_memory_limit', agentId: 'nowhere', taskId: 't', mib: 32 })).toBe('NOT_FOUND');
    injected(cluster, { type: 'set_memory_limit', agentId, taskId: 't', mib: 48 });
    expect(s.sink.updates().at(-1)).toMatchObject({
      state: 'TASK_FAILED',
      reason: 'REASON_CONTAINER_LIMITATION_MEMORY',
    });
  });

  it('set_memory_limit on an agent without memory isolation fails as the agent call does', () => {
    const cluster = makeCluster({ agents: 1, agentFlags: { memoryIsolation: false } });
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, task(offer.agentId));
    expect(refused(cluster, { type: 'set_memory_limit', agentId: offer.agentId, taskId: 't', mib: 32 })).toBe('FAILED');
  });
});

describe('clock_jump', () => {
  it('steps the wall clock the nodes report; timers keep their cluster time', () => {
    const { cluster, s } = running(() => []);
    const before = cluster.view.wallTimeMs();
    const now = cluster.now();
    const heartbeats = s.sink.of('HEARTBEAT').length;
    injected(cluster, { type: 'clock_jump', ms: 3_600_000 });
    expect(cluster.view.wallTimeMs()).toBe(before + 3_600_000);
    expect(cluster.now()).toBe(now);
    // The next heartbeat is due 15 s after the last one, not an hour early.
    cluster.advance(14_000);
    expect(s.sink.of('HEARTBEAT')).toHaveLength(heartbeats);
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('late', offer.agentId, 'sleep 60', 'cpus:0.1;mem:8')]);
    expect(s.sink.updates().at(-1)?.timestampMs).toBe(before + 3_600_000 + 14_000);
    expect(traceKinds(cluster)).toContain('fault:clock_jump');
  });
});

describe('the trace of faults', () => {
  it('every fault applied through inject is an entry fault:<type> with its parameters, the fault record without its type', () => {
    const { cluster, agentId } = running((a) => [commandTask('t', a, 'sleep 3600')]);
    const faults: Fault[] = [
      { type: 'network_rule', rule: { action: 'drop', types: ['PONG'] } },
      { type: 'partition', nodes: [agentId, 'master'] },
      { type: 'heal', nodes: [agentId, 'master'] },
      { type: 'clock_jump', ms: 1_000 },
      { type: 'hang_task', taskId: 't' },
      { type: 'crash_agent', agentId },
      { type: 'restart_agent', agentId, recover: 'reconnect' },
    ];
    for (const fault of faults) injected(cluster, fault);
    const entries = cluster.trace.entries().filter((e) => e.kind.startsWith('fault:'));
    expect(entries.map((e) => e.kind)).toEqual(faults.map((f) => `fault:${f.type}`));
    const { type: _type, ...parameters } = faults[6]!;
    expect(entries[6]!.line).toContain(JSON.stringify(parameters));
  });
});
