import type { Timers } from '../kernel/event-loop.js';
import type { Network } from './network.js';
import type { Probes } from '../kernel/probes.js';
import type { Rng } from '../kernel/rng.js';
import type { Trace } from '../kernel/trace.js';

/** What every node of the simulation is handed: time, randomness, trace, links. */
export interface SimContext {
  /** The clock and timers (the cluster runs the loop itself). */
  readonly loop: Timers;
  readonly rng: Rng;
  readonly trace: Trace;
  readonly network: Network;
  /** Cluster time zero as milliseconds since the Unix epoch. */
  readonly epochMs: number;
  /** Steps of the wall clock since the start (clock_jump faults); none when absent. */
  readonly wallClock?: WallClock;
  /** Where the runtime times the core's work (allocation runs); none when absent. */
  readonly probes?: Probes;
}

export interface WallClock {
  /** How far the wall clock reads ahead of epoch + elapsed cluster time. */
  stepMs: number;
}

/** Cluster time now, in milliseconds since the Unix epoch, as the nodes' wall clocks read it. */
export function wallTimeMs(ctx: SimContext): number {
  return ctx.epochMs + (ctx.wallClock?.stepMs ?? 0) + ctx.loop.now();
}
