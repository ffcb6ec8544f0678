/**
 * The agent's watch on its master's pings, as upstream's agent keeps it: a
 * master that has not pinged for `MASTER_PING_TIMEOUT_MS` (75 s: the ping
 * timeout times the timeouts allowed) is taken for lost. A ping only notes
 * its time; the one timer, when it fires before the silence is long enough,
 * waits for the rest of it. So a ping every 15 s costs no timer of its own,
 * and the watch fires at the same instant as a timer restarted by every ping.
 *
 * Quiet pings (master/agent-health.ts) count as pings heard; while they go
 * on the watch sleeps, and the network wakes it when they end, to count the
 * silence from the last of them.
 */
import type { TimerId, Timers } from '../kernel/event-loop.js';
import type { Network } from '../network/network.js';

export class PingWatch {
  #lastMs = 0;
  #timer: TimerId | undefined;
  #sleeping = false;

  constructor(
    private readonly loop: Timers,
    private readonly network: Network,
    private readonly nodeId: string,
    private readonly timeoutMs: number,
    private readonly onSilent: () => void,
  ) {
    network.onQuietPingsEnded(nodeId, () => this.#wake());
  }

  /** A PING (or the registration that starts the watch). */
  heard(): void {
    this.#lastMs = this.loop.now();
    if (this.#timer === undefined) this.#arm(this.timeoutMs);
  }

  /** The process is gone: nothing is watched until it hears from its master again. */
  stop(): void {
    this.loop.cancel(this.#timer);
    this.#timer = undefined;
    this.#sleeping = false;
  }

  /** Quiet pings ended: the last of them is kept as heard (the master that gave them may be gone), and a sleeping watch wakes. */
  #wake(): void {
    this.#lastMs = Math.max(this.#lastMs, this.network.quietPingMs(this.nodeId) ?? 0);
    if (!this.#sleeping) return;
    this.#arm(Math.max(0, this.timeoutMs - this.#silentMs()));
  }

  #silentMs(): number {
    return this.loop.now() - Math.max(this.#lastMs, this.network.quietPingMs(this.nodeId) ?? 0);
  }

  #arm(delayMs: number): void {
    this.#sleeping = false;
    this.#timer = this.loop.schedule(delayMs, 'agent:master-ping-timeout', () => {
      this.#timer = undefined;
      if (this.network.quietPingsGoOn(this.nodeId)) {
        this.#sleeping = true;
        return;
      }
      const silentMs = this.#silentMs();
      if (silentMs < this.timeoutMs) this.#arm(this.timeoutMs - silentMs);
      else this.onSilent();
    });
  }
}
