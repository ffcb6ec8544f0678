/**
 * The simulated network between nodes (master, agents). A message is an
 * action delivered after the link latency, unless the link is cut. Faults
 * are therefore ordinary inputs: cutting a link is a property of the
 * network, not of the nodes.
 */
import type { EventLoop } from './event-loop.js';

export interface NetworkOptions {
  /** One-way latency of every link, in milliseconds. */
  readonly latencyMs?: number;
}

export class Network {
  readonly #cut = new Set<string>();
  readonly #latencyMs: number;

  constructor(private readonly loop: EventLoop, options: NetworkOptions = {}) {
    this.#latencyMs = options.latencyMs ?? 0;
  }

  /** Delivers `action` at `to` after the latency, if the link is up then. */
  send(from: string, to: string, label: string, action: () => void): void {
    this.loop.schedule(this.#latencyMs, label, () => {
      if (!this.isCut(from, to)) action();
    });
  }

  cut(a: string, b: string): void {
    this.#cut.add(linkKey(a, b));
  }

  heal(a: string, b: string): void {
    this.#cut.delete(linkKey(a, b));
  }

  isCut(a: string, b: string): boolean {
    return this.#cut.has(linkKey(a, b));
  }
}

function linkKey(a: string, b: string): string {
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}
