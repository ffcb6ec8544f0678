/**
 * A cluster with a bit of everything the big reads write: agents with
 * reservations, port ranges and attributes; a multi-role framework with
 * labels, running, finished and killed tasks, tasks with labels, limits and
 * ports, a custom executor; an unreachable agent's tasks; a torn-down
 * framework among the completed ones; and offers outstanding.
 */
import {
  commandTask,
  connect,
  customExecutor,
  executorTask,
  makeCluster,
  resources,
  subscribe,
  type TestCluster,
  type TestScheduler,
} from '../core/helpers.js';
import { expect } from 'vitest';
import type { Acls } from '../../src/core/model/authz.js';
import type { TaskSpec } from '../../src/core/model/types.js';

export interface RichCluster {
  readonly cluster: TestCluster;
  readonly web: TestScheduler;
  readonly batch: TestScheduler;
}

export function richCluster(acls?: Acls): RichCluster {
  const cluster = makeCluster({ agents: 3, ...(acls === undefined ? {} : { acls }) });
  cluster.addAgent({
    hostname: 'reserved',
    ip: '127.0.0.1',
    port: 5060,
    resources: resources('cpus:2;cpus(db):1;mem(db):512;mem:1024;ports:[4000-4010]'),
    attributes: [{ name: 'zone', type: 'TEXT', text: 'b' }],
  });
  const web = connect(cluster, {
    user: 'alice',
    name: 'web',
    capabilities: ['MULTI_ROLE'],
    roles: ['web'],
    principal: 'ops',
    labels: [{ key: 'team', value: 'a"b' }],
  });
  cluster.advance(1000);
  const [first, ...rest] = web.offers();
  const a1 = first!.agentId;
  const labelled: TaskSpec = {
    ...commandTask('labelled', a1, 'sleep 100000'),
    labels: [{ key: 'k', value: 'v' }, { key: 'only' }],
  };
  const limited: TaskSpec = { ...commandTask('limited', a1, 'sleep 100000'), limits: { cpus: 2, mem: Infinity } };
  const ported: TaskSpec = commandTask('ported', a1, 'sleep 100000', 'cpus:0.5;mem:64;ports:[31000-31001]');
  web.accept(first!.id, [labelled, limited, ported, commandTask('short', a1, 'sleep 1')]);
  web.decline(
    rest.map((o) => o.id),
    3_600_000,
  );
  const batch = connect(cluster, { user: 'bob', name: 'batch \u00e9', capabilities: ['PARTITION_AWARE'] });
  cluster.advance(1000);
  const [o2, o3] = batch.offers().filter((o) => o.agentId !== a1 && o.agentId !== cluster.agents[3]!.id);
  const executor = customExecutor('e1');
  const r2 = batch.accept(o2!.id, [
    executorTask('x1', o2!.agentId, executor),
    executorTask('x2', o2!.agentId, executor),
    commandTask('gone', o2!.agentId, 'sleep 100000'),
  ]);
  if (!r2.ok) throw new Error(JSON.stringify(r2));
  batch.accept(o3!.id, [commandTask('far', o3!.agentId, 'sleep 100000')]);
  const a3 = o3!.agentId;
  cluster.advance(3000);
  web.acknowledgeAll();
  batch.acknowledgeAll();
  batch.kill('gone');
  cluster.advance(1000);
  batch.acknowledgeAll();
  cluster.inject({ type: 'partition', nodes: [a3, 'master'] });
  cluster.advance(120_000);
  web.acknowledgeAll();
  batch.acknowledgeAll();
  const declineAll = (s: TestScheduler) =>
    s.offers().length > 0 &&
    s.decline(
      s.offers().map((o) => o.id),
      3_600_000,
    );
  declineAll(web);
  declineAll(batch);
  const doomed = connect(cluster, { user: 'dave', name: 'doomed' });
  cluster.advance(1000);
  doomed.accept(doomed.firstOffer().id, [
    commandTask('orphaned', doomed.firstOffer().agentId, 'sleep 100000', 'cpus:0.1;mem:16'),
  ]);
  cluster.advance(2000);
  doomed.call({ type: 'TEARDOWN' });
  cluster.advance(1000);
  subscribe(cluster, { user: 'carol', name: 'idle' });
  cluster.advance(1000);
  return { cluster, web, batch };
}

/** Equal texts; else the first place they differ, not two pages of JSON. */
export function expectSameText(actual: string, expected: string): void {
  let at = 0;
  while (at < actual.length && actual[at] === expected[at]) at++;
  expect(actual.slice(Math.max(0, at - 200), at + 200)).toBe(expected.slice(Math.max(0, at - 200), at + 200));
  expect(actual.length).toBe(expected.length);
}
