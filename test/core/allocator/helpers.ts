/**
 * The allocator on a bare core context, for allocator tests: decisions
 * become offers held by a small model of the master (outstanding offers,
 * resources in use), so tests can accept, decline and finish them as a
 * master would.
 */
import { Allocator, type OfferDecision } from '../../../src/core/allocator/allocator.js';
import type { SimContext } from '../../../src/core/network/context.js';
import { EventLoop } from '../../../src/core/kernel/event-loop.js';
import { Network } from '../../../src/core/network/network.js';
import {
  allocate as withAllocationRole,
  parseResources,
  subtract,
  type Resources,
} from '../../../src/core/model/resources.js';
import { Rng } from '../../../src/core/kernel/rng.js';
import { Trace } from '../../../src/core/kernel/trace.js';

export function bag(text: string): Resources {
  const r = parseResources(text);
  if (typeof r === 'string') throw new Error(r);
  return r;
}

export interface HeldOffer {
  readonly frameworkId: string;
  readonly agentId: string;
  readonly role: string;
  /** Tagged with the allocation role, as the master holds them. */
  readonly resources: Resources;
}

export class AllocatorHarness {
  readonly loop = new EventLoop();
  readonly ctx: SimContext;
  readonly allocator: Allocator;
  readonly offers: HeldOffer[] = [];
  readonly used: HeldOffer[] = [];
  /** Every decision, in order. */
  readonly decided: OfferDecision[] = [];
  onDecision: (d: OfferDecision) => void = () => {};

  constructor(seed = 'test', intervalMs = 1000) {
    const rng = new Rng(seed);
    const trace = new Trace(this.loop);
    this.ctx = { loop: this.loop, rng, trace, network: new Network(this.loop, trace, rng.fork('network')), epochMs: 0 };
    this.allocator = new Allocator(this.ctx, (ds) => this.#take(ds), intervalMs);
  }

  /** Runs a pass now (besides those the allocator schedules itself). */
  allocate(): OfferDecision[] {
    const ds = this.allocator.allocate();
    this.#take(ds);
    return ds;
  }

  /** Moves virtual time on, running the allocator's timers. */
  advance(ms: number): void {
    this.loop.runUntil(this.loop.now() + ms);
  }

  /** Runs what is due now. */
  settle(): void {
    this.loop.runDue();
  }

  decline(offer: HeldOffer, refuseMs = 0): void {
    this.#remove(this.offers, offer);
    this.allocator.recoverResources(offer.frameworkId, offer.agentId, offer.resources, refuseMs);
  }

  /** Uses `part` of an offer (tagged) and declines the rest. */
  accept(offer: HeldOffer, part: Resources, refuseMs = 0): void {
    this.#remove(this.offers, offer);
    const rest = subtract(offer.resources, part);
    if (part.length > 0) this.used.push({ ...offer, resources: part });
    if (rest.length > 0) this.allocator.recoverResources(offer.frameworkId, offer.agentId, rest, refuseMs);
  }

  finish(used: HeldOffer): void {
    this.#remove(this.used, used);
    this.allocator.recoverResources(used.frameworkId, used.agentId, used.resources);
  }

  offersOf(frameworkId: string): HeldOffer[] {
    return this.offers.filter((o) => o.frameworkId === frameworkId);
  }

  #take(ds: readonly OfferDecision[]): void {
    for (const d of ds) {
      this.decided.push(d);
      this.onDecision(d);
      this.offers.push({
        frameworkId: d.frameworkId,
        agentId: d.agentId,
        role: d.role,
        resources: withAllocationRole(d.resources, d.role),
      });
    }
  }

  #remove(list: HeldOffer[], item: HeldOffer): void {
    const at = list.indexOf(item);
    if (at < 0) throw new Error('harness: unknown offer');
    list.splice(at, 1);
  }
}

/** Scalar quantities of a bag, milli by name. */
export function scalars(resources: Resources): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of resources) if (r.type === 'SCALAR') out[r.name] = (out[r.name] ?? 0) + (r.milli ?? 0);
  return out;
}
