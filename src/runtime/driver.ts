/**
 * Drivers move the core's virtual clock. `virtual`: time moves only when
 * told (`advance`); every input runs what is due at the current instant.
 * `realtime`: before each input the clock catches up with the wall clock,
 * and a single timer wakes the loop when its next event falls due.
 */
import type { Cluster } from '../core/cluster.js';

export type TimeMode = 'realtime' | 'virtual';

export interface ClusterDriver {
  readonly cluster: Cluster;
  readonly mode: TimeMode;
  /** Applies an input to the core at the current time. */
  input<T>(apply: () => T): T;
  /** Moves virtual time forward (virtual mode only). */
  advance(ms: number): void;
  close(): void;
}

export class VirtualDriver implements ClusterDriver {
  readonly mode = 'virtual';
  constructor(readonly cluster: Cluster) {}

  input<T>(apply: () => T): T {
    return this.cluster.input(apply);
  }

  advance(ms: number): void {
    this.cluster.advance(ms);
  }

  close(): void {}
}

export class RealtimeDriver implements ClusterDriver {
  readonly mode = 'realtime';
  readonly #originMs: number;
  #timer: NodeJS.Timeout | undefined;
  /** The virtual time the armed timer wakes up for. */
  #armedForMs: number | undefined;
  #closed = false;

  constructor(
    readonly cluster: Cluster,
    private readonly wallMs: () => number = () => performance.now(),
  ) {
    this.#originMs = wallMs() - cluster.loop.now();
    this.#arm();
  }

  input<T>(apply: () => T): T {
    this.#catchUp();
    const result = this.cluster.input(apply);
    this.#arm();
    return result;
  }

  advance(): void {
    throw new Error('advance() is only available with virtual time');
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  #catchUp(): void {
    this.cluster.loop.runUntil(Math.floor(this.wallMs() - this.#originMs));
  }

  /** Keeps one wall-clock timer for the next due event; re-arms only when that changes. */
  #arm(): void {
    if (this.#closed) return;
    const due = this.cluster.loop.nextDueMs();
    if (due === this.#armedForMs) return;
    clearTimeout(this.#timer);
    this.#armedForMs = due;
    if (due === undefined) return;
    const delay = Math.max(0, due - (this.wallMs() - this.#originMs));
    // Timers beyond ~24.8 days overflow setTimeout; wake up earlier and re-arm.
    this.#timer = setTimeout(() => {
      this.#armedForMs = undefined;
      this.#catchUp();
      this.#arm();
    }, Math.min(Math.ceil(delay), 2 ** 31 - 1));
    this.#timer.unref();
  }
}
