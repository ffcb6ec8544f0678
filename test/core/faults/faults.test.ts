/**
 * Faults as inputs: network rules, partitions, agent crashes and restarts,
 * and the lifecycle tables they move through.
 */
import { describe, expect, it } from 'vitest';
import { Cluster } from '../../../src/core/cluster.js';
import { AGENT_NEXT } from '../../../src/core/master/agents.js';
import { commandTask, connect, makeCluster, traceKinds } from '../helpers.js';

function launched(checkpoint: boolean) {
  const cluster = makeCluster({ agents: 1 });
  const s = connect(cluster, { checkpoint, failoverTimeoutMs: 60_000 });
  const offer = s.firstOffer();
  s.accept(offer.id, [commandTask('long', offer.agentId, 'sleep 3600')]);
  s.acknowledgeAll();
  return { cluster, s, agentId: offer.agentId };
}

describe('network rules', () => {
  it('drop: a lost acknowledgement is retried until one arrives', () => {
    const { cluster, s } = launched(false);
    expect(s.states('long')).toEqual(['TASK_STARTING', 'TASK_RUNNING']);
    cluster.advance(1_000);
    const offer = s.firstOffer();
    const rule = cluster.addNetworkRule({ action: 'drop', types: ['STATUS_UPDATE_ACK'] });
    s.accept(offer.id, [commandTask('short', offer.agentId, 'true', 'cpus:0.1;mem:8')]);
    s.acknowledgeAll();
    expect(s.states('short')).toEqual(['TASK_STARTING']);
    expect(traceKinds(cluster)).toContain('net:drop');
    cluster.removeNetworkRule(rule);
    cluster.advance(10_000);
    // The retry of TASK_STARTING carries the same uuid: acknowledged again, the rest flows.
    const retried = s.sink.updates().filter((u) => u.taskId === 'short');
    expect(retried.map((u) => u.uuid)).toEqual([retried[0]!.uuid, retried[0]!.uuid]);
    s.call({ type: 'ACKNOWLEDGE', agentId: offer.agentId, taskId: 'short', uuid: retried[1]!.uuid! });
    s.acknowledgeAll();
    expect(s.states('short')).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_FINISHED']);
  });

  it('delay holds back later messages on the same link, as a connection does', () => {
    const { cluster, s } = launched(false);
    cluster.addNetworkRule({ action: 'delay', types: ['STATUS_UPDATE'], delayMs: 5_000, jitterMs: 3_000 });
    s.kill('long');
    expect(s.states('long')).toEqual(['TASK_STARTING', 'TASK_RUNNING']);
    cluster.advance(8_000);
    expect(s.states('long')).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_KILLED']);
  });

  it("an executor's update that reaches the agent after the agent reaped it is refused: a task never leaves a terminal state", () => {
    const cluster = makeCluster({ agents: 1 });
    const s = connect(cluster);
    cluster.addNetworkRule({ action: 'delay', types: ['EXECUTOR_UPDATE'], delayMs: 3_000 });
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('quick', offer.agentId, 'true', 'cpus:0.1;mem:8')]);
    for (let i = 0; i < 5; i++) {
      s.acknowledgeAll();
      cluster.advance(1_000);
    }
    // The executor exited before its updates arrived: the agent ended the task (upstream's executor API answers 400 after).
    expect(s.states('quick')).toEqual(['TASK_FAILED']);
    // STARTING, RUNNING and FINISHED, all sent before the exit.
    expect(traceKinds(cluster).filter((k) => k === 'executor:call-refused')).toHaveLength(3);
    cluster.checkAllInvariants();
  });

  it('a task launched again with the id of one that ended runs again; only a repeat the network made is dropped', () => {
    const cluster = makeCluster({ agents: 1 });
    const s = connect(cluster);
    cluster.addNetworkRule({ action: 'duplicate', types: ['RUN_TASK'], delayMs: 2_000 });
    for (let run = 0; run < 2; run++) {
      const offer = s.firstOffer();
      s.accept(offer.id, [commandTask('again', offer.agentId, 'sleep 1', 'cpus:0.1;mem:8')]);
      for (let i = 0; i < 5; i++) {
        s.acknowledgeAll();
        cluster.advance(1_000);
      }
    }
    // Upstream refuses only an id of an active task: the second launch runs, each once.
    expect(s.states('again')).toEqual([
      'TASK_STARTING',
      'TASK_RUNNING',
      'TASK_FINISHED',
      'TASK_STARTING',
      'TASK_RUNNING',
      'TASK_FINISHED',
    ]);
    expect(traceKinds(cluster).filter((k) => k === 'agent:run-repeated')).toHaveLength(2);
  });

  it('duplicate: a repeated launch runs the task once', () => {
    const cluster = makeCluster({ agents: 1 });
    const s = connect(cluster);
    cluster.addNetworkRule({ action: 'duplicate', types: ['RUN_TASK'], delayMs: 2_000 });
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('once', offer.agentId, 'sleep 1', 'cpus:0.1;mem:8')]);
    for (let i = 0; i < 5; i++) {
      s.acknowledgeAll();
      cluster.advance(1_000);
    }
    expect(s.states('once')).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_FINISHED']);
    expect(traceKinds(cluster)).toContain('agent:run-repeated');
    cluster.checkAllInvariants();
  });

  it('a partition loses messages both ways until healed; updates are retried', () => {
    const { cluster, s, agentId } = launched(false);
    cluster.partition(agentId, 'master');
    s.kill('long');
    cluster.advance(30_000);
    expect(s.states('long')).toEqual(['TASK_STARTING', 'TASK_RUNNING']);
    cluster.heal(agentId, 'master');
    s.kill('long');
    expect(s.states('long')).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_KILLED']);
  });
});

describe('agent crash and restart', () => {
  it('without checkpointing: the task dies with the agent and the master reports it lost on re-registration', () => {
    const { cluster, s, agentId } = launched(false);
    cluster.crashAgent(agentId);
    expect(cluster.view.agent(agentId)?.state).toBe('disconnected');
    expect(s.offers().filter((o) => o.agentId === agentId)).toEqual([]);
    cluster.restartAgent(agentId);
    expect(cluster.view.agent(agentId)?.state).toBe('active');
    const lost = s.sink.updates().find((u) => u.taskId === 'long' && u.state === 'TASK_LOST');
    expect(lost).toMatchObject({
      source: 'SOURCE_MASTER',
      reason: 'REASON_TASK_UNKNOWN',
      message: 'Task is unknown to the agent',
    });
    cluster.advance(1_000);
    expect(s.offers().filter((o) => o.agentId === agentId)).toHaveLength(1);
    cluster.checkAllInvariants();
  });

  it('with checkpointing: the executor survives, subscribes again, and the task goes on', () => {
    const { cluster, s, agentId } = launched(true);
    cluster.crashAgent(agentId);
    cluster.advance(60_000);
    cluster.restartAgent(agentId);
    expect(traceKinds(cluster)).toContain('executor:resubscribe');
    expect(s.sink.updates().some((u) => u.state === 'TASK_LOST')).toBe(false);
    s.kill('long');
    s.acknowledgeAll();
    expect(s.states('long')).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_KILLED']);
    cluster.checkAllInvariants();
  });

  it('with checkpointing: updates unacknowledged at the crash are sent again after the restart', () => {
    const cluster = makeCluster({ agents: 1 });
    const s = connect(cluster, { checkpoint: true });
    const offer = s.firstOffer();
    s.accept(offer.id, [commandTask('quick', offer.agentId, 'exit 2', 'cpus:0.1;mem:8')]);
    cluster.crashAgent(offer.agentId);
    cluster.restartAgent(offer.agentId);
    s.acknowledgeAll();
    expect(s.states('quick')).toEqual(['TASK_STARTING', 'TASK_RUNNING', 'TASK_FAILED']);
    cluster.checkAllInvariants();
  });

  it('agents move only along their transition tables; a fault on an agent already in its state changes nothing', () => {
    expect(AGENT_NEXT.gone).toEqual([]);
    expect(AGENT_NEXT.unreachable).not.toContain('disconnected');
    const { cluster, agentId } = launched(false);
    // The trace records the input itself; nothing else may follow it.
    const hash = () =>
      cluster.trace
        .entries()
        .filter((e) => !e.kind.startsWith('input:'))
        .map((e) => e.line)
        .join('\n');
    cluster.restartAgent(agentId);
    expect(cluster.view.agentProcessState(agentId)).toBe('active');
    cluster.crashAgent(agentId);
    const crashed = hash();
    cluster.crashAgent(agentId);
    expect(hash()).toBe(crashed);
    expect(cluster.view.agentProcessState(agentId)).toBe('crashed');
  });
});

describe('the outbox', () => {
  it('a refused SUBSCRIBE is an ERROR and a close for its connection only', () => {
    const cluster = new Cluster({ seed: 1, master: { hostname: 'h', ip: '127.0.0.1', port: 5050, version: 'test' } });
    const { streamId } = cluster.subscribe('conn-1', {
      info: {
        user: 'u',
        name: 'bad',
        failoverTimeoutMs: 0,
        checkpoint: false,
        roles: ['a'],
        capabilities: [],
        labels: [],
      },
      suppressedRoles: [],
    });
    expect(streamId).toMatch(/^[0-9a-f-]{36}$/);
    const records = cluster.drainOutbox();
    expect(records.map((r) => [r.kind, r.connectionId])).toEqual([
      ['event', 'conn-1'],
      ['close', 'conn-1'],
    ]);
  });
});
