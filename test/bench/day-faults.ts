/**
 * The fault schedule of the virtual-day benchmark, drawn from a seeded
 * stream: one fault every virtual minute on an agent drawn at random, and
 * the step that ends it some minutes later, so the cluster keeps running:
 *
 *   crash      the agent crashes; it restarts 10 s to 5 min later, in
 *              either recover mode (reconnect or cleanup)
 *   partition  the agent is cut from the master; healed 20 s to 4 min
 *              later, so some outlive the master's ping timeouts (75 s)
 *   delay      its messages to the master arrive 0.1 to 3 s late, with
 *              jitter, for 1 to 10 min
 *   drop       a share of the master's PINGs to it is lost, for 1 to 10 min
 *
 * Every step is a `Fault` of src/core/faults.ts, applied by `Cluster.inject`,
 * as a scenario's timeline or the control API would apply it. An agent
 * already under a fault is not drawn again until that fault has ended.
 */
import type { Outcome } from '../../src/core/model/errors.js';
import type { Fault, FaultResult } from '../../src/core/faults/vocabulary.js';
import { MASTER_NODE } from '../../src/core/model/messages.js';
import type { Rng } from '../../src/core/kernel/rng.js';

export const FAULT_EVERY_MS = 60_000;

/** Applies a fault as an input of the cluster (and delivers what it sent). */
export type Inject = (fault: Fault) => Outcome<FaultResult>;

export type FaultKind = 'crash' | 'partition' | 'delay' | 'drop';
const KINDS: readonly FaultKind[] = ['crash', 'partition', 'delay', 'drop'];

interface Pending {
  readonly atMs: number;
  readonly agentId: string;
  /** The ending step; a rule's id is known only once it was added. */
  readonly end: (ruleId: number | undefined) => Fault;
  readonly ruleId: number | undefined;
}

export class FaultPlan {
  /** Steps applied, by fault type. */
  readonly injected = new Map<Fault['type'], number>();
  /** Faults started, by kind. */
  readonly started = new Map<FaultKind, number>();
  readonly #pending: Pending[] = [];
  readonly #busy = new Set<string>();
  #nextStartMs = FAULT_EVERY_MS;

  constructor(
    private readonly agentIds: readonly string[],
    private readonly rng: Rng,
  ) {}

  /** When the next step falls due. */
  nextMs(): number {
    const end = this.#pending[0]?.atMs ?? Number.POSITIVE_INFINITY;
    return Math.min(end, this.#nextStartMs);
  }

  /** Applies every step due at `nowMs` (the cluster's time): ends first, then a new fault. */
  apply(inject: Inject, nowMs: number): void {
    while (this.#pending.length > 0 && this.#pending[0]!.atMs <= nowMs) {
      const step = this.#pending.shift()!;
      this.#inject(inject, step.end(step.ruleId));
      this.#busy.delete(step.agentId);
    }
    if (this.#nextStartMs <= nowMs) {
      this.#nextStartMs += FAULT_EVERY_MS;
      this.#start(inject, nowMs);
    }
  }

  get total(): number {
    let n = 0;
    for (const count of this.injected.values()) n += count;
    return n;
  }

  #start(inject: Inject, nowMs: number): void {
    let agentId = this.agentIds[this.rng.int(this.agentIds.length)]!;
    while (this.#busy.has(agentId)) agentId = this.agentIds[this.rng.int(this.agentIds.length)]!;
    const kind = KINDS[this.rng.int(KINDS.length)]!;
    this.started.set(kind, (this.started.get(kind) ?? 0) + 1);
    const between = (minS: number, maxS: number) => nowMs + (minS + this.rng.int(maxS - minS + 1)) * 1000;
    let ruleId: number | undefined;
    let end: Pending['end'];
    let atMs: number;
    switch (kind) {
      case 'crash': {
        this.#inject(inject, { type: 'crash_agent', agentId });
        const recover = this.rng.int(2) === 0 ? 'reconnect' : 'cleanup';
        end = () => ({ type: 'restart_agent', agentId, recover });
        atMs = between(10, 300);
        break;
      }
      case 'partition': {
        const nodes = [agentId, MASTER_NODE] as const;
        this.#inject(inject, { type: 'partition', nodes });
        end = () => ({ type: 'heal', nodes });
        atMs = between(20, 240);
        break;
      }
      case 'delay':
      case 'drop':
        ruleId = this.#inject(inject, { type: 'network_rule', rule: this.#rule(kind, agentId) });
        end = (id) => ({ type: 'remove_network_rule', ruleId: id! });
        atMs = between(60, 600);
        break;
    }
    this.#busy.add(agentId);
    this.#schedule({ atMs, agentId, end, ruleId });
  }

  #rule(kind: 'delay' | 'drop', agentId: string): Extract<Fault, { type: 'network_rule' }>['rule'] {
    if (kind === 'delay') {
      return { from: agentId, to: MASTER_NODE, action: 'delay', delayMs: 100 + this.rng.int(2901), jitterMs: 200 };
    }
    return {
      from: MASTER_NODE,
      to: agentId,
      types: ['PING'],
      action: 'drop',
      probability: 0.25 + this.rng.int(51) / 100,
    };
  }

  #inject(inject: Inject, fault: Fault): number | undefined {
    const outcome = inject(fault);
    if (!outcome.ok) throw new Error(`fault ${fault.type} refused: ${outcome.error.message}`);
    this.injected.set(fault.type, (this.injected.get(fault.type) ?? 0) + 1);
    return outcome.value.ruleId;
  }

  /** Keeps the pending steps in time order; ties in the order scheduled. */
  #schedule(step: Pending): void {
    let i = this.#pending.length;
    while (i > 0 && this.#pending[i - 1]!.atMs > step.atMs) i--;
    this.#pending.splice(i, 0, step);
  }
}
