/**
 * The one event queue of the simulation. Every timer of the cluster
 * (heartbeats, failover timeouts, filter expiry, update retries, task
 * durations, message delivery) is an entry here, ordered totally by due
 * time, then the order scheduled: ties break by insertion order, never by
 * how a heap happens to break them, so a run is a pure function of its seed
 * and its inputs.
 */

import { heapPop, heapPush } from './heap.js';

declare const TIMER: unique symbol;
/** A scheduled timer, to cancel it: opaque (the loop's own entry, so cancelling looks nothing up). */
export type TimerId = { readonly [TIMER]: true };

/**
 * What a timer runs: a function, or a record that knows what to do when
 * its time comes (no closure of its own: a million long tasks each wait on
 * one timer).
 */
export type TimerAction = (() => void) | { onTimer(): void };

/** What a node uses of the loop: the clock and its own timers. */
export interface Timers {
  now(): number;
  schedule(delayMs: number, label: string, action: TimerAction): TimerId;
  cancel(timer: TimerId | undefined): void;
}

/** Runs a timer's action. */
export function fire(action: TimerAction): void {
  if (typeof action === 'function') action();
  else action.onTimer();
}

interface Entry {
  readonly label: string;
  /**
   * What it runs; dropped (`SPENT`) once the timer has run or is cancelled, so that a held id keeps nothing
   * alive: a timer is live while its action is not `SPENT` (no flag of its own: a million timers wait at once).
   */
  action: TimerAction;
  /** Not one of the `BACKGROUND_TIMERS`. */
  readonly foreground: boolean;
}

const SPENT: TimerAction = () => undefined;

/** What a bucket holds in the place of an entry it has passed: an instant of a million timers keeps none alive. */
const PASSED: Entry = { label: 'passed', action: SPENT, foreground: false };

/** What a closed scope hands out: a timer that never runs. */
const NEVER: Entry = { label: 'never', action: SPENT, foreground: false };

/**
 * The timers due at one instant, in the order scheduled:
 * clusters schedule many timers for the same instant (the master's pings of
 * agents that registered together, messages on links without latency), and
 * one heap entry per instant makes scheduling those a push on an array.
 */
interface Bucket {
  readonly dueMs: number;
  readonly entries: Entry[];
  /** The index of the next entry to run. */
  next: number;
}

/**
 * Timers that keep a quiet cluster alive rather than do work of their own:
 * heartbeats, pings and their messages, and retries that wait for an
 * answer from outside the cluster (an acknowledgement, a reachable
 * master). A cluster with only these left is idle (`runUntilQuiet`).
 */
export const BACKGROUND_TIMERS: ReadonlySet<string> = new Set([
  'framework:heartbeat',
  'operator:heartbeat',
  'executor:heartbeat',
  'agent:ping-timeout',
  'agent:master-ping-timeout',
  'agent:register-retry',
  'status-update:retry',
  'operation-update:retry',
  'net:PING',
  'net:PONG',
  'sandbox:gc',
]);

/**
 * Timers whose zero-delay chains end by construction, which the guard
 * below does not count: the small shell's steps and sleeps, one for each
 * command of a script that has no loops and whose length is bounded
 * (shell.ts). Long scripts waking at one instant would pass any fixed number.
 */
export const FINITE_TIMERS: ReadonlySet<string> = new Set(['shell:step', 'shell:sleep']);

/**
 * A guard against a zero-delay loop that would never let time move: the
 * steps one instant may take, at least this many, and more for a large
 * cluster (each timer pending as the instant begins may start a chain of
 * messages: a failover of 40,000 agents with 400,000 tasks takes well over
 * a million steps in the instant of the election).
 */
const MIN_STEPS_PER_INSTANT = 1_000_000;
const STEPS_PER_PENDING_TIMER = 16;

export class EventLoop implements Timers {
  #nowMs = 0;
  /** The instants that have a bucket, as a min-heap. */
  #heap: number[] = [];
  #buckets = new Map<number, Bucket>();
  /** How many timers are scheduled and neither run nor cancelled yet. */
  #live = 0;
  /** How many live timers are in the foreground. */
  #foreground = 0;
  /** The label of the timer run last (`step`). */
  #lastLabel = '';

  now(): number {
    return this.#nowMs;
  }

  /** Schedules `action` after `delayMs` (clamped at zero, whole milliseconds). */
  schedule(delayMs: number, label: string, action: TimerAction): TimerId {
    const delay = Number.isFinite(delayMs) && delayMs > 0 ? Math.ceil(delayMs) : 0;
    const foreground = !BACKGROUND_TIMERS.has(label);
    const entry: Entry = { label, action, foreground };
    this.#live++;
    if (foreground) this.#foreground++;
    const dueMs = this.#nowMs + delay;
    let bucket = this.#buckets.get(dueMs);
    if (bucket === undefined) {
      bucket = { dueMs, entries: [], next: 0 };
      this.#buckets.set(dueMs, bucket);
      heapPush(this.#heap, dueMs, earlier);
    }
    bucket.entries.push(entry);
    return entry as unknown as TimerId;
  }

  /**
   * Cancels a timer that has not run yet. Cancelling one that already ran or
   * was already cancelled does nothing (handlers routinely cancel their own,
   * running timer).
   */
  cancel(timer: TimerId | undefined): void {
    const entry = timer as unknown as Entry | undefined;
    if (entry === undefined || entry.action === SPENT) return;
    this.#retire(entry);
  }

  #retire(entry: Entry): void {
    entry.action = SPENT;
    this.#live--;
    if (entry.foreground) this.#foreground--;
  }

  /** Due time of the next live timer, or undefined when the queue is empty. */
  nextDueMs(): number | undefined {
    return this.#head()?.dueMs;
  }

  pending(): number {
    return this.#live;
  }

  /** Runs the next timer, moving the clock to its due time. False when idle. */
  step(): boolean {
    const bucket = this.#head();
    if (bucket === undefined) return false;
    const entry = bucket.entries[bucket.next]!;
    bucket.entries[bucket.next++] = PASSED;
    const action = entry.action;
    this.#retire(entry);
    this.#nowMs = bucket.dueMs;
    this.#lastLabel = entry.label;
    fire(action);
    return true;
  }

  /**
   * Runs every timer due at or before `untilMs`, then sets the clock to it.
   * A guard counts the steps taken at one instant: time that never moves
   * means a zero-delay loop, a bug; a long span of real work is fine. The
   * steps of `FINITE_TIMERS` are not counted.
   */
  runUntil(untilMs: number): void {
    let stepsAtInstant = 0;
    let instant = this.#nowMs;
    let limit = this.#stepLimit();
    for (;;) {
      const due = this.nextDueMs();
      if (due === undefined || due > untilMs) break;
      this.step();
      if (this.#nowMs !== instant) {
        instant = this.#nowMs;
        stepsAtInstant = 0;
        limit = this.#stepLimit();
      } else if (!FINITE_TIMERS.has(this.#lastLabel) && ++stepsAtInstant > limit) {
        throw new Error(`event loop: more than ${limit} steps at ${instant} ms`);
      }
    }
    if (untilMs > this.#nowMs) this.#nowMs = untilMs;
  }

  /** Runs everything already due without moving the clock. */
  runDue(): void {
    this.runUntil(this.#nowMs);
  }

  /** Live timers that are not background timers (`BACKGROUND_TIMERS`). */
  foregroundPending(): number {
    return this.#foreground;
  }

  /**
   * Runs timers in order until only background timers are left (true, the
   * clock at the last timer run) or the next foreground one falls after
   * `untilMs` (false, the clock at `untilMs`, everything due by then run).
   */
  runUntilQuiet(untilMs: number): boolean {
    return this.runUntilHolds(untilMs, () => this.#foreground === 0);
  }

  /**
   * Runs timers in order, asking `holds` at the start and after each
   * instant's timers have all run; stops at the first instant it holds
   * (true) or, when it never does, at `untilMs` (false).
   */
  runUntilHolds(untilMs: number, holds: () => boolean): boolean {
    if (holds()) return true;
    for (;;) {
      const due = this.nextDueMs();
      if (due === undefined || due > untilMs) break;
      this.runUntil(due);
      if (holds()) return true;
    }
    this.runUntil(untilMs);
    return holds();
  }

  /** Runs until the queue is empty or `limitMs` of virtual time is reached. */
  runUntilIdle(limitMs = Number.MAX_SAFE_INTEGER): void {
    for (;;) {
      const due = this.nextDueMs();
      if (due === undefined || due > limitMs) return;
      this.step();
    }
  }

  #stepLimit(): number {
    return Math.max(MIN_STEPS_PER_INSTANT, STEPS_PER_PENDING_TIMER * this.#live);
  }

  /** The bucket of the next live timer, its cancelled and spent entries passed over. */
  #head(): Bucket | undefined {
    for (;;) {
      const dueMs = this.#heap[0];
      if (dueMs === undefined) return undefined;
      const bucket = this.#buckets.get(dueMs)!;
      const { entries } = bucket;
      while (bucket.next < entries.length && entries[bucket.next]!.action === SPENT) entries[bucket.next++] = PASSED;
      if (bucket.next < entries.length) return bucket;
      this.#buckets.delete(dueMs);
      heapPop(this.#heap, earlier);
    }
  }
}

function earlier(a: number, b: number): boolean {
  return a < b;
}

/**
 * A node's timers on the loop, all cancelled at once when the process
 * dies: a crashed master's heartbeats, pings, failover and offer timers
 * and allocation runs never fire after it. A closed scope schedules
 * nothing.
 */
export class TimerScope implements Timers {
  readonly #live = new Set<TimerId>();
  #closed = false;

  constructor(private readonly loop: Timers) {}

  now(): number {
    return this.loop.now();
  }

  schedule(delayMs: number, label: string, action: TimerAction): TimerId {
    if (this.#closed) return NEVER as unknown as TimerId;
    const id = this.loop.schedule(delayMs, label, () => {
      this.#live.delete(id);
      fire(action);
    });
    this.#live.add(id);
    return id;
  }

  cancel(timer: TimerId | undefined): void {
    if (timer !== undefined && this.#live.delete(timer)) this.loop.cancel(timer);
  }

  /** Cancels every timer still pending; nothing is scheduled afterwards. */
  close(): void {
    this.#closed = true;
    for (const timer of this.#live) this.loop.cancel(timer);
    this.#live.clear();
  }
}
