/**
 * The master keeps a task's statuses without their `data`, as upstream
 * does (MESOS-1746: data that frameworks put in updates would fill the
 * master); the framework's UPDATE event still carries it.
 */
import { describe, expect, it } from 'vitest';
import { connect, customExecutor, ExecutorSink, executorTask, makeCluster } from './helpers.js';

describe("the master's task statuses", () => {
  it('keep the state and drop the data of an executor update; the framework gets the data', () => {
    const cluster = makeCluster({ agentFlags: { customExecutors: 'await' } });
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [executorTask('t1', offer.agentId, customExecutor('e1'), 'cpus:0.2;mem:32')]);
    cluster.advance(100);
    const envelope = { frameworkId: s.frameworkId, executorId: 'e1' };
    const subscribed = cluster.executorSubscribeWith(offer.agentId, { ...envelope, call: { type: 'SUBSCRIBE', unacknowledgedTaskIds: ['t1'], unacknowledgedUpdates: [] } }, new ExecutorSink());
    expect(subscribed.ok).toBe(true);
    const data = new Uint8Array([1, 2, 3]);
    const status = { taskId: 't1', state: 'TASK_RUNNING' as const, source: 'SOURCE_EXECUTOR' as const, uuid: '0'.repeat(31) + '1', data };
    expect(cluster.executorCall(offer.agentId, { ...envelope, call: { type: 'UPDATE', status } }).ok).toBe(true);
    cluster.advance(100);
    const update = s.sink.updates().find((u) => u.state === 'TASK_RUNNING');
    expect(update?.data).toEqual(data);
    const task = s.framework!.tasks.get('t1')!;
    expect(task.statuses.map((x) => x.state)).toContain('TASK_RUNNING');
    expect(task.statuses.every((x) => x.data === undefined)).toBe(true);
  });
});
