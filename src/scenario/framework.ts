/**
 * A scripted framework: a scheduler that speaks to the master over HTTP
 * with the project's public client, as a user's framework would. It keeps
 * its task plan going through offers, acknowledges updates, reconciles
 * after each subscription, follows a non-leader's redirect, subscribes
 * again after losing its stream, and fails over on a schedule.
 *
 * It never acts on its own: the runner hands it its events and its timers
 * (in cluster time) and awaits each reaction, one framework after
 * another, so a run is a function of its seed.
 */
import { SchedulerClient, type JsonEvent } from '../client/scheduler-client.js';
import { acknowledgeCall } from '../client/scheduler-calls.js';
import type { TaskStatus } from '../client/protocol.js';
import type { Transport } from '../client/transport.js';
import type { FrameworkSpec } from './scenario.js';
import { isTerminalState, tasksFor, wanted } from './workload.js';

/** What a framework needs of the runner. */
export interface FrameworkHost {
  /** The masters to try, in order (a non-leader's redirect is followed). */
  readonly masterUrls: readonly string[];
  /** How its requests reach them; HTTP when not given. */
  readonly transport?: Transport;
  /** Waits until the test holds (the cluster's answer to something this framework did). */
  until(what: string, test: () => boolean): Promise<void>;
  /** Whether the master holds this framework subscribed on the given stream. */
  subscribedOn(frameworkId: string, streamId: string | undefined): boolean;
  /** Events (heartbeats too) the master has sent the framework so far. */
  eventsSent(frameworkId: string): number;
}

/** Heartbeat intervals of silence after which a framework takes its connection for dead. */
const HEARTBEATS_MISSED = 3;

/** How long after a task ended the framework asks for offers again. */
const REVIVE_BACKOFF_MS = 1_000;

/** Offers declined while the plan needs nothing are refused for this long. */
const IDLE_REFUSE_SECONDS = 10;

export class ScriptedFramework {
  id: string | undefined;
  /** Why it stopped for good (the master removed it), if it did. */
  stopped: string | undefined;
  /** Its process ended as the scenario says (`stop_at`): it never subscribes again. */
  ended = false;
  /** Answers of the master that were not 2xx, for the report (the first MAX_NOTES_KEPT). */
  readonly notes = new KeptNotes();
  /** Cluster times its stream ended (broken, or by its own failover), and it was subscribed again. */
  readonly lostAt: number[] = [];
  readonly subscribedAt: number[] = [];
  #client: SchedulerClient | undefined;
  #masterIndex = 0;
  #url: string;
  /** Events counted: received, and lost with a stream that broke before they arrived. */
  #received = 0;
  #lost = 0;
  #pending: JsonEvent[] = [];
  #subscribeAtMs: number | undefined;
  #failoverAtMs: number | undefined;
  /** When it asks for offers again after tasks ended: one REVIVE a second at most, as a backoff. */
  #reviveAtMs: number | undefined;
  /** When its stream last carried anything, and how long a silence it takes for a dead connection. */
  #lastHeardMs = 0;
  #silenceLimitMs: number | undefined;
  #subscriptions = 0;
  readonly #live = new Set<string>();
  /** Where each of its live tasks runs, as its updates say. */
  readonly #agentOf = new Map<string, string>();
  #launched = 0;

  constructor(
    readonly spec: FrameworkSpec,
    private readonly host: FrameworkHost,
  ) {
    this.#url = host.masterUrls[0]!;
    this.#subscribeAtMs = spec.startAtMs;
    this.#failoverAtMs = spec.failoverEveryMs === undefined ? undefined : spec.startAtMs + spec.failoverEveryMs;
  }

  get connected(): boolean {
    return this.#client !== undefined && !this.#client.closed;
  }

  /** The next instant it has something to do on its own, if any. */
  nextWakeMs(): number | undefined {
    if (this.stopped !== undefined || this.ended) return undefined;
    if (!this.connected) return earliest(this.#subscribeAtMs, this.spec.stopAtMs);
    return earliest(this.#failoverAtMs, this.#reviveAtMs, this.spec.stopAtMs, this.#silentAtMs());
  }

  /** Does what falls due at `now`: subscribe, or fail over. */
  async wake(now: number): Promise<void> {
    if (this.stopped !== undefined || this.ended) return;
    if (this.spec.stopAtMs !== undefined && this.spec.stopAtMs <= now) return this.#end(now);
    if (!this.connected && this.#subscribeAtMs !== undefined && this.#subscribeAtMs <= now) return this.#subscribe(now);
    if (this.connected && this.#reviveAtMs !== undefined && this.#reviveAtMs <= now) {
      this.#reviveAtMs = undefined;
      await this.#call({ type: 'REVIVE', revive: {} });
    }
    const silent = (this.#silentAtMs() ?? Infinity) <= now;
    if (this.connected && (silent || (this.#failoverAtMs !== undefined && this.#failoverAtMs <= now))) {
      if (!silent) this.#failoverAtMs = now + this.spec.failoverEveryMs!;
      else
        this.notes.push(
          `no event for ${(now - this.#lastHeardMs) / 1000} s: took the connection for dead at ${now / 1000} s`,
        );
      await this.#hangUp(now);
      await this.#subscribe(now);
    }
  }

  /**
   * When a silent stream counts as dead: after missing heartbeats for
   * `HEARTBEATS_MISSED` intervals, as the scheduler libraries do.
   */
  #silentAtMs(): number | undefined {
    return this.#silenceLimitMs === undefined || !this.connected ? undefined : this.#lastHeardMs + this.#silenceLimitMs;
  }

  /** The framework's process exits: its connection breaks and nothing subscribes again. */
  async #end(now: number): Promise<void> {
    this.ended = true;
    if (this.connected) await this.#hangUp(now);
  }

  /**
   * Closes its stream and waits for the master to see it; what the master
   * sent that never arrived (held by a stall) is lost with it.
   */
  async #hangUp(now: number): Promise<void> {
    const client = this.#client!;
    client.disconnect();
    this.lostAt.push(now);
    await this.host.until(`${this.spec.name} disconnected`, () => !this.host.subscribedOn(this.id!, client.streamId));
    this.#lost = this.host.eventsSent(this.id!) - this.#received;
    this.#forget(client);
  }

  /**
   * Takes the events that arrived; `traced` is how many (heartbeats aside)
   * the master has sent it. A stream that ended is forgotten, with whatever
   * it lost, and a subscription is planned.
   */
  collect(traced: number, now: number): void {
    const client = this.#client;
    if (client === undefined) return;
    for (const event of client.pending.splice(0)) {
      this.#received++;
      this.#lastHeardMs = now;
      if (event.type !== 'HEARTBEAT') this.#pending.push(event);
    }
    if (client.closed) {
      this.#lost = Math.max(this.#lost, traced - this.#received);
      this.#forget(client);
      this.lostAt.push(now);
      this.#subscribeAtMs = now + this.spec.reconnectAfterMs;
    }
  }

  /** Whether every event the master sent has arrived, and the stream is as the master holds it. */
  synced(traced: number): boolean {
    if (this.#received + this.#lost < traced) return false;
    if (this.id === undefined || this.#client === undefined) return true;
    // A stream the master let go must be seen to end before anyone acts.
    return this.host.subscribedOn(this.id, this.#client.streamId) || this.#client.closed;
  }

  get hasPending(): boolean {
    return this.#pending.length > 0;
  }

  /** Reacts to the events taken, one call at a time. */
  async react(now: number): Promise<void> {
    while (this.#pending.length > 0) {
      const event = this.#pending.shift()!;
      await this.#on(event, now);
    }
  }

  async #on(event: JsonEvent, now: number): Promise<void> {
    switch (event.type) {
      case 'SUBSCRIBED':
        this.id = event['subscribed'].framework_id.value;
        this.subscribedAt.push(now);
        this.#silenceLimitMs = HEARTBEATS_MISSED * 1000 * (event['subscribed'].heartbeat_interval_seconds ?? 15);
        this.#subscriptions++;
        if (this.spec.reconcile && this.#subscriptions > 1)
          await this.#call({ type: 'RECONCILE', reconcile: { tasks: [] } });
        return;
      case 'OFFERS':
        return this.#offers(event['offers'].offers);
      case 'UPDATE':
        return this.#update(event['update'].status, now);
      case 'INVERSE_OFFERS':
        return this.spec.drainOnInverseOffers ? this.#drain(event['inverse_offers'].inverse_offers) : undefined;
      case 'ERROR':
        // An ERROR is the end of a framework: upstream's scheduler driver aborts on it.
        this.stopped = `ERROR event: ${event['error']?.message ?? event['message']}`;
        return;
    }
  }

  async #offers(offers: JsonEvent[]): Promise<void> {
    const plan = this.spec.tasks;
    const declined: unknown[] = [];
    for (const offer of offers) {
      if (this.spec.drainOnInverseOffers && offer['unavailability'] !== undefined) {
        declined.push(offer['id']);
        continue;
      }
      const want = plan === undefined ? 0 : wanted(plan, { live: this.#live.size, launched: this.#launched });
      const tasks = want === 0 ? [] : tasksFor(offer, plan!, want, () => `${this.spec.name}-${this.#launched++}`);
      if (tasks.length === 0) {
        declined.push(offer['id']);
        continue;
      }
      for (const task of tasks) this.#live.add((task['task_id'] as { value: string }).value);
      await this.#call({
        type: 'ACCEPT',
        accept: {
          offer_ids: [offer['id']],
          operations: [{ type: 'LAUNCH', launch: { task_infos: tasks } }],
          filters: { refuse_seconds: 1 },
        },
      });
    }
    if (declined.length > 0)
      await this.#call({
        type: 'DECLINE',
        decline: { offer_ids: declined, filters: { refuse_seconds: IDLE_REFUSE_SECONDS } },
      });
  }

  /**
   * Tracks a task's state and acknowledges the update. A task unreachable
   * counts as gone, so that a replacement runs; one that comes back past
   * the plan's count is killed, the newest first.
   */
  async #update(status: Record<string, any>, now: number): Promise<void> {
    const taskId: string = status['task_id'].value;
    const gone = isTerminalState(status['state']) || status['state'] === 'TASK_UNREACHABLE';
    if (gone) this.#agentOf.delete(taskId);
    else if (status['agent_id'] !== undefined) this.#agentOf.set(taskId, status['agent_id'].value);
    if (gone) this.#live.delete(taskId);
    else if (taskId.startsWith(`${this.spec.name}-`)) this.#live.add(taskId);
    const acknowledge = acknowledgeCall(status as TaskStatus);
    if (acknowledge !== undefined && this.spec.acknowledge) await this.#call(acknowledge);
    if (gone && this.spec.tasks !== undefined) this.#reviveAtMs ??= now + REVIVE_BACKOFF_MS;
    const keep = this.spec.tasks?.keepRunning;
    if (!gone && keep !== undefined && this.#live.size > keep && this.#live.has(taskId)) {
      this.#live.delete(taskId);
      await this.#call({ type: 'KILL', kill: { task_id: status['task_id'], agent_id: status['agent_id'] } });
    }
  }

  /**
   * The agents are asked back: its tasks on them are killed (their
   * replacements go where no maintenance is scheduled) and the inverse
   * offers accepted.
   */
  async #drain(inverseOffers: JsonEvent[]): Promise<void> {
    const agents = new Set(inverseOffers.map((io) => io['agent_id']?.value as string));
    for (const [taskId, agentId] of [...this.#agentOf]) {
      if (!agents.has(agentId)) continue;
      this.#agentOf.delete(taskId);
      await this.#call({ type: 'KILL', kill: { task_id: { value: taskId }, agent_id: { value: agentId } } });
    }
    await this.#call({
      type: 'ACCEPT_INVERSE_OFFERS',
      accept_inverse_offers: { inverse_offer_ids: inverseOffers.map((io) => io['id']) },
    });
  }

  async #call(call: Record<string, unknown>): Promise<void> {
    const client = this.#client;
    if (client === undefined || client.closed) return;
    const answer = await client.call(call).catch((e: Error) => ({ status: 0, body: e.message }));
    if (answer.status < 200 || answer.status > 299)
      this.notes.push(`${String(call['type'])}: ${answer.status} ${answer.body}`);
  }

  #frameworkInfo(): Record<string, unknown> {
    const capabilities = [{ type: 'MULTI_ROLE' }, ...(this.spec.partitionAware ? [{ type: 'PARTITION_AWARE' }] : [])];
    return {
      user: 'clustersim',
      name: this.spec.name,
      roles: [this.spec.role],
      capabilities,
      checkpoint: this.spec.checkpoint,
      ...(this.spec.failoverTimeoutMs === undefined ? {} : { failover_timeout: this.spec.failoverTimeoutMs / 1000 }),
      ...(this.id === undefined ? {} : { id: { value: this.id } }),
    };
  }

  /** SUBSCRIBE, following redirects; a master that cannot be reached is tried again later, the next one first. */
  async #subscribe(now: number): Promise<void> {
    this.#subscribeAtMs = undefined;
    for (let hop = 0; hop < 3; hop++) {
      const transport = this.host.transport;
      const client = new SchedulerClient(this.#url, {
        encoding: this.spec.encoding,
        ...(transport === undefined ? {} : { transport }),
      });
      const answer = await client
        .subscribe(this.#frameworkInfo())
        .catch((e: Error) => ({ status: 0, body: e.message, headers: {} as Record<string, unknown> }));
      if (answer.status === 307 && typeof answer.headers['location'] === 'string') {
        this.#url = new URL(answer.headers['location'], this.#url).origin;
        continue;
      }
      if (answer.status === 200) {
        this.#client = client;
        if (this.id !== undefined) client.frameworkId = this.id;
        await this.host.until(`${this.spec.name} SUBSCRIBED`, () => client.pending.length > 0 || client.closed);
        return;
      }
      return this.#refused(answer.status, answer.body, now);
    }
    this.#refused(307, 'too many redirects', now);
  }

  #refused(status: number, body: string, now: number): void {
    this.notes.push(`SUBSCRIBE to ${this.#url} at ${now / 1000} s: ${status === 0 ? body : `${status} ${body}`}`);
    if (status === 403 || status === 400) {
      this.stopped = `SUBSCRIBE refused: ${status} ${body}`;
      return;
    }
    this.#masterIndex = (this.#masterIndex + 1) % this.host.masterUrls.length;
    this.#url = this.host.masterUrls[this.#masterIndex]!;
    this.#subscribeAtMs = now + this.spec.reconnectAfterMs;
  }

  #forget(client: SchedulerClient): void {
    if (this.#client === client) this.#client = undefined;
  }

  close(): void {
    this.#client?.disconnect();
    this.#client = undefined;
  }
}

function earliest(...times: readonly (number | undefined)[]): number | undefined {
  const known = times.filter((t): t is number => t !== undefined);
  return known.length === 0 ? undefined : Math.min(...known);
}

/** The notes a framework keeps; the rest are counted, so a long run's notes take no more room. */
export const MAX_NOTES_KEPT = 100;

export class KeptNotes {
  readonly kept: string[] = [];
  dropped = 0;

  push(note: string): void {
    if (this.kept.length < MAX_NOTES_KEPT) this.kept.push(note);
    else this.dropped++;
  }
}
