/**
 * The master keeps a task's statuses without their `data`, as upstream
 * does (MESOS-1746: data that frameworks put in updates would fill the
 * master); the framework's UPDATE event still carries it. A status that
 * repeats the latest one's state replaces it, as upstream's updateTask does.
 */
import { describe, expect, it } from 'vitest';
import type { ExecutorStatus } from '../../../src/core/model/executor-api.js';
import { connect, customExecutor, ExecutorSink, executorTask, makeCluster } from '../helpers.js';

/** Task t1 on custom executor e1, subscribed: `update` hands the agent a status from it. */
function runningOnExecutor() {
  const cluster = makeCluster({ agentFlags: { customExecutors: 'await' } });
  const s = connect(cluster);
  const offer = s.firstOffer();
  s.accept(offer.id, [executorTask('t1', offer.agentId, customExecutor('e1'), 'cpus:0.2;mem:32')]);
  cluster.advance(100);
  const envelope = { frameworkId: s.frameworkId, executorId: 'e1' };
  const subscribed = cluster.executorSubscribeWith(
    offer.agentId,
    { ...envelope, call: { type: 'SUBSCRIBE', unacknowledgedTaskIds: ['t1'], unacknowledgedUpdates: [] } },
    new ExecutorSink(),
  );
  expect(subscribed.ok).toBe(true);
  const update = (status: ExecutorStatus): void => {
    expect(cluster.executorCall(offer.agentId, { ...envelope, call: { type: 'UPDATE', status } }).ok).toBe(true);
    cluster.advance(100);
  };
  return { cluster, s, update };
}

describe("the master's task statuses", () => {
  it('keep the state and drop the data of an executor update; the framework gets the data', () => {
    const { s, update } = runningOnExecutor();
    const data = new Uint8Array([1, 2, 3]);
    update({ taskId: 't1', state: 'TASK_RUNNING', source: 'SOURCE_EXECUTOR', uuid: `${'0'.repeat(31)}1`, data });
    const sent = s.sink.updates().find((u) => u.state === 'TASK_RUNNING');
    expect(sent?.data).toEqual(data);
    const task = s.framework!.tasks.get('t1')!;
    expect(task.statuses.map((x) => x.state)).toContain('TASK_RUNNING');
    expect(task.statuses.every((x) => x.data === undefined)).toBe(true);
  });

  it('a repeated state replaces the latest status, as upstream (Master::updateTask)', () => {
    const { cluster, s, update } = runningOnExecutor();
    const running = (n: number, message: string): ExecutorStatus => ({
      taskId: 't1',
      state: 'TASK_RUNNING',
      source: 'SOURCE_EXECUTOR',
      uuid: String(n).padStart(32, '0'),
      message,
    });
    update(running(1, 'first'));
    s.acknowledgeAll();
    cluster.advance(100);
    update(running(2, 'healthy again'));
    const statuses = s.framework!.tasks.get('t1')!.statuses.filter((x) => x.state === 'TASK_RUNNING');
    expect(statuses.map((x) => [x.message, x.uuid])).toEqual([['healthy again', running(2, '').uuid]]);
  });
});
