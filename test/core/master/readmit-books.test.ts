/**
 * A new leader learns every task a re-registering agent reports and books
 * what they hold in one step per framework (readmit.ts): the books must end
 * exactly as the old leader kept them, task by task, for many tasks per
 * agent, of several frameworks and roles, with port ranges, next to tasks
 * that ended before the failover.
 */
import { describe, expect, it } from 'vitest';
import { format } from '../../../src/core/model/resources.js';
import { commandTask, connect, type TestCluster, type TestScheduler, twoMasters } from '../helpers.js';

function cluster(): TestCluster {
  return twoMasters(3);
}

/** Launches `perOffer` tasks into each offer the framework holds: some long, some that end at once. */
function launchInto(s: TestScheduler, prefix: string, perOffer: number): void {
  for (const offer of s.offers()) {
    const tasks = Array.from({ length: perOffer }, (_, i) => {
      const port = 31000 + i * 3 + (prefix === 'b' ? 1 : 0);
      return commandTask(
        `${prefix}-${offer.agentId.slice(-2)}-${i}`,
        offer.agentId,
        i % 4 === 3 ? 'exit 0' : 'sleep 3600',
        `cpus:0.1;mem:16;ports:[${port}-${port}]`,
      );
    });
    expect(s.accept(offer.id, tasks).ok).toBe(true);
  }
}

/** Acknowledges the updates of tasks that have not ended, once each. */
function acknowledgeLive(s: TestScheduler): void {
  const seen = new Set<string>();
  for (const u of s.sink.updates()) {
    if (u.uuid === undefined || u.state === 'TASK_FINISHED' || seen.has(u.uuid)) continue;
    seen.add(u.uuid);
    s.call({ type: 'ACKNOWLEDGE', agentId: u.agentId!, taskId: u.taskId, uuid: u.uuid });
  }
}

describe('a new leader books the tasks agents report', () => {
  it('ends with the books the old leader kept, per agent and per framework, and the allocator agrees', () => {
    const c = cluster();
    const a = connect(c, { failoverTimeoutMs: 3_600_000, roles: ['web'], capabilities: ['MULTI_ROLE'] });
    const b = connect(c, { failoverTimeoutMs: 3_600_000, roles: ['batch'], capabilities: ['MULTI_ROLE'] });
    c.advance(1_000);
    launchInto(a, 'a', 12);
    c.advance(1_000);
    launchInto(b, 'b', 12);
    // Every update but the tasks' ends acknowledged: the agents report the tasks that ended too.
    for (let i = 0; i < 5; i++) {
      acknowledgeLive(a);
      acknowledgeLive(b);
      c.advance(1_000);
    }
    const agentIds = c.agents.map((agent) => agent.id);
    const booksOf = () => ({
      agents: agentIds.map((id) => format(c.view.agentBooks(id).used)),
      frameworks: [a.frameworkId, b.frameworkId].map((id) => format(c.view.frameworkBooks(id).used)),
      tasks: [...c.view.frameworks()].map((fw) =>
        [...fw.tasks.values()]
          .filter((t) => t.state === 'TASK_RUNNING')
          .map((t) => t.spec.taskId)
          .sort(),
      ),
    });
    const before = booksOf();
    expect(before.tasks.flat().length).toBeGreaterThanOrEqual(45);
    expect(before.frameworks.every((books) => books.includes('ports'))).toBe(true);

    c.crashMaster();
    c.advance(10_000);
    expect(c.view.leaderIndex()).toBe(1);
    c.checkAllInvariants();
    const after = booksOf();
    expect(after.agents).toEqual(before.agents);
    expect(after.frameworks).toEqual(before.frameworks);
    expect(after.tasks).toEqual(before.tasks);
  });
});
