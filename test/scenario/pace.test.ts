import { describe, expect, it } from 'vitest';
import { ConductedPace } from '../../src/runtime/pace.js';

describe('a conducted pace', () => {
  it('fires timers only when the conductor moves the clock, in order of time and then of setting', async () => {
    let now = 0;
    const pace = new ConductedPace(() => now);
    const fired: string[] = [];
    void pace.timer(500).done.then(() => fired.push('b'));
    void pace.timer(100).done.then(() => fired.push('a'));
    void pace.timer(500).done.then(() => fired.push('c'));
    const cancelled = pace.timer(200);
    void cancelled.done.then(() => fired.push('cancelled'));
    cancelled.cancel();
    expect(pace.nextDueMs()).toBe(100);
    expect(pace.fireDue()).toBe(false);
    now = 499;
    expect(pace.fireDue()).toBe(true);
    await Promise.resolve();
    expect(fired).toEqual(['a']);
    now = 500;
    pace.fireDue();
    await Promise.resolve();
    expect(fired).toEqual(['a', 'b', 'c']);
    expect(pace.nextDueMs()).toBeUndefined();
  });

  it('runs each turn to its end before the next, in the order they were asked for, only when granted', async () => {
    const pace = new ConductedPace(() => 0);
    const log: string[] = [];
    const work = (name: string) => async () => {
      log.push(`${name} starts`);
      await new Promise((resolve) => setImmediate(resolve));
      log.push(`${name} ends`);
      return name;
    };
    const first = pace.turn(work('first'));
    const second = pace.turn(work('second'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual([]);
    expect(pace.waiting).toBe(true);
    await pace.runTurns();
    expect(log).toEqual(['first starts', 'first ends', 'second starts', 'second ends']);
    expect(await Promise.all([first, second])).toEqual(['first', 'second']);
    expect(pace.busy).toBe(false);
  });

  it('hands a failed turn its error and goes on with the next', async () => {
    const pace = new ConductedPace(() => 0);
    const failed = pace.turn(async () => {
      throw new Error('refused');
    });
    const next = pace.turn(async () => 'next');
    await pace.runTurns();
    await expect(failed).rejects.toThrow('refused');
    await expect(next).resolves.toBe('next');
  });

  it('lets go when released: timers fire, waiting turns run, and nothing waits from then on', async () => {
    const pace = new ConductedPace(() => 0);
    const timer = pace.timer(60_000);
    const turn = pace.turn(async () => 'ran');
    pace.release();
    await timer.done;
    await expect(turn).resolves.toBe('ran');
    await pace.timer(1_000).done;
    await expect(pace.turn(async () => 'at once')).resolves.toBe('at once');
  });
});
