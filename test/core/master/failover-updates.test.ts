/**
 * Status updates across a master failover, as upstream's agent and master
 * handle them: an agent that detects a new leader pauses its status update
 * manager until it has re-registered, then resends each unacknowledged
 * update once, retried from 10 s again; a master ignores updates from an
 * agent that has not (re-)registered with it. A task that ended before the
 * failover, its last update not acknowledged, is reported by its agent
 * (as upstream's agent reports its terminated tasks) and known to the new
 * leader as ended, holding nothing.
 */
import { describe, expect, it } from 'vitest';
import { format } from '../../../src/core/model/resources.js';
import { commandTask, connect, type TestCluster, twoMasters } from '../helpers.js';

/** One agent running t1, whose updates are never acknowledged; the trace is at the moment of launch plus `afterMs`. */
function unacknowledged(afterMs: number): TestCluster {
  const cluster = twoMasters(1);
  const s = connect(cluster, { failoverTimeoutMs: 3_600_000 });
  cluster.advance(1_000);
  const offer = s.offers()[0]!;
  s.accept(offer.id, [commandTask('t1', offer.agentId, 'sleep 3600')]);
  cluster.advance(afterMs);
  return cluster;
}

/** Crashes the leader and runs `ms`: the kinds and lines of the trace entries from the crash on. */
function failover(cluster: TestCluster, ms: number): { kinds: string[]; lines: (kind: string) => string[] } {
  cluster.crashMaster();
  const mark = cluster.trace.length;
  cluster.advance(ms);
  const after = cluster.trace.entries().filter((e) => e.seq > mark);
  return { kinds: after.map((e) => e.kind), lines: (kind) => after.filter((e) => e.kind === kind).map((e) => e.line) };
}

describe('status updates across a master failover', () => {
  it('an update the agent retries in the instant a new leader is elected is ignored; the agent resends it once it has re-registered', () => {
    // The first update of t1 leaves the agent now: its retry is due 10 s on, with the election.
    const cluster = unacknowledged(0);
    const sent = cluster.trace.entries().find((e) => e.kind === 'task:status')!;
    const uuid = (JSON.parse(sent.line.slice(sent.line.indexOf('{'))) as { uuid: string }).uuid;
    const { kinds, lines } = failover(cluster, 10_000);
    expect(cluster.view.leaderIndex()).toBe(1);
    const ignored = lines('task:status-from-unknown-agent');
    expect(ignored.length).toBe(1);
    expect(ignored[0]).toContain(uuid);
    // Heard once by the new leader: the resend that follows the re-registration.
    const heard = lines('task:status');
    expect(heard.length).toBe(1);
    expect(heard[0]).toContain(uuid);
    expect(kinds.indexOf('agent:readmitted')).toBeLessThan(kinds.indexOf('task:status'));
    cluster.checkAllInvariants();
  });

  it('an agent sends no update between detecting the new leader and re-registering with it', () => {
    const cluster = unacknowledged(3_000);
    // The re-registration takes 30 s to arrive: retries fall due meanwhile.
    cluster.addNetworkRule({ action: 'delay', types: ['REREGISTER_AGENT'], delayMs: 30_000 });
    const { kinds } = failover(cluster, 120_000);
    const detected = kinds.indexOf('agent:master-detected');
    const readmitted = kinds.indexOf('agent:readmitted');
    expect(detected).toBeGreaterThanOrEqual(0);
    expect(readmitted).toBeGreaterThan(detected);
    // Retries fell due while it waited (the interval is 10 s), and none went out.
    expect(kinds.slice(detected, readmitted)).not.toContain('status-update:retry');
    expect(kinds).not.toContain('task:status-from-unknown-agent');
    expect(kinds.slice(readmitted)).toContain('task:status');
    cluster.checkAllInvariants();
  });

  it('the agent resends after re-registering, then retries 10 s later whatever the interval had grown to', () => {
    // Unacknowledged for long enough that the retry interval has grown (10 s, 20 s, 40 s).
    const cluster = unacknowledged(75_000);
    const { lines } = failover(cluster, 10_000);
    expect(cluster.view.leaderIndex()).toBe(1);
    expect(lines('task:status').length).toBe(1);
    const resentAt = cluster.now();
    const mark = cluster.trace.length;
    cluster.advance(10_000);
    const retries = cluster.trace.entries().filter((e) => e.seq > mark && e.kind === 'status-update:retry');
    expect(retries.map((e) => e.timeMs)).toEqual([resentAt + 10_000]);
    cluster.checkAllInvariants();
  });

  it('a task that ended before the failover, its update unacknowledged, is known to the new leader as ended until acknowledged', () => {
    const cluster = twoMasters(1);
    const s = connect(cluster, { failoverTimeoutMs: 3_600_000 });
    cluster.advance(1_000);
    const offer = s.offers()[0]!;
    s.accept(offer.id, [
      commandTask('done', offer.agentId, 'exit 0', 'cpus:1;mem:64'),
      commandTask('long', offer.agentId, 'sleep 3600', 'cpus:0.5;mem:16'),
    ]);
    cluster.advance(5_000);
    const agentId = offer.agentId;
    failover(cluster, 10_000);
    expect(cluster.view.leaderIndex()).toBe(1);
    const tasks = () =>
      [...cluster.view.framework(s.frameworkId)!.tasks.values()].map((t) => [t.spec.taskId, t.state]).sort();
    expect(tasks()).toEqual([
      ['done', 'TASK_FINISHED'],
      ['long', 'TASK_RUNNING'],
    ]);
    // The agent reports the latest state: what the ended task held is free (the old leader had only its first update).
    expect(format(cluster.view.agentBooks(agentId).used)).toBe('cpus(*,alloc:*):0.5; mem(*,alloc:*):16');
    cluster.checkAllInvariants();
    // The framework comes back, gets the updates the agent retries, and acknowledges: the ended task moves to the completed ones.
    s.resubscribe();
    cluster.advance(10_000);
    for (let i = 0; i < 4; i++) {
      cluster.advance(1_000);
      s.acknowledgeAll();
    }
    expect(tasks()).toEqual([['long', 'TASK_RUNNING']]);
    expect(cluster.view.framework(s.frameworkId)!.completedTasks.map((t) => [t.spec.taskId, t.state])).toEqual([
      ['done', 'TASK_FINISHED'],
    ]);
    cluster.checkAllInvariants();
  });
});
