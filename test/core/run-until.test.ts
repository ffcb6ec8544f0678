/**
 * Running a cluster until it is idle (nothing due but heartbeats, pings
 * and retries waiting on someone outside) or until a condition holds, and
 * the condition vocabulary (JSON in, boolean out).
 */
import { describe, expect, it } from 'vitest';
import { parseCondition } from '../../src/core/conditions.js';
import { EventLoop } from '../../src/core/kernel/event-loop.js';
import { commandTask, connect, makeCluster } from './helpers.js';

describe('the event loop: background timers', () => {
  it('counts foreground timers only, through runs and cancels', () => {
    const loop = new EventLoop();
    const ran: string[] = [];
    loop.schedule(10, 'framework:heartbeat', () => ran.push('hb'));
    const work = loop.schedule(20, 'task:exit', () => ran.push('work'));
    loop.schedule(30, 'task:exit', () => ran.push('later'));
    expect(loop.foregroundPending()).toBe(2);
    loop.cancel(work);
    loop.cancel(work);
    expect(loop.foregroundPending()).toBe(1);
    expect(loop.runUntilQuiet(1_000)).toBe(true);
    expect(loop.now()).toBe(30);
    expect(ran).toEqual(['hb', 'later']);
  });

  it('stops at the bound when work is still due after it', () => {
    const loop = new EventLoop();
    loop.schedule(5_000, 'task:exit', () => undefined);
    expect(loop.runUntilQuiet(1_000)).toBe(false);
    expect(loop.now()).toBe(1_000);
  });
});

/** A cluster of `agents` with one framework that launched a task per command (`t0`, `t1`, ...) on its first offer. */
function launched(agents: number, ...commands: string[]) {
  const cluster = makeCluster({ agents });
  const s = connect(cluster);
  const offer = s.firstOffer();
  s.accept(offer.id, commands.map((command, i) => commandTask(`t${i}`, offer.agentId, command, 'cpus:0.5;mem:32')));
  return { cluster, s };
}

describe('Cluster.runUntilIdle', () => {
  it('runs a task of `sleep 30` to its end, then stops though heartbeats go on', () => {
    const { cluster, s } = launched(1, 'sleep 30');
    s.acknowledgeAll();
    const start = cluster.now();
    expect(cluster.runUntilIdle(start + 3_600_000)).toBe(true);
    // The task ends at 30 s; its resources are offered again at the next batched allocation, a second later.
    expect(cluster.now()).toBe(start + 31_000);
    expect(cluster.runUntil({ task_state: { state: 'TASK_FINISHED', task_id: 't0' } }, cluster.now())).toBe(true);
    expect([...cluster.view.frameworks()][0]!.offers.size).toBeGreaterThan(0);
    // Idle stays idle: a second run does not move the clock.
    expect(cluster.runUntilIdle(cluster.now() + 3_600_000)).toBe(true);
    expect(cluster.now()).toBe(start + 31_000);
  });

  it('gives up at the bound', () => {
    const { cluster } = launched(1, 'sleep 300');
    expect(cluster.runUntilIdle(cluster.now() + 60_000)).toBe(false);
    expect(cluster.now()).toBe(60_000);
  });
});

describe('Cluster.runUntil', () => {
  it('stops at the first instant a condition holds', () => {
    const { cluster, s } = launched(2, 'sleep 10', 'sleep 20');
    s.acknowledgeAll();
    expect(cluster.runUntil({ task_state: { state: 'TASK_FINISHED', count: 2 } }, 100_000)).toBe(true);
    expect(cluster.now()).toBe(20_000);
    expect(cluster.runUntil({ task_state: { state: 'TASK_FINISHED', task_id: 't0' } }, 200_000)).toBe(true);
    expect(cluster.now()).toBe(20_000);
    expect(cluster.runUntil({ task_state: { state: 'TASK_FAILED' } }, 25_000)).toBe(false);
    expect(cluster.now()).toBe(25_000);
  });

  it('counts agents and frameworks, watches trace kinds, and combines conditions', () => {
    const cluster = makeCluster({ agents: 2 });
    connect(cluster);
    expect(cluster.runUntil({ all: [{ agents_registered: 2 }, { frameworks_subscribed: 1 }] }, 0)).toBe(true);
    const agentId = cluster.agents[0]!.id;
    cluster.inject({ type: 'partition', nodes: [agentId, 'master'] });
    expect(cluster.runUntil({ agents_registered: 2 }, 0)).toBe(true);
    expect(cluster.runUntil({ trace_kind: 'agent:unreachable' }, 200_000)).toBe(true);
    // Five pings unanswered, 15 s apart: at the sixth (90 s) the agent is unreachable.
    expect(cluster.now()).toBe(90_000);
    expect(cluster.runUntil({ any: [{ agents_registered: 2 }, { frameworks_subscribed: 2 }] }, 80_000)).toBe(false);
  });
});

describe('conditions as JSON', () => {
  it('reads every kind, and names the field at fault', () => {
    expect(parseCondition({ task_state: { state: 'TASK_RUNNING', task_id: 't', count: 3 } })).toEqual({ task_state: { state: 'TASK_RUNNING', task_id: 't', count: 3 } });
    expect(parseCondition({ all: [{ agents_registered: 1 }, { any: [{ trace_kind: 'x' }, { frameworks_subscribed: 0 }] }] })).toEqual({
      all: [{ agents_registered: 1 }, { any: [{ trace_kind: 'x' }, { frameworks_subscribed: 0 }] }],
    });
    expect(parseCondition(undefined)).toBe("Expecting 'condition' to be an object");
    expect(parseCondition({ task_state: { state: 'RUNNING' } })).toBe("Expecting 'condition.task_state.state' to be a task state (TASK_RUNNING, ...)");
    expect(parseCondition({ agents_registered: -1 })).toBe("Expecting 'condition.agents_registered' to be a whole number from 0");
    expect(parseCondition({ all: [{ trace_kind: '' }] })).toBe("Expecting 'condition.all[0].trace_kind' to be a trace entry kind");
    expect(parseCondition({ agents_registered: 1, frameworks_subscribed: 1 })).toMatch(/exactly one of/);
    expect(parseCondition({ any: [] })).toBe("Expecting 'condition.any' to be a non-empty array of conditions");
    let deep: unknown = { agents_registered: 1 };
    for (let i = 0; i < 10; i++) deep = { all: [deep] };
    expect(parseCondition(deep)).toMatch(/nest at most 8 deep/);
  });
});
