/**
 * The one event queue of the simulation. Every timer of the cluster
 * (heartbeats, failover timeouts, filter expiry, update retries, task
 * durations, message delivery) is an entry here, ordered totally by
 * `(dueMs, seq)`: ties break by insertion order, never by how a heap happens
 * to break them, so a run is a pure function of its seed and its inputs.
 */

import { heapPop, heapPush } from './heap.js';

export type TimerId = number;

/** What a node uses of the loop: the clock and its own timers. */
export interface Timers {
  now(): number;
  schedule(delayMs: number, label: string, action: () => void): TimerId;
  cancel(timer: TimerId | undefined): void;
}

interface Entry {
  readonly dueMs: number;
  readonly seq: number;
  readonly label: string;
  readonly action: () => void;
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
]);

/** A guard against a zero-delay loop that would never let time move. */
const MAX_STEPS_PER_INSTANT = 1_000_000;

export class EventLoop implements Timers {
  #nowMs = 0;
  #seq = 0;
  #heap: Entry[] = [];
  /** Timers scheduled and neither run nor cancelled yet, and whether each is in the foreground (not a background timer). */
  #live = new Map<number, boolean>();
  /** How many live timers are in the foreground. */
  #foreground = 0;
  /** Cancelled timers still sitting in the heap, dropped when they reach its head. */
  #cancelled = new Set<number>();

  now(): number {
    return this.#nowMs;
  }

  /** Schedules `action` after `delayMs` (clamped at zero, whole milliseconds). */
  schedule(delayMs: number, label: string, action: () => void): TimerId {
    const delay = Number.isFinite(delayMs) && delayMs > 0 ? Math.ceil(delayMs) : 0;
    const seq = ++this.#seq;
    const foreground = !BACKGROUND_TIMERS.has(label);
    this.#live.set(seq, foreground);
    if (foreground) this.#foreground++;
    heapPush(this.#heap, { dueMs: this.#nowMs + delay, seq, label, action }, before);
    return seq;
  }

  /**
   * Cancels a timer that has not run yet. Cancelling one that already ran or
   * was already cancelled does nothing: otherwise it would be counted as
   * cancelled forever (handlers routinely cancel their own, running timer).
   */
  cancel(timer: TimerId | undefined): void {
    if (timer === undefined) return;
    const foreground = this.#live.get(timer);
    if (foreground === undefined) return;
    this.#live.delete(timer);
    if (foreground) this.#foreground--;
    this.#cancelled.add(timer);
  }

  /** Due time of the next live timer, or undefined when the queue is empty. */
  nextDueMs(): number | undefined {
    this.#dropCancelledHead();
    return this.#heap[0]?.dueMs;
  }

  pending(): number {
    return this.#live.size;
  }

  /** Runs the next timer, moving the clock to its due time. False when idle. */
  step(): boolean {
    this.#dropCancelledHead();
    const entry = heapPop(this.#heap, before);
    if (entry === undefined) return false;
    if (this.#live.get(entry.seq) === true) this.#foreground--;
    this.#live.delete(entry.seq);
    this.#nowMs = entry.dueMs;
    entry.action();
    return true;
  }

  /**
   * Runs every timer due at or before `untilMs`, then sets the clock to it.
   * A guard counts the steps taken at one instant: time that never moves
   * means a zero-delay loop, a bug; a long span of real work is fine.
   */
  runUntil(untilMs: number): void {
    let stepsAtInstant = 0;
    let instant = this.#nowMs;
    for (;;) {
      const due = this.nextDueMs();
      if (due === undefined || due > untilMs) break;
      this.step();
      if (this.#nowMs !== instant) {
        instant = this.#nowMs;
        stepsAtInstant = 0;
      } else if (++stepsAtInstant > MAX_STEPS_PER_INSTANT) {
        throw new Error(`event loop: more than ${MAX_STEPS_PER_INSTANT} steps at ${instant} ms`);
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

  #dropCancelledHead(): void {
    for (;;) {
      const head = this.#heap[0];
      if (head === undefined || !this.#cancelled.has(head.seq)) return;
      this.#cancelled.delete(head.seq);
      heapPop(this.#heap, before);
    }
  }
}

function before(a: Entry, b: Entry): boolean {
  return a.dueMs < b.dueMs || (a.dueMs === b.dueMs && a.seq < b.seq);
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

  schedule(delayMs: number, label: string, action: () => void): TimerId {
    if (this.#closed) return -1;
    const id = this.loop.schedule(delayMs, label, () => {
      this.#live.delete(id);
      action();
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
