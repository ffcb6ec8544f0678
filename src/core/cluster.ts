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
import { add, format, normalise, rangesSize, type Resources } from './resources.js';
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
   * executors), and never exceeds the agent's total. Compared as quantities
   * per identity (scalar milli, range and set sizes) so the check stays
   * cheap enough to run after every input; the allocator's own `subtract`
   * already asserts exact containment of ranges and sets.
   */
  checkInvariants(): void {
    const accounted = this.master.accountedByAgent();
    for (const agent of this.agents) {
      const allocated = quantities(this.master.allocator.allocation(agent.id).values());
      const held = quantities(accounted.get(agent.id) ?? []);
      if (!sameQuantities(allocated, held)) this.#fail(agent.id, accounted.get(agent.id) ?? []);
      const total = quantities([agent.config.resources], true);
      for (const [key, n] of quantities(this.master.allocator.allocation(agent.id).values(), true)) {
        if (n > (total.get(key) ?? 0)) this.#fail(agent.id, accounted.get(agent.id) ?? []);
      }
    }
  }

  #fail(agentId: string, accounted: readonly Resources[]): never {
    let allocated: Resources = [];
    for (const bag of this.master.allocator.allocation(agentId).values()) allocated = add(allocated, bag);
    let held: Resources = [];
    for (const bag of accounted) held = add(held, bag);
    const agent = this.agents.find((a) => a.id === agentId)!;
    throw new Error(
      `invariant: agent '${agentId}' total {${format(agent.config.resources)}}, allocator holds {${format(normalise(allocated))}}, master accounts {${format(normalise(held))}}`,
    );
  }
}

/** Quantity per resource identity: scalar milli, number of range values, set size. */
function quantities(bags: Iterable<Resources>, ignoreAllocation = false): Map<string, number> {
  const out = new Map<string, number>();
  for (const bag of bags) {
    for (const r of bag) {
      const key = `${r.name}\u0000${r.role}\u0000${ignoreAllocation ? '' : (r.allocationRole ?? '')}`;
      const n = r.type === 'SCALAR' ? (r.milli ?? 0) : r.type === 'RANGES' ? rangesSize(r.ranges ?? []) : (r.set?.length ?? 0);
      out.set(key, (out.get(key) ?? 0) + n);
    }
  }
  return out;
}

function sameQuantities(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): boolean {
  for (const [key, n] of a) if (n !== 0 && b.get(key) !== n) return false;
  for (const [key, n] of b) if (n !== 0 && a.get(key) !== n) return false;
  return true;
}
