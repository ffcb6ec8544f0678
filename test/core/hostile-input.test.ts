/**
 * Inputs an unfriendly client can send, refused as upstream refuses them,
 * so that none can break an invariant (each once passed and corrupted the
 * books or took the master down).
 */
import { describe, expect, it } from 'vitest';
import { resourcesFromWire } from '../../src/wire/convert-common.js';
import { subscriptionFromWire } from '../../src/wire/scheduler-in.js';
import type { mesos } from '../../src/wire/generated/types.js';
import {
  commandTask,
  connect,
  customExecutor,
  defaultExecutor,
  executorTask,
  makeCluster,
  RecordingSink,
  resources,
  subscribe,
} from './helpers.js';

function launchOne(res: string, task = (agentId: string) => commandTask('t', agentId, 'sleep 10', res)) {
  const cluster = makeCluster();
  const s = connect(cluster);
  const offer = s.firstOffer();
  s.accept(offer.id, [task(offer.agentId)]);
  cluster.checkAllInvariants();
  return { cluster, s, update: s.sink.updates().find((u) => u.taskId === 't') };
}

describe('framework ids', () => {
  it('a client-chosen id never collides with one the master hands out', () => {
    const cluster = makeCluster();
    const masterId = cluster.view.masterInfo.id;
    const squatter = subscribe(cluster, { id: `${masterId}-0000`, name: 'squatter' });
    const honest = subscribe(cluster, { name: 'honest' });
    expect(squatter.frameworkId).toBe(`${masterId}-0000`);
    expect(honest.frameworkId).toBe(`${masterId}-0001`);
    expect(honest.sink.of('SUBSCRIBED')).toHaveLength(1);
    expect(squatter.sink.closed).toBe(false);
    cluster.checkAllInvariants();
  });

  it('an empty id is no id: the framework is new', () => {
    const cluster = makeCluster();
    const sub = subscriptionFromWire({
      framework_info: { user: 'u', name: 'n', id: { value: '' } },
    } as mesos.v1.scheduler.Call.Subscribe);
    if (typeof sub === 'string') throw new Error(sub);
    const { frameworkId } = cluster.subscribeWith(sub, new RecordingSink());
    expect(frameworkId).toBe(`${cluster.view.masterInfo.id}-0000`);
  });

  it.each([
    ['a/b', "'a/b' contains invalid characters"],
    ['..', "'..' is disallowed"],
  ])('an id with %j is refused with an ERROR', (id, message) => {
    const cluster = makeCluster();
    const { sink } = subscribe(cluster, { id });
    expect(sink.of('ERROR')[0]?.message).toBe(`Invalid 'FrameworkInfo.id': ${message}`);
    expect(sink.closed).toBe(true);
  });

  it('offer filters with a negative or NaN quantity are refused, as upstream', () => {
    const cluster = makeCluster();
    for (const [value, reason] of [
      [-1, 'Negative values not supported'],
      [Number.NaN, 'NaN not supported'],
    ] as const) {
      const sub = subscriptionFromWire({
        framework_info: {
          user: 'u',
          name: 'n',
          offer_filters: { '*': { min_allocatable_resources: { quantities: [{ quantities: { cpus: { value } } }] } } },
        },
      } as mesos.v1.scheduler.Call.Subscribe);
      if (typeof sub === 'string') throw new Error(sub);
      const { sink } = subscribe(cluster, sub.info);
      expect(sink.of('ERROR')[0]?.message).toBe(`Invalid resource quantity for 'cpus': ${reason}`);
    }
  });
});

describe('task ids', () => {
  it.each([
    ['a newline', 'a\nb', "'a\\x0ab' contains invalid characters"],
    ['..', '..', "'..' is disallowed"],
    ['100,000 characters', 'x'.repeat(100_000), 'ID must be at most 255 characters, got 100000'],
    ['nothing', '', 'ID must be non-empty'],
    ['a slash', 'a/b', "'a/b' contains invalid characters"],
  ])('an id with %s gives TASK_ERROR naming the reason', (_what, taskId, message) => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [{ ...commandTask('x', offer.agentId, 'sleep 1'), taskId }]);
    expect(s.sink.updates()).toEqual([
      expect.objectContaining({ taskId, state: 'TASK_ERROR', reason: 'REASON_TASK_INVALID', message }),
    ]);
    cluster.checkAllInvariants();
  });
});

describe('task resources', () => {
  it.each([
    [
      'the same range twice',
      [
        { begin: 31000, end: 31000 },
        { begin: 31000, end: 31000 },
      ],
      '[31000-31000] and [31000-31000] overlap',
    ],
    [
      'overlapping ranges',
      [
        { begin: 31000, end: 31005 },
        { begin: 31003, end: 31010 },
      ],
      '[31000-31005] and [31003-31010] overlap',
    ],
  ])('a resource list with %s is refused at the wire', (_what, range, clash) => {
    const list = [{ name: 'ports', type: 'RANGES', ranges: { range } }] as mesos.v1.Resource[];
    expect(resourcesFromWire(list)).toBe(`Invalid ranges resource 'ports': ${clash}`);
    const split = [0, 1].map((i) => ({
      name: 'ports',
      type: 'RANGES',
      ranges: { range: [range[i]!] },
    })) as mesos.v1.Resource[];
    expect(resourcesFromWire(split)).toBe(`Invalid ranges resource 'ports': ${clash}`);
  });

  it('a task with no resources is refused', () => {
    const { update } = launchOne('', (agentId) => ({ ...commandTask('t', agentId, 'sleep 10'), resources: [] }));
    expect(update).toMatchObject({ state: 'TASK_ERROR', message: 'Task uses no resources' });
  });

  it('a task and its executor may not share ports', () => {
    const executor = { ...customExecutor('x'), resources: resources('cpus:0.1;mem:32;ports:[31000-31000]') };
    const { update } = launchOne('', (agentId) =>
      executorTask('t', agentId, executor, 'cpus:1;mem:128;ports:[31000-31000]'),
    );
    expect(update).toMatchObject({ state: 'TASK_ERROR' });
    expect(update?.message).toMatch(/^Task and its executor use invalid resources: 'ports' \[31000-31000\] overlaps/);
  });

  it('tasks of one group may not share ports', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    const tasks = ['a', 'b'].map((id) =>
      commandTask(id, offer.agentId, 'sleep 10', 'cpus:0.5;mem:64;ports:[31000-31001]'),
    );
    s.launchGroup(offer.id, defaultExecutor('g'), tasks);
    expect(s.sink.updates().map((u) => [u.taskId, u.state])).toEqual([
      ['a', 'TASK_ERROR'],
      ['b', 'TASK_ERROR'],
    ]);
    cluster.checkAllInvariants();
  });

  it('a second task naming a running executor must carry an equal ExecutorInfo', () => {
    const cluster = makeCluster();
    const s = connect(cluster);
    const offer = s.firstOffer();
    s.accept(offer.id, [
      executorTask('one', offer.agentId, { ...customExecutor('x'), raw: { executor_id: { value: 'x' }, name: 'v1' } }),
    ]);
    cluster.advance(1_000);
    const next = s.firstOffer();
    s.accept(next.id, [
      executorTask('two', next.agentId, { ...customExecutor('x'), raw: { executor_id: { value: 'x' }, name: 'v2' } }),
    ]);
    expect(s.sink.updates().find((u) => u.taskId === 'two')).toMatchObject({
      state: 'TASK_ERROR',
      message: "ExecutorInfo is not compatible with existing ExecutorInfo with same ExecutorID 'x'",
    });
    cluster.checkAllInvariants();
  });
});
