/**
 * How a bundled framework meets time: its timers, and when it may act.
 *
 * A framework running as a service of its own keeps the wall clock and acts
 * as soon as anything happens (`OWN_PACE`). In a scenario run the runner
 * conducts it (`ConductedPace`): its timers run on cluster time and fire
 * only when the runner moves time, and each reaction (to an event, a
 * timer, a request of its API) waits for a turn that the runner grants one
 * at a time, in a fixed order. So the calls of several frameworks reach
 * the cluster in one order for one seed, as the scripted frameworks' do.
 */

export interface PaceTimer {
  /** Resolves when the time has passed; never, once cancelled. */
  readonly done: Promise<void>;
  cancel(): void;
}

export interface Pace {
  /** Milliseconds on this pace's clock. */
  now(): number;
  /** A timer of `ms` on this pace's clock. */
  timer(ms: number): PaceTimer;
  /** Runs `work` when it is this framework's turn to act: at once on its own pace. */
  turn<T>(work: () => Promise<T>): Promise<T>;
}

/** Where a conducted framework's event stream stands: the conductor waits until it has taken everything sent. */
export interface StreamLink {
  readonly frameworkId: string | undefined;
  /** Events received so far, over every stream (heartbeats too). */
  readonly received: number;
  readonly streamId: string | undefined;
  /** Whether a stream is open (none while it waits to subscribe again). */
  readonly open: boolean;
}

/** The wall clock, and every reaction at once. */
export const OWN_PACE: Pace = {
  now: () => Date.now(),
  timer(ms) {
    let handle: NodeJS.Timeout | undefined;
    const done = new Promise<void>((resolve) => {
      handle = setTimeout(resolve, ms);
      handle.unref();
    });
    return { done, cancel: () => clearTimeout(handle) };
  },
  turn: (work) => work(),
};

interface Pending {
  readonly dueMs: number;
  readonly resolve: () => void;
}

interface Turn {
  readonly work: () => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Timers on a clock the conductor moves, and turns it grants. Timers that
 * fall due at one instant fire in the order they were set; turns run in
 * the order they were asked for, one at a time.
 */
export class ConductedPace implements Pace {
  readonly #timers: Pending[] = [];
  readonly #turns: Turn[] = [];
  #running = 0;
  #released = false;

  constructor(private readonly clock: () => number) {}

  now(): number {
    return this.clock();
  }

  timer(ms: number): PaceTimer {
    let entry!: Pending;
    const done = new Promise<void>((resolve) => {
      entry = { dueMs: this.clock() + Math.max(0, ms), resolve };
    });
    if (this.#released) entry.resolve();
    else this.#timers.push(entry);
    return {
      done,
      cancel: () => {
        const i = this.#timers.indexOf(entry);
        if (i >= 0) this.#timers.splice(i, 1);
      },
    };
  }

  turn<T>(work: () => Promise<T>): Promise<T> {
    if (this.#released) return work();
    return new Promise<T>((resolve, reject) => {
      this.#turns.push({ work, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** The earliest instant a timer falls due, if any is set. */
  nextDueMs(): number | undefined {
    let next: number | undefined;
    for (const t of this.#timers) if (next === undefined || t.dueMs < next) next = t.dueMs;
    return next;
  }

  /** Fires every timer due by now, in the order they were set; whether any fired. */
  fireDue(): boolean {
    const now = this.clock();
    const due = this.#timers.filter((t) => t.dueMs <= now);
    if (due.length === 0) return false;
    for (const t of due) this.#timers.splice(this.#timers.indexOf(t), 1);
    for (const t of due) t.resolve();
    return true;
  }

  /** Whether a turn waits to run or runs. */
  get busy(): boolean {
    return this.#turns.length > 0 || this.#running > 0;
  }

  /** Whether a turn waits to be granted. */
  get waiting(): boolean {
    return this.#turns.length > 0;
  }

  /**
   * The conductor lets go (the run ended): every timer fires, turns asked
   * for run at once, and from now on nothing waits, so that the framework
   * can close.
   */
  release(): void {
    this.#released = true;
    for (const t of this.#timers.splice(0)) t.resolve();
    void this.runTurns();
  }

  /** Runs the turns asked for, one at a time and each to its end, until none waits. */
  async runTurns(): Promise<void> {
    for (let turn = this.#turns.shift(); turn !== undefined; turn = this.#turns.shift()) {
      this.#running++;
      try {
        turn.resolve(await turn.work());
      } catch (error) {
        turn.reject(error);
      } finally {
        this.#running--;
      }
    }
  }
}
