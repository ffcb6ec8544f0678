/**
 * The one event queue of the simulation. Every timer of the cluster
 * (heartbeats, failover timeouts, filter expiry, update retries, task
 * durations, message delivery) is an entry here, ordered totally by
 * `(dueMs, seq)`: ties break by insertion order, never by how a heap happens
 * to break them, so a run is a pure function of its seed and its inputs.
 */

import { heapPop, heapPush } from './heap.js';

export type TimerId = number;

interface Entry {
  readonly seq: number;
  readonly label: string;
  readonly action: () => void;
  cancelled: boolean;
}

/**
 * The timers due at one instant, in the order scheduled (so by `seq`):
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

/** A guard against a zero-delay loop that would never let time move. */
const MAX_STEPS_PER_INSTANT = 1_000_000;

export class EventLoop {
  #nowMs = 0;
  #seq = 0;
  /** The instants that have a bucket, as a min-heap. */
  #heap: number[] = [];
  #buckets = new Map<number, Bucket>();
  /** Timers scheduled and neither run nor cancelled yet. */
  #live = new Map<number, Entry>();

  now(): number {
    return this.#nowMs;
  }

  /** Schedules `action` after `delayMs` (clamped at zero, whole milliseconds). */
  schedule(delayMs: number, label: string, action: () => void): TimerId {
    const delay = Number.isFinite(delayMs) && delayMs > 0 ? Math.ceil(delayMs) : 0;
    const seq = ++this.#seq;
    const entry: Entry = { seq, label, action, cancelled: false };
    this.#live.set(seq, entry);
    const dueMs = this.#nowMs + delay;
    let bucket = this.#buckets.get(dueMs);
    if (bucket === undefined) {
      bucket = { dueMs, entries: [], next: 0 };
      this.#buckets.set(dueMs, bucket);
      heapPush(this.#heap, dueMs, earlier);
    }
    bucket.entries.push(entry);
    return seq;
  }

  /**
   * Cancels a timer that has not run yet. Cancelling one that already ran or
   * was already cancelled does nothing (handlers routinely cancel their own,
   * running timer).
   */
  cancel(timer: TimerId | undefined): void {
    if (timer === undefined) return;
    const entry = this.#live.get(timer);
    if (entry === undefined) return;
    this.#live.delete(timer);
    entry.cancelled = true;
  }

  /** Due time of the next live timer, or undefined when the queue is empty. */
  nextDueMs(): number | undefined {
    return this.#head()?.dueMs;
  }

  pending(): number {
    return this.#live.size;
  }

  /** Runs the next timer, moving the clock to its due time. False when idle. */
  step(): boolean {
    const bucket = this.#head();
    if (bucket === undefined) return false;
    const entry = bucket.entries[bucket.next++]!;
    this.#live.delete(entry.seq);
    this.#nowMs = bucket.dueMs;
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

  /** Runs until the queue is empty or `limitMs` of virtual time is reached. */
  runUntilIdle(limitMs = Number.MAX_SAFE_INTEGER): void {
    for (;;) {
      const due = this.nextDueMs();
      if (due === undefined || due > limitMs) return;
      this.step();
    }
  }

  /** The bucket of the next live timer, its cancelled and spent entries passed over. */
  #head(): Bucket | undefined {
    for (;;) {
      const dueMs = this.#heap[0];
      if (dueMs === undefined) return undefined;
      const bucket = this.#buckets.get(dueMs)!;
      const { entries } = bucket;
      while (bucket.next < entries.length && entries[bucket.next]!.cancelled) bucket.next++;
      if (bucket.next < entries.length) return bucket;
      this.#buckets.delete(dueMs);
      heapPop(this.#heap, earlier);
    }
  }
}

function earlier(a: number, b: number): boolean {
  return a < b;
}
