/**
 * A scheduler of the virtual-day benchmark, as a user's would behave: it
 * keeps up to `keep` tasks of `sleep N` alive until it has launched its
 * budget, launches into the offers it needs, declines the others together
 * (one DECLINE per OFFERS event) with a long refuse filter, so that an idle
 * agent is offered to it again only when its resources change or the
 * filter expires, acknowledges every update that asks for it, and
 * reconciles its live tasks now and then. Task durations come from its own
 * seeded stream.
 */
import type { Rng } from '../../src/core/kernel/rng.js';
import { scalarMilli, type Resources } from '../../src/core/model/resources.js';
import { isTerminal } from '../../src/core/model/task-state.js';
import type { FrameworkInfo, OfferView, SchedulerCall, SchedulerEvent, TaskSpec } from '../../src/core/model/types.js';

/** Offers not needed are declined for six hours. */
const REFUSE_MS = 6 * 3_600_000;

export interface DayFrameworkOptions {
  readonly name: string;
  readonly info: FrameworkInfo;
  readonly keep: number;
  readonly budget: number;
  readonly taskResources: Resources;
  /** Task durations, seconds, drawn uniformly in [min, max]. */
  readonly durationSeconds: readonly [number, number];
  readonly rng: Rng;
}

export interface FrameworkCounts {
  launched: number;
  /** Tasks that reached a terminal state, by state. */
  readonly ended: Map<string, number>;
  acknowledged: number;
  offers: number;
  declined: number;
  rescinded: number;
}

/** Sends a scheduler call of this framework to the core. */
export type CallSink = (call: SchedulerCall) => void;

export class DayFramework {
  readonly counts: FrameworkCounts = {
    launched: 0,
    ended: new Map(),
    acknowledged: 0,
    offers: 0,
    declined: 0,
    rescinded: 0,
  };
  /** Live (non-terminal) tasks, by id, and the agent each runs on. */
  readonly #live = new Map<string, string>();
  readonly #cpusMilli: number;
  readonly #memMilli: number;

  constructor(readonly options: DayFrameworkOptions) {
    this.#cpusMilli = scalarMilli(options.taskResources, 'cpus');
    this.#memMilli = scalarMilli(options.taskResources, 'mem');
  }

  get live(): number {
    return this.#live.size;
  }

  /** Tasks that ended, whatever their state. */
  get ended(): number {
    let n = 0;
    for (const count of this.counts.ended.values()) n += count;
    return n;
  }

  react(event: SchedulerEvent, send: CallSink): void {
    switch (event.type) {
      case 'OFFERS': {
        // Offers it has no use for are declined together, in one call.
        const declined = event.offers.filter((offer) => !this.#offer(offer, send)).map((offer) => offer.id);
        this.counts.declined += declined.length;
        if (declined.length > 0) send({ type: 'DECLINE', offerIds: declined, filters: { refuseMs: REFUSE_MS } });
        return;
      }
      case 'UPDATE': {
        const { taskId, state, uuid, agentId } = event.status;
        if (this.#live.has(taskId) && isTerminal(state)) {
          this.#live.delete(taskId);
          this.counts.ended.set(state, (this.counts.ended.get(state) ?? 0) + 1);
        }
        if (uuid !== undefined && agentId !== undefined) {
          send({ type: 'ACKNOWLEDGE', agentId, taskId, uuid });
          this.counts.acknowledged++;
        }
        return;
      }
      case 'RESCIND':
        this.counts.rescinded++;
        return;
      case 'ERROR':
        throw new Error(`${this.options.name}: ERROR ${event.message}`);
      default:
        return;
    }
  }

  /** Explicit reconciliation of every live task (updates without a uuid answer it). */
  reconcile(send: CallSink): void {
    if (this.#live.size === 0) return;
    send({ type: 'RECONCILE', tasks: [...this.#live].map(([taskId, agentId]) => ({ taskId, agentId })) });
  }

  /** Launches what it needs into the offer; false when it needs nothing of it. */
  #offer(offer: OfferView, send: CallSink): boolean {
    this.counts.offers++;
    const { keep, budget } = this.options;
    const wanted = Math.min(keep - this.#live.size, budget - this.counts.launched);
    const fit = Math.min(
      Math.floor(scalarMilli(offer.resources, 'cpus') / this.#cpusMilli),
      Math.floor(scalarMilli(offer.resources, 'mem') / this.#memMilli),
    );
    const count = Math.max(0, Math.min(wanted, fit));
    if (count === 0) return false;
    const tasks = Array.from({ length: count }, () => this.#task(offer.agentId));
    send({
      type: 'ACCEPT',
      offerIds: [offer.id],
      operations: [{ type: 'LAUNCH', tasks }],
      filters: { refuseMs: REFUSE_MS },
    });
    return true;
  }

  #task(agentId: string): TaskSpec {
    const { name, taskResources, durationSeconds, rng } = this.options;
    const taskId = `${name}-${++this.counts.launched}`;
    const [min, max] = durationSeconds;
    const seconds = min + rng.int(max - min + 1);
    this.#live.set(taskId, agentId);
    return {
      taskId,
      name: taskId,
      agentId,
      resources: taskResources,
      command: { shell: true, value: `sleep ${seconds}`, arguments: [] },
      labels: [],
    };
  }
}
