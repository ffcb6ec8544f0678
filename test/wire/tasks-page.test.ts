/**
 * `/tasks` pages without sorting every task: each page equals that page of
 * the whole sorted list, for any limit, offset, order and filter.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/model/records.js';
import type { ClusterView } from '../../src/core/view.js';
import { renderTasks, toV0Json, type TasksQuery } from '../../src/wire/v0/index.js';
import { taskObject } from '../../src/wire/v0/objects.js';
import { commandTask, connect, makeCluster } from '../core/helpers.js';
import { richCluster } from './read-fixture.js';

/** The page as a full sort gives it: first status time (none first), then task id, then framework id. */
function reference(view: ClusterView, q: TasksQuery): string {
  const all: { task: Task; user: string }[] = [];
  for (const fw of [...view.frameworks(), ...view.completedFrameworks()]) {
    if (q.framework_id !== undefined && fw.id !== q.framework_id) continue;
    for (const task of [...fw.tasks.values(), ...fw.completedTasks]) {
      if (q.task_id === undefined || task.spec.taskId === q.task_id) all.push({ task, user: fw.info.user });
    }
  }
  const key = (t: Task) => t.statuses[0]?.timestampMs ?? -Infinity;
  const text = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  all.sort(
    (a, b) =>
      key(a.task) - key(b.task) ||
      text(a.task.spec.taskId, b.task.spec.taskId) ||
      text(a.task.frameworkId, b.task.frameworkId),
  );
  if (q.order !== 'asc') all.reverse();
  const offset = q.offset ?? 0;
  return toV0Json({ tasks: all.slice(offset, offset + (q.limit ?? 100)).map((e) => taskObject(e.task, e.user)) });
}

/** Tasks launched at a few moments, several at each (ties on time), some never started. */
function manyTasks() {
  const cluster = makeCluster({ agents: 3, taskLaunchDelayMs: 0 });
  const s = connect(cluster, { user: 'alice' });
  const t = connect(cluster, { user: 'bob' });
  let n = 0;
  for (let round = 0; round < 4; round++) {
    cluster.advance(1000);
    for (const sched of [s, t]) {
      for (const offer of sched.offers()) {
        const tasks = Array.from({ length: 5 }, () =>
          commandTask(
            `t${(n++ * 7919) % 1000}`,
            offer.agentId,
            round === 1 ? 'sleep 1' : 'sleep 100000',
            'cpus:0.1;mem:8',
          ),
        );
        sched.accept(offer.id, tasks);
      }
    }
    cluster.advance(round === 3 ? 0 : 2000);
    s.acknowledgeAll();
    t.acknowledgeAll();
  }
  return { cluster, frameworks: [s.frameworkId, t.frameworkId] };
}

describe('/tasks paging', () => {
  it('gives the page of the full sort, for any limit, offset, order and framework', () => {
    const { cluster, frameworks } = manyTasks();
    const rich = richCluster().cluster;
    const query = fc.record(
      {
        limit: fc.nat(90),
        offset: fc.nat(90),
        order: fc.constantFrom('asc' as const, 'des' as const),
        framework_id: fc.constantFrom(...frameworks, 'none'),
        task_id: fc.constantFrom('t7', 't14', 'labelled'),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(query, fc.boolean(), (q, useRich) => {
        const view = useRich ? rich.view : cluster.view;
        expect(toV0Json(renderTasks(view, q))).toBe(reference(view, q));
      }),
      { numRuns: 300, verbose: true },
    );
    expect((renderTasks(cluster.view, { limit: 1000 }).tasks as unknown[]).length).toBe(75);
  });
});
