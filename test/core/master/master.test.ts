import { describe, expect, it } from 'vitest';
import { scalarMilli } from '../../../src/core/model/resources.js';
import { commandTask, makeCluster, subscribe } from '../helpers.js';

describe('master: a task from offer to finish', () => {
  it('offers, launches sleep 1, delivers updates one at a time until acknowledged', () => {
    const cluster = makeCluster();
    const { sink, frameworkId, streamId } = subscribe(cluster);
    expect(sink.events.map((e) => e.type)).toEqual(['SUBSCRIBED', 'HEARTBEAT', 'OFFERS']);
    expect(frameworkId).toMatch(/^[0-9a-f-]{36}-0000$/);
    const [offer] = sink.lastOffers();
    expect(offer?.id).toMatch(/-O0$/);
    expect(scalarMilli(offer!.resources, 'cpus')).toBe(4000);

    const call = (c: Parameters<typeof cluster.call>[2]) => cluster.call(frameworkId, streamId, c);
    expect(
      call({
        type: 'ACCEPT',
        offerIds: [offer!.id],
        operations: [{ type: 'LAUNCH', tasks: [commandTask('t1', offer!.agentId, 'sleep 1')] }],
        filters: { refuseMs: 5000 },
      }).ok,
    ).toBe(true);
    let updates = sink.updates();
    expect(updates.map((u) => u.state)).toEqual(['TASK_STARTING']);
    const ack = (i: number) => {
      const u = sink.updates()[i]!;
      return call({ type: 'ACKNOWLEDGE', agentId: u.agentId!, taskId: u.taskId, uuid: u.uuid! });
    };
    ack(0);
    expect(sink.updates().map((u) => u.state)).toEqual(['TASK_STARTING', 'TASK_RUNNING']);
    ack(1);
    cluster.advance(999);
    expect(sink.updates()).toHaveLength(2);
    cluster.advance(1);
    updates = sink.updates();
    expect(updates.map((u) => u.state)).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_FINISHED']);
    expect(updates[2]!.uuid).toMatch(/^[0-9a-f]{32}$/);
    ack(2);
    const fw = cluster.view.framework(frameworkId)!;
    expect(fw.tasks.size).toBe(0);
    expect(fw.completedTasks.map((t) => t.state)).toEqual(['TASK_FINISHED']);
  });

  it('retries an unacknowledged update with backoff', () => {
    const cluster = makeCluster();
    const { sink, frameworkId, streamId } = subscribe(cluster);
    const [offer] = sink.lastOffers();
    cluster.call(frameworkId, streamId, {
      type: 'ACCEPT',
      offerIds: [offer!.id],
      operations: [{ type: 'LAUNCH', tasks: [commandTask('t1', offer!.agentId, 'sleep 100')] }],
      filters: { refuseMs: 5000 },
    });
    expect(sink.updates()).toHaveLength(1);
    cluster.advance(10_000);
    expect(sink.updates().map((u) => u.state)).toEqual(['TASK_STARTING', 'TASK_STARTING']);
    cluster.advance(20_000);
    expect(sink.updates()).toHaveLength(3);
    expect(new Set(sink.updates().map((u) => u.uuid)).size).toBe(1);
  });
});
