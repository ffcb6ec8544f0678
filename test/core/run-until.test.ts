/**
 * Running a cluster until it is idle (nothing due but heartbeats, pings
 * and retries waiting on someone outside) or until a condition holds, and
 * the core's conditions (counted over the read model, held to bounds).
 */
import { describe, expect, it } from 'vitest';
import { inBounds, type Condition } from '../../src/core/conditions.js';
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
  s.accept(
    offer.id,
    commands.map((command, i) => commandTask(`t${i}`, offer.agentId, command, 'cpus:0.5;mem:32')),
  );
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
    expect(cluster.runUntil({ tasks: { state: 'TASK_FINISHED', taskId: 't0' } }, cluster.now())).toBe(true);
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
    expect(cluster.runUntil({ tasks: { state: 'TASK_FINISHED', min: 2 } }, 100_000)).toBe(true);
    expect(cluster.now()).toBe(20_000);
    expect(cluster.runUntil({ tasks: { state: 'TASK_FINISHED', taskId: 't0' } }, 200_000)).toBe(true);
    expect(cluster.now()).toBe(20_000);
    expect(cluster.runUntil({ tasks: { state: 'TASK_FAILED' } }, 25_000)).toBe(false);
    expect(cluster.now()).toBe(25_000);
  });

  it('counts agents and frameworks, watches trace kinds, and combines conditions', () => {
    const cluster = makeCluster({ agents: 2 });
    connect(cluster);
    expect(
      cluster.runUntil(
        { all: [{ agents: { state: 'active', count: 2 } }, { frameworks: { state: 'subscribed', min: 1 } }] },
        0,
      ),
    ).toBe(true);
    const agentId = cluster.agents[0]!.id;
    cluster.inject({ type: 'partition', nodes: [agentId, 'master'] });
    expect(cluster.runUntil({ agents: { state: 'active', min: 2 } }, 0)).toBe(true);
    expect(cluster.runUntil({ trace: { kind: 'agent:unreachable' } }, 200_000)).toBe(true);
    // Five pings unanswered, 15 s apart: at the sixth (90 s) the agent is unreachable.
    expect(cluster.now()).toBe(90_000);
    expect(
      cluster.runUntil(
        { any: [{ agents: { state: 'active', min: 2 } }, { frameworks: { state: 'subscribed', min: 2 } }] },
        80_000,
      ),
    ).toBe(false);
  });
});

describe('conditions: counts held to bounds', () => {
  it('count is exactly, min at least, max at most; each one given holds; none is at least 1', () => {
    expect([0, 1, 2].map((n) => inBounds({}, n))).toEqual([false, true, true]);
    expect([1, 2, 3].map((n) => inBounds({ count: 2 }, n))).toEqual([false, true, false]);
    expect([1, 2, 3].map((n) => inBounds({ min: 2 }, n))).toEqual([false, true, true]);
    expect([1, 2, 3].map((n) => inBounds({ max: 2 }, n))).toEqual([true, true, false]);
    expect([0, 1, 2, 3, 4].map((n) => inBounds({ min: 1, max: 3 }, n))).toEqual([false, true, true, true, false]);
    expect(inBounds({ count: 0 }, 0)).toBe(true);
    expect(inBounds({ count: 2, min: 3 }, 2)).toBe(false);
  });

  it('stops where the count first meets its bounds: exactly one finished at 10 s, none running at 20 s', () => {
    const { cluster, s } = launched(2, 'sleep 10', 'sleep 20');
    s.acknowledgeAll();
    expect(cluster.runUntil({ tasks: { state: 'TASK_RUNNING', count: 2 } }, 100_000)).toBe(true);
    const started = cluster.now();
    expect(cluster.runUntil({ tasks: { state: 'TASK_FINISHED', count: 1 } }, 100_000)).toBe(true);
    expect(cluster.now()).toBe(10_000);
    expect(cluster.runUntil({ tasks: { state: 'TASK_RUNNING', max: 0 } }, 100_000)).toBe(true);
    expect(cluster.now()).toBe(20_000);
    // Exactly one finished no longer holds once both have: it waits to the bound.
    expect(cluster.runUntil({ tasks: { state: 'TASK_FINISHED', count: 1 } }, 30_000)).toBe(false);
    expect(started).toBeLessThan(10_000);
  });

  it('counts trace entries since the watch began, with a text their line contains', () => {
    const { cluster, s } = launched(2, 'sleep 10', 'sleep 20');
    s.acknowledgeAll();
    // Both launches are in the past: the watch counts from now on.
    expect(cluster.runUntil({ trace: { kind: 'task:launch' } }, 5_000)).toBe(false);
    expect(cluster.runUntil({ trace: { kind: 'task:status', contains: '"TASK_FINISHED"', count: 1 } }, 100_000)).toBe(
      true,
    );
    expect(cluster.now()).toBe(10_000);
  });
});

describe('conditions: a value of another shape', () => {
  it('throws, naming it (a recorded input of the form before, replayed)', () => {
    const cluster = makeCluster({ agents: 1 });
    const old = { agents_registered: 1 } as unknown as Condition;
    expect(() => cluster.runUntil(old, 1_000)).toThrow(
      'Not a condition of tasks, agents, frameworks, trace, all or any: {"agents_registered":1}',
    );
    expect(() => cluster.runUntil({ all: [old] }, 1_000)).toThrow(/^Not a condition/);
  });
});
