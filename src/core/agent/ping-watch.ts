/**
 * The agent's watch on its master's pings, as upstream's agent keeps it: a
 * master that has not pinged for `MASTER_PING_TIMEOUT_MS` (75 s: the ping
 * timeout times the timeouts allowed) is taken for lost. A ping only notes
 * its time; the one timer, when it fires before the silence is long enough,
 * waits for the rest of it. So a ping every 15 s costs no timer of its own,
 * and the watch fires at the same instant as a timer restarted by every ping.
 * Quiet pings (master/agent-health.ts) count as pings heard.
 */
import type { EventLoop, TimerId } from '../event-loop.js';

export class PingWatch {
  #lastMs = 0;
  #timer: TimerId | undefined;

  constructor(
    private readonly loop: EventLoop,
    private readonly timeoutMs: number,
    private readonly onSilent: () => void,
    /** When the master last pinged without messages (`Network.quietPingMs`). */
    private readonly lastQuietPingMs: () => number | undefined,
  ) {}

  /** A PING (or the registration that starts the watch). */
  heard(): void {
    this.#lastMs = this.loop.now();
    if (this.#timer === undefined) this.#arm(this.timeoutMs);
  }

  /** The process is gone: nothing is watched until it hears from its master again. */
  stop(): void {
    this.loop.cancel(this.#timer);
    this.#timer = undefined;
  }

  #arm(delayMs: number): void {
    this.#timer = this.loop.schedule(delayMs, 'agent:master-ping-timeout', () => {
      this.#timer = undefined;
      const silentMs = this.loop.now() - Math.max(this.#lastMs, this.lastQuietPingMs() ?? 0);
      if (silentMs < this.timeoutMs) this.#arm(this.timeoutMs - silentMs);
      else this.onSilent();
    });
  }
}
