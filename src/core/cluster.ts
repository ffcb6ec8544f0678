/**
 * A whole simulated cluster: one event loop, one seed, one trace, a master
 * and its agents on a simulated network. This is the core's entry point;
 * the HTTP layer and the runtime drive it, tests drive it directly.
 */
import { Agent, type AgentConfig } from './agent/agent.js';
import type { SimContext } from './context.js';
import { EventLoop } from './event-loop.js';
import { Master, type MasterOptions } from './master/master.js';
import { Network } from './network.js';
import { add, contains, format, normalise, type Resources } from './resources.js';
import { Rng } from './rng.js';
import { Trace } from './trace.js';

export interface ClusterOptions {
  readonly seed?: string | number;
  /** Cluster time zero, in milliseconds since the Unix epoch. */
  readonly epochMs?: number;
  readonly master: MasterOptions;
  readonly networkLatencyMs?: number;
  /** Keep the whole trace in memory (tests and scenarios). */
  readonly recordTrace?: boolean;
  /** Check the resource invariants after every input (on unless turned off). */
  readonly checkInvariants?: boolean;
}

/** 2023-11-14T22:13:20Z: a fixed epoch, so that virtual runs are replayable. */
export const DEFAULT_EPOCH_MS = 1_700_000_000_000;

export type AgentSpec = Omit<AgentConfig, 'id'>;

export class Cluster {
  readonly ctx: SimContext;
  readonly master: Master;
  readonly agents: Agent[] = [];
  readonly seed: string;
  readonly #checkInvariants: boolean;

  constructor(options: ClusterOptions) {
    this.seed = String(options.seed ?? 0);
    const loop = new EventLoop();
    const rng = new Rng(this.seed);
    const trace = new Trace(loop, { record: options.recordTrace ?? false });
    const network = new Network(loop, { latencyMs: options.networkLatencyMs ?? 0 });
    this.ctx = { loop, rng, trace, network, epochMs: options.epochMs ?? DEFAULT_EPOCH_MS };
    this.#checkInvariants = options.checkInvariants ?? true;
    trace.append('cluster:start', { seed: this.seed, epochMs: this.ctx.epochMs });
    this.master = new Master(this.ctx, options.master);
  }

  get loop(): EventLoop {
    return this.ctx.loop;
  }

  get trace(): Trace {
    return this.ctx.trace;
  }

  addAgent(spec: AgentSpec): Agent {
    const agent = new Agent(this.ctx, { ...spec, id: this.master.ids.agent() }, this.master);
    this.agents.push(agent);
    this.master.addAgent(agent);
    return agent;
  }

  /** Applies an input, then runs whatever became due at the current time. */
  input<T>(apply: () => T): T {
    const result = apply();
    this.ctx.loop.runDue();
    if (this.#checkInvariants) this.checkInvariants();
    return result;
  }

  /** Moves virtual time forward, running every timer on the way. */
  advance(ms: number): void {
    this.ctx.loop.runUntil(this.ctx.loop.now() + ms);
    if (this.#checkInvariants) this.checkInvariants();
  }

  /**
   * Resources are conserved: on every agent, what the allocator holds as
   * allocated equals what the master accounts (offers, live tasks,
   * executors), and never exceeds the agent's total.
   */
  checkInvariants(): void {
    for (const agent of this.agents) {
      let allocated: Resources = [];
      for (const bag of this.master.allocator.allocation(agent.id).values()) allocated = add(allocated, bag);
      let accounted: Resources = [];
      for (const bag of this.master.accountedOn(agent.id)) accounted = add(accounted, bag);
      const a = format(normalise(allocated));
      const b = format(normalise(accounted));
      if (a !== b) {
        throw new Error(`invariant: agent '${agent.id}' allocator holds {${a}} but the master accounts {${b}}`);
      }
      const untagged = normalise(allocated.map(({ allocationRole: _r, ...r }) => r));
      if (!contains(agent.config.resources, untagged)) {
        throw new Error(`invariant: agent '${agent.id}' allocates {${format(untagged)}} beyond its total`);
      }
    }
  }
}
