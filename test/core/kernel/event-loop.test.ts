import { describe, expect, it } from 'vitest';
import { EventLoop, TimerScope, type TimerId } from '../../../src/core/kernel/event-loop.js';

function recorder(loop: EventLoop) {
  const log: string[] = [];
  const at = (delayMs: number, name: string) => loop.schedule(delayMs, name, () => log.push(`${loop.now()}:${name}`));
  return { log, at };
}

describe('event loop', () => {
  it('runs timers in order of due time, then of insertion', () => {
    const loop = new EventLoop();
    const { log, at } = recorder(loop);
    at(20, 'c');
    at(10, 'a');
    at(20, 'd');
    at(10, 'b');
    at(0, 'now');
    at(20, 'e');
    loop.runUntilIdle();
    expect(log).toEqual(['0:now', '10:a', '10:b', '20:c', '20:d', '20:e']);
  });

  it('keeps insertion order among many simultaneous timers (no heap tie-breaking)', () => {
    const loop = new EventLoop();
    const { log, at } = recorder(loop);
    const names = Array.from({ length: 200 }, (_, i) => `t${i}`);
    // Interleave two due times so that the heap is reshuffled a lot.
    names.forEach((name, i) => {
      at(i % 2 === 0 ? 5 : 3, name);
    });
    loop.runUntilIdle();
    const odd = names.filter((_, i) => i % 2 === 1).map((n) => `3:${n}`);
    const even = names.filter((_, i) => i % 2 === 0).map((n) => `5:${n}`);
    expect(log).toEqual([...odd, ...even]);
  });

  it('runs a timer scheduled at the current instant after those already due then', () => {
    const loop = new EventLoop();
    const log: string[] = [];
    loop.schedule(5, 'first', () => {
      log.push('first');
      loop.schedule(0, 'nested', () => log.push(`nested@${loop.now()}`));
    });
    loop.schedule(5, 'second', () => log.push('second'));
    loop.runUntilIdle();
    expect(log).toEqual(['first', 'second', 'nested@5']);
  });

  it('rounds delays up to whole milliseconds and clamps negative or non-finite ones to zero', () => {
    const loop = new EventLoop();
    const { log, at } = recorder(loop);
    at(1.2, 'ceil');
    at(-5, 'negative');
    at(Number.NaN, 'nan');
    loop.runUntilIdle();
    expect(log).toEqual(['0:negative', '0:nan', '2:ceil']);
  });

  it('cancel removes a timer wherever it sits in the queue, and cancelling twice or late is harmless', () => {
    const loop = new EventLoop();
    const { log, at } = recorder(loop);
    at(1, 'a');
    const b = at(2, 'b');
    at(3, 'c');
    const d = at(4, 'd');
    loop.cancel(b);
    loop.cancel(b);
    loop.cancel(undefined);
    expect(loop.pending()).toBe(3);
    loop.cancel(d);
    expect(loop.pending()).toBe(2);
    loop.runUntil(3);
    expect(log).toEqual(['1:a', '3:c']);
    expect(loop.pending()).toBe(0);
    expect(loop.nextDueMs()).toBeUndefined();
    // Cancelling a timer that already ran (or was already cancelled) changes nothing.
    const e = at(1, 'e');
    loop.runUntilIdle();
    loop.cancel(e);
    expect(loop.pending()).toBe(0);
    at(1, 'f');
    expect(loop.pending()).toBe(1);
    loop.runUntilIdle();
    expect(log).toEqual(['1:a', '3:c', '4:e', '5:f']);
  });

  it('a timer may cancel another one due at the same instant', () => {
    const loop = new EventLoop();
    const log: string[] = [];
    let victim: TimerId | undefined;
    loop.schedule(1, 'killer', () => {
      log.push('killer');
      loop.cancel(victim);
    });
    victim = loop.schedule(1, 'victim', () => log.push('victim'));
    loop.runUntilIdle();
    expect(log).toEqual(['killer']);
    expect(loop.pending()).toBe(0);
  });

  it('runUntil runs what is due up to and including the limit, then sets the clock to it', () => {
    const loop = new EventLoop();
    const { log, at } = recorder(loop);
    at(10, 'a');
    at(20, 'b');
    at(21, 'c');
    loop.runUntil(20);
    expect(log).toEqual(['10:a', '20:b']);
    expect(loop.now()).toBe(20);
    expect(loop.nextDueMs()).toBe(21);
    loop.runUntil(100);
    expect(log).toEqual(['10:a', '20:b', '21:c']);
    expect(loop.now()).toBe(100);
  });

  it('runUntilIdle empties the queue, moving the clock only to the last timer, and respects its limit', () => {
    const loop = new EventLoop();
    const { log, at } = recorder(loop);
    at(7, 'a');
    at(30, 'b');
    loop.runUntilIdle(10);
    expect(log).toEqual(['7:a']);
    expect(loop.now()).toBe(7);
    loop.runUntilIdle();
    expect(log).toEqual(['7:a', '30:b']);
    expect(loop.now()).toBe(30);
    expect(loop.step()).toBe(false);
  });

  it('runDue runs only what is due now', () => {
    const loop = new EventLoop();
    const { log, at } = recorder(loop);
    at(0, 'now');
    at(1, 'later');
    loop.runDue();
    expect(log).toEqual(['0:now']);
    expect(loop.now()).toBe(0);
  });

  it('the clock never moves backwards', () => {
    const loop = new EventLoop();
    const seen: number[] = [];
    loop.runUntil(50);
    loop.runUntil(10);
    expect(loop.now()).toBe(50);
    for (const delay of [5, 0, 3, 3, 1]) loop.schedule(delay, 'x', () => seen.push(loop.now()));
    loop.runUntil(40);
    expect(loop.now()).toBe(50);
    loop.runUntilIdle();
    expect(seen).toEqual([50, 51, 53, 53, 55]);
    expect(loop.now()).toBe(55);
  });

  it('guards against a zero-delay loop that would never let time move', () => {
    const loop = new EventLoop();
    const again = (): void => {
      loop.schedule(0, 'again', again);
    };
    again();
    expect(() => loop.runUntil(1)).toThrow(/more than/);
  });
});

describe('EventLoop guard', () => {
  it('lets a long span of real work run, and stops a zero-delay loop', async () => {
    const { EventLoop } = await import('../../../src/core/kernel/event-loop.js');
    const loop = new EventLoop();
    let ticks = 0;
    const tick = () => {
      ticks++;
      loop.schedule(1, 'tick', tick);
    };
    loop.schedule(1, 'tick', tick);
    loop.runUntil(2_000_000);
    expect(ticks).toBe(2_000_000);
    const spin = () => loop.schedule(0, 'spin', spin);
    loop.schedule(0, 'spin', spin);
    expect(() => loop.runUntil(loop.now())).toThrow(/steps at/);
  });

  it("does not count the shell's steps, which end by construction: long scripts waking at one instant pass any fixed number", async () => {
    const { EventLoop, FINITE_TIMERS } = await import('../../../src/core/kernel/event-loop.js');
    expect([...FINITE_TIMERS]).toEqual(['shell:step', 'shell:sleep']);
    const loop = new EventLoop();
    // Twenty scripts of 60,000 commands each (120 KB of `:;`), all sleeping until 1 s.
    let steps = 0;
    for (let script = 0; script < 20; script++) {
      let left = 60_000;
      const command = () => {
        steps++;
        if (--left > 0) loop.schedule(0, 'shell:step', command);
      };
      loop.schedule(1_000, 'shell:sleep', command);
    }
    loop.runUntil(1_000);
    expect(steps).toBe(1_200_000);
  });

  it('a scope cancels its live timers on close; a closed scope hands out timers that never run, and cancelling them is harmless', () => {
    const loop = new EventLoop();
    const scope = new TimerScope(loop);
    const log: string[] = [];
    scope.schedule(1, 'a', () => log.push('a'));
    const b = scope.schedule(2, 'b', () => log.push('b'));
    loop.schedule(3, 'outside', () => log.push('outside'));
    scope.cancel(b);
    expect(loop.pending()).toBe(2);
    scope.close();
    expect(loop.pending()).toBe(1);
    const late = scope.schedule(0, 'late', () => log.push('late'));
    scope.cancel(late);
    loop.cancel(late);
    expect(loop.pending()).toBe(1);
    loop.runUntilIdle();
    expect(log).toEqual(['outside']);
    expect(loop.pending()).toBe(0);
  });

  it('runs a record that knows its action (onTimer) as it runs a function, on the loop and through a scope', () => {
    const loop = new EventLoop();
    const scope = new TimerScope(loop);
    const log: string[] = [];
    const record = (name: string) => ({ onTimer: () => log.push(`${loop.now()}:${name}`) });
    loop.schedule(2, 'record', record('loop'));
    scope.schedule(1, 'record', record('scope'));
    const cancelled = loop.schedule(1, 'record', record('cancelled'));
    loop.schedule(1, 'fn', () => log.push(`${loop.now()}:fn`));
    loop.cancel(cancelled);
    loop.runUntilIdle();
    expect(log).toEqual(['1:scope', '1:fn', '2:loop']);
  });

  it('lets an instant with many timers due take more than a million steps (a large failover)', async () => {
    const { EventLoop } = await import('../../../src/core/kernel/event-loop.js');
    const loop = new EventLoop();
    let steps = 0;
    // Each of 250,000 timers due together starts a chain of four zero-delay steps (a message and its answers).
    const links: (() => void)[] = [];
    for (let left = 0; left <= 4; left++) {
      links.push(() => {
        steps++;
        if (left > 0) loop.schedule(0, 'chain', links[left - 1]!);
      });
    }
    for (let i = 0; i < 250_000; i++) loop.schedule(5, 'start', links[4]!);
    loop.runUntil(5);
    expect(steps).toBe(1_250_000);
  });
});
