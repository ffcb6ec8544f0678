/**
 * A scheduler that launches a task on every offer it gets, as the bodies
 * of a load generator's calls: an ACKNOWLEDGE for each update that carries
 * a uuid (first, so that tasks finish and their resources come back), else
 * an ACCEPT that launches one short task on the oldest live offer. Only
 * when no offer is outstanding does an ACCEPT name an offer already used;
 * the master then answers the task with TASK_LOST, and the call counts as
 * stale. Events are read from the client's stream as they arrive.
 */
import type { JsonEvent, SchedulerClient } from '../../src/client/scheduler-client.js';

export interface LaunchTask {
  /** The task's command, e.g. `sleep 0.01` or `true`. */
  readonly command: string;
  readonly cpus: number;
  readonly mem: number;
}

interface HeldOffer {
  readonly id: string;
  readonly agentId: string;
}

export class LaunchFeed {
  readonly #offers: HeldOffer[] = [];
  #nextOffer = 0;
  readonly #acks: string[] = [];
  #lastUsed: HeldOffer;
  #taskSeq = 0;
  liveCalls = 0;
  staleCalls = 0;
  ackCalls = 0;
  finished = 0;
  /** Updates other than TASK_STARTING, TASK_RUNNING and TASK_FINISHED (e.g. TASK_LOST of stale ACCEPTs). */
  otherUpdates = 0;
  /** The most offers held at once: supply outran demand when this stays well above zero. */
  mostHeld = 0;

  constructor(
    private readonly frameworkId: string,
    staleOfferId: string,
    private readonly task: LaunchTask,
  ) {
    this.#lastUsed = { id: staleOfferId, agentId: 'unknown-agent' };
  }

  /** Takes every event from `client` until its stream closes. */
  follow(client: SchedulerClient): Promise<void> {
    const loop = async (): Promise<void> => {
      while (!client.closed) {
        try {
          this.add(await client.next(undefined, 60_000));
        } catch {
          // A timeout or the stream closing: the loop condition decides.
        }
      }
    };
    return loop();
  }

  /** An event as upstream JSON. */
  add(event: JsonEvent): void {
    if (event.type === 'OFFERS') {
      for (const offer of (event.offers?.offers ?? []) as { id: { value: string }; agent_id: { value: string } }[]) {
        this.#offers.push({ id: offer.id.value, agentId: offer.agent_id.value });
      }
      this.mostHeld = Math.max(this.mostHeld, this.held);
    } else if (event.type === 'UPDATE') {
      const status = event.update.status as { task_id: unknown; agent_id: unknown; uuid?: string; state: string };
      if (status.state === 'TASK_FINISHED') this.finished++;
      else if (status.state !== 'TASK_STARTING' && status.state !== 'TASK_RUNNING') this.otherUpdates++;
      if (status.uuid === undefined) return;
      const acknowledge = { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid };
      this.#acks.push(JSON.stringify({ framework_id: { value: this.frameworkId }, type: 'ACKNOWLEDGE', acknowledge }));
    }
  }

  get held(): number {
    return this.#offers.length - this.#nextOffer;
  }

  /** Stops handing out live offers (the cluster is about to close). */
  drain(): void {
    this.#offers.length = 0;
    this.#nextOffer = 0;
  }

  nextBody(): string {
    const ack = this.#acks.shift();
    if (ack !== undefined) {
      this.ackCalls++;
      return ack;
    }
    return this.#accept(this.#takeOffer());
  }

  #takeOffer(): HeldOffer {
    const offer = this.#offers[this.#nextOffer];
    if (offer === undefined) {
      this.staleCalls++;
      return this.#lastUsed;
    }
    this.liveCalls++;
    // Compact now and then rather than shifting a long array on every call.
    if (++this.#nextOffer > 1024) this.#offers.splice(0, this.#nextOffer), (this.#nextOffer = 0);
    this.#lastUsed = offer;
    return offer;
  }

  #accept(offer: HeldOffer): string {
    const taskId = `launch-${++this.#taskSeq}`;
    const scalar = (name: string, value: number) => ({ name, type: 'SCALAR', scalar: { value } });
    const task = {
      name: taskId,
      task_id: { value: taskId },
      agent_id: { value: offer.agentId },
      resources: [scalar('cpus', this.task.cpus), scalar('mem', this.task.mem)],
      command: { shell: true, value: this.task.command },
    };
    const accept = {
      offer_ids: [{ value: offer.id }],
      operations: [{ type: 'LAUNCH', launch: { task_infos: [task] } }],
      filters: { refuse_seconds: 0 },
    };
    return JSON.stringify({ framework_id: { value: this.frameworkId }, type: 'ACCEPT', accept });
  }
}
