/**
 * The pace of a run in real time: the runner looks again when the cluster
 * changes (a trace entry), when its next instant falls due, or after a
 * short poll at most, for what the trace does not show (a process that
 * ended, a framework's own timers).
 */
import type { Trace } from '../core/kernel/trace.js';

/** The longest the runner sleeps (wall clock) between two looks. */
export const POLL_MS = 50;

export class RealtimeLoop {
  #wake: (() => void) | undefined;
  #changed = false;
  readonly #listener = (): void => {
    this.#changed = true;
    this.#wake?.();
  };

  constructor(private readonly trace: Trace) {
    trace.onEntry(this.#listener);
  }

  /** Waits until the cluster changes, or `ms` pass (at most POLL_MS). */
  async waitUntil(ms: number): Promise<void> {
    if (this.#changed) {
      this.#changed = false;
      // Let the frameworks' answers in flight arrive before the next look.
      await new Promise((resolve) => setTimeout(resolve, 1));
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.#wake = resolve;
      timer = setTimeout(resolve, Math.max(1, Math.min(ms, POLL_MS)));
    });
    clearTimeout(timer);
    this.#wake = undefined;
    this.#changed = false;
  }

  close(): void {
    this.trace.offEntry(this.#listener);
    this.#wake?.();
  }
}
