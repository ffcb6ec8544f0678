/**
 * The workflow service's framework: a scheduler that speaks to the master
 * only through the public scheduler HTTP API, with the project's client,
 * as a user's framework would, so it works against any master.
 *
 * Queued requests wait, first in first out, for an offer that satisfies
 * their cpus, memory, disk and every constraint (the configured global
 * attributes plus the request's own); several may share an offer. Each
 * runs as a container (an engine container for DOCKER). Every status
 * update is acknowledged and kept as the task's latest; a task is tracked
 * to its final state. Offers are declined while nothing fits, and the
 * framework suppresses offers while its queue is empty and revives them
 * when a request comes. When its connection breaks (or stays silent for
 * three heartbeat intervals) it subscribes again with its framework id,
 * backing off up to 10 s, and reconciles the tasks it launched.
 */
import os from 'node:os';
import type { Logger } from 'pino';
import { OWN_PACE, type Pace, type StreamLink } from '../../runtime/pace.js';
import { SchedulerClient, type Encoding, type JsonEvent } from '../../client/scheduler-client.js';
import { acknowledgeCall } from '../../client/scheduler-calls.js';
import type { TaskStatus } from '../../client/protocol.js';
import type { WorkflowConfig } from './config.js';
import { fits, roomOf, satisfies, take, taskInfo, type JsonObject } from './offers.js';
import type { QueueRequest } from './request.js';

/** The five states the workflow operator fails on, and the one it succeeds on. */
export const FAILURE_STATES = ['TASK_FAILED', 'TASK_ERROR', 'TASK_KILLED', 'TASK_LOST', 'TASK_UNREACHABLE'] as const;
const FINAL_STATES = new Set<string>([
  'TASK_FINISHED',
  'TASK_DROPPED',
  'TASK_GONE',
  'TASK_GONE_BY_OPERATOR',
  ...FAILURE_STATES,
]);

export const isFinalState = (state: string): boolean => FINAL_STATES.has(state);

/** Where a request is: waiting for an offer, launched without a status yet, running, or ended. */
export type TaskPhase = 'queued' | 'launching' | 'active' | 'final';

export interface TaskRecord {
  readonly request: QueueRequest;
  /**
   * The id of its task on the cluster: the request's id on its first run,
   * `<id>.<n>` when an ended id is queued again (run n), since a cluster
   * task id is never reused within a framework.
   */
  readonly clusterTaskId: string;
  phase: TaskPhase;
  /** The latest UPDATE event's `update` (its `status`), as the master sent it. */
  update: JsonObject | undefined;
  agentId: string | undefined;
}

export interface WorkflowSchedulerOptions {
  readonly config: WorkflowConfig;
  /** The masters to try, in turn while subscribing fails (a non-leader's redirect is followed). */
  readonly masterUrls: readonly string[];
  readonly logger: Logger;
  readonly encoding?: Encoding;
  /** A framework id to subscribe with (a restarted service failing over onto its framework). */
  readonly frameworkId?: string;
  /** Called after every change of the queue, a task or the framework id (to keep them on disk). */
  readonly onChange?: () => void;
  /** Its timers and turns (default its own: the wall clock, acting at once). */
  readonly pace?: Pace;
  /** The framework's `user` (default the process's user). */
  readonly user?: string;
}

/** What the scheduler keeps across a restart: its framework, its queue and its tasks. */
export interface SchedulerSnapshot {
  readonly frameworkId: string | undefined;
  readonly queue: readonly string[];
  readonly runs: readonly (readonly [string, number])[];
  readonly tasks: readonly TaskRecord[];
}

export type EnqueueResult = { readonly ok: true } | { readonly ok: false; readonly phase: TaskPhase };

const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 10_000;
const HEARTBEATS_MISSED = 3;
/** Declined offers come back after this while requests wait that do not fit. */
const DECLINE_WHILE_WAITING_SECONDS = 5;
const DECLINE_WHILE_IDLE_SECONDS = 120;

/** Longer than any silence a stream is allowed: the pace's timer ends the wait. */
const NO_TIMEOUT_MS = 2 ** 31 - 1;

export class WorkflowScheduler {
  readonly #tasks = new Map<string, TaskRecord>();
  /** Request ids by cluster task id, for the updates; runs by request id. */
  readonly #byClusterId = new Map<string, string>();
  readonly #runs = new Map<string, number>();
  /** Task ids waiting for an offer, oldest first. */
  #queue: string[] = [];
  #client: SchedulerClient | undefined;
  #frameworkId: string | undefined;
  #closed = false;
  #suppressed = false;
  #heartbeatMs = 15_000;
  #loop: Promise<void> | undefined;
  /** The last subscription attempt failed; attempts at the configured masters, to take them in turn. */
  #failed = false;
  #attempts = 0;
  /** Events taken from every stream so far. */
  #taken = 0;
  readonly #config: WorkflowConfig;
  readonly #log: Logger;
  readonly #pace: Pace;

  constructor(private readonly options: WorkflowSchedulerOptions) {
    this.#config = options.config;
    this.#log = options.logger;
    this.#frameworkId = options.frameworkId;
    this.#pace = options.pace ?? OWN_PACE;
  }

  link(): StreamLink {
    const client = this.#client;
    return {
      frameworkId: this.#frameworkId,
      received: this.#taken + (client?.pending.length ?? 0),
      streamId: client?.streamId,
      open: client !== undefined && !client.closed,
    };
  }

  get frameworkId(): string | undefined {
    return this.#frameworkId;
  }

  snapshot(): SchedulerSnapshot {
    return {
      frameworkId: this.#frameworkId,
      queue: [...this.#queue],
      runs: [...this.#runs],
      tasks: [...this.#tasks.values()],
    };
  }

  /** Takes back what a snapshot kept (before `start()`): subscribing then fails over onto the framework and reconciles. */
  restore(snapshot: SchedulerSnapshot): void {
    this.#frameworkId ??= snapshot.frameworkId;
    for (const [id, run] of snapshot.runs) this.#runs.set(id, run);
    for (const task of snapshot.tasks) {
      this.#tasks.set(task.request.taskId, { ...task });
      this.#byClusterId.set(task.clusterTaskId, task.request.taskId);
    }
    this.#queue = snapshot.queue.filter((id) => this.#tasks.get(id)?.phase === 'queued');
  }

  #changed(): void {
    this.options.onChange?.();
  }

  /** The master that leads, as the last redirect named it (the one configured before any). */
  get masterOrigin(): string {
    return this.#client?.url.origin ?? new URL(this.options.masterUrls[0]!).origin;
  }

  /** HTTP Basic with the configured principal and secret, when `authenticate` is on. */
  get authHeaders(): Record<string, string> {
    const { authenticate, defaultPrincipal, defaultSecret } = this.#config;
    if (!authenticate || defaultPrincipal === undefined || defaultSecret === undefined) return {};
    return { authorization: `Basic ${Buffer.from(`${defaultPrincipal}:${defaultSecret}`).toString('base64')}` };
  }

  /** Subscribes (a refusal rejects), then keeps the event stream going until `close()`. */
  async start(): Promise<void> {
    const failingOver = this.#frameworkId !== undefined;
    try {
      await this.#subscribe();
    } catch (e) {
      if (!failingOver || this.#frameworkId !== undefined) throw e;
      this.#log.warn({ err: (e as Error).message }, 'workflow: subscribing as a new framework');
      await this.#subscribe();
    }
    this.#loop = this.#run();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#client?.disconnect();
    await this.#loop;
  }

  task(id: string): TaskRecord | undefined {
    return this.#tasks.get(id);
  }

  /** The requests waiting for an offer, oldest first. */
  queued(): QueueRequest[] {
    return this.#queue.map((id) => this.#tasks.get(id)!.request);
  }

  /** Queues a request; an id whose task is still queued or running is refused (an ended one may run again). */
  enqueue(request: QueueRequest): EnqueueResult {
    const known = this.#tasks.get(request.taskId);
    if (known !== undefined && known.phase !== 'final') return { ok: false, phase: known.phase };
    const run = (this.#runs.get(request.taskId) ?? 0) + 1;
    this.#runs.set(request.taskId, run);
    const clusterTaskId = run === 1 ? request.taskId : `${request.taskId}.${run}`;
    this.#byClusterId.set(clusterTaskId, request.taskId);
    this.#tasks.set(request.taskId, { request, clusterTaskId, phase: 'queued', update: undefined, agentId: undefined });
    this.#queue.push(request.taskId);
    this.#log.info({ taskId: request.taskId, queued: this.#queue.length }, 'workflow: request queued');
    this.#changed();
    // REVIVE also clears the filters of offers declined while nothing fitted.
    this.#suppressed = false;
    void this.#pace.turn(() => this.#call({ type: 'REVIVE', revive: {} }));
    return { ok: true };
  }

  async #subscribe(): Promise<void> {
    // The leader the last redirect named, unless subscribing there failed: then the configured masters in turn.
    const urls = this.options.masterUrls;
    const base =
      this.#failed || this.#client === undefined ? urls[this.#attempts++ % urls.length]! : this.#client.url.origin;
    this.#failed = true;
    const client = new SchedulerClient(base, this.options.encoding ?? 'json', this.authHeaders);
    const config = this.#config;
    const info = {
      user: this.options.user ?? os.userInfo().username,
      name: config.frameworkName,
      checkpoint: config.checkpoint,
      failover_timeout: config.failoverTimeoutSeconds,
      ...(config.authenticate && config.defaultPrincipal !== undefined ? { principal: config.defaultPrincipal } : {}),
      ...(this.#frameworkId === undefined ? {} : { id: { value: this.#frameworkId } }),
    };
    const answer = await client.subscribe(info);
    if (answer.status !== 200) throw new Error(`SUBSCRIBE answered ${answer.status}: ${answer.body.trim()}`);
    let subscribed: JsonEvent;
    try {
      subscribed = await client.next((e) => e.type === 'SUBSCRIBED' || e.type === 'ERROR', 10_000);
      this.#taken++;
    } catch (e) {
      client.disconnect();
      throw e;
    }
    if (subscribed.type === 'ERROR') {
      // A framework the master removed (its failover timeout passed) cannot come back: the next try is a new framework.
      client.disconnect();
      this.#frameworkId = undefined;
      this.#changed();
      throw new Error(`the master refused the framework: ${subscribed.message}`);
    }
    if (this.#closed) {
      // Closed while this subscription was on its way: it must not outlive the service.
      client.disconnect();
      return;
    }
    this.#client = client;
    this.#failed = false;
    this.#frameworkId = subscribed.subscribed.framework_id.value;
    this.#changed();
    this.#heartbeatMs = 1000 * Number(subscribed.subscribed.heartbeat_interval_seconds ?? 15);
    this.#log.info({ frameworkId: this.#frameworkId, master: client.url.origin }, 'workflow: subscribed');
    this.#suppressed = this.#queue.length === 0;
    await this.#call(this.#suppressed ? { type: 'SUPPRESS', suppress: {} } : { type: 'REVIVE', revive: {} });
    await this.#reconcile();
  }

  /** Asks the master for the state of every task launched and not yet ended. */
  async #reconcile(): Promise<void> {
    const tasks = [...this.#tasks.values()]
      .filter((t) => t.phase === 'launching' || t.phase === 'active')
      .map((t) => ({
        task_id: { value: t.clusterTaskId },
        ...(t.agentId === undefined ? {} : { agent_id: { value: t.agentId } }),
      }));
    if (tasks.length > 0) await this.#call({ type: 'RECONCILE', reconcile: { tasks } });
  }

  async #run(): Promise<void> {
    let backoffMs = BACKOFF_MIN_MS;
    while (!this.#closed) {
      const client = this.#client;
      if (client === undefined || client.closed) {
        await this.#pace.timer(backoffMs).done;
        if (this.#closed) return;
        try {
          await this.#pace.turn(() => this.#subscribe());
          backoffMs = BACKOFF_MIN_MS;
        } catch (e) {
          this.#log.warn({ err: (e as Error).message, retryInMs: backoffMs }, 'workflow: subscription failed');
          backoffMs = Math.min(BACKOFF_MAX_MS, backoffMs * 2);
        }
        continue;
      }
      const event = await this.#nextEvent(client);
      if (event === undefined) continue;
      await this.#pace.turn(() => this.#onEvent(event));
    }
  }

  /** The stream's next event; none when it ended or stayed silent for three heartbeat intervals (then it is dropped). */
  async #nextEvent(client: SchedulerClient): Promise<JsonEvent | undefined> {
    const silence = this.#pace.timer(this.#heartbeatMs * HEARTBEATS_MISSED);
    const event = await Promise.race([client.next(undefined, NO_TIMEOUT_MS), silence.done.then(() => undefined)]).catch(
      () => undefined,
    );
    silence.cancel();
    if (event !== undefined) {
      this.#taken++;
      return event;
    }
    if (!client.closed && !this.#closed) {
      this.#log.warn('workflow: no event for three heartbeat intervals, subscribing again');
      client.disconnect();
      // Its stream ends when the socket closes, later: it is done with now.
      if (this.#client === client) this.#client = undefined;
    }
    return undefined;
  }

  async #onEvent(event: JsonEvent): Promise<void> {
    switch (event.type) {
      case 'OFFERS':
        return this.#onOffers((event.offers.offers ?? []) as JsonObject[]);
      case 'UPDATE':
        return this.#onUpdate(event.update as JsonObject);
      case 'ERROR':
        // The master ends the stream after an ERROR (the framework was removed): start again as a new framework.
        this.#log.error({ message: event.message }, 'workflow: the master sent an error');
        this.#frameworkId = undefined;
        this.#changed();
        return;
      case 'FAILURE':
        this.#log.warn({ failure: event.failure }, 'workflow: an agent or executor failed');
        return;
      default:
        return;
    }
  }

  /** Launches what fits, first in first out, several requests to an offer; declines the rest. */
  async #onOffers(offers: readonly JsonObject[]): Promise<void> {
    const unused: JsonObject[] = [];
    for (const offer of offers) {
      const launched = this.#pick(offer);
      if (launched.length === 0) {
        unused.push(offer['id']);
        continue;
      }
      const agentId = offer['agent_id'].value as string;
      const infos = launched.map((r) => taskInfo(r, this.#tasks.get(r.taskId)!.clusterTaskId, this.#config, agentId));
      const operations = [{ type: 'LAUNCH', launch: { task_infos: infos } }];
      const answer = await this.#call({
        type: 'ACCEPT',
        accept: { offer_ids: [offer['id']], operations, filters: { refuse_seconds: 1 } },
      });
      if (answer) this.#log.info({ tasks: launched.map((r) => r.taskId), agentId }, 'workflow: launched');
      else this.#requeue(launched);
    }
    if (unused.length > 0) {
      const refuse = this.#queue.length === 0 ? DECLINE_WHILE_IDLE_SECONDS : DECLINE_WHILE_WAITING_SECONDS;
      await this.#call({ type: 'DECLINE', decline: { offer_ids: unused, filters: { refuse_seconds: refuse } } });
    }
    if (this.#queue.length === 0 && !this.#suppressed) {
      this.#suppressed = true;
      await this.#call({ type: 'SUPPRESS', suppress: {} });
    }
  }

  /** The queued requests this offer takes, in queue order; they leave the queue. */
  #pick(offer: JsonObject): QueueRequest[] {
    const room = roomOf(offer);
    const picked: QueueRequest[] = [];
    for (const id of this.#queue) {
      const record = this.#tasks.get(id)!;
      if (
        !fits(room, record.request) ||
        !satisfies(offer, [...this.#config.clusterAttributes, ...record.request.attributes])
      )
        continue;
      take(room, record.request);
      picked.push(record.request);
      record.phase = 'launching';
      record.agentId = offer['agent_id'].value;
    }
    this.#queue = this.#queue.filter((id) => this.#tasks.get(id)!.phase === 'queued');
    if (picked.length > 0) this.#changed();
    return picked;
  }

  /** Requests whose ACCEPT failed go back to the head of the queue, in their order. */
  #requeue(requests: readonly QueueRequest[]): void {
    for (const r of requests) {
      const record = this.#tasks.get(r.taskId)!;
      record.phase = 'queued';
      record.agentId = undefined;
    }
    this.#queue = [...requests.map((r) => r.taskId), ...this.#queue];
    this.#changed();
  }

  async #onUpdate(update: JsonObject): Promise<void> {
    const status = update['status'] as JsonObject;
    const clusterTaskId = status['task_id'].value as string;
    const state = status['state'] as string;
    const id = this.#byClusterId.get(clusterTaskId);
    const record = id === undefined ? undefined : this.#tasks.get(id);
    this.#log.info({ taskId: clusterTaskId, state, known: record !== undefined }, 'workflow: status update');
    // An update of an earlier run of the id, delivered late, is acknowledged and otherwise ignored.
    if (record !== undefined && record.clusterTaskId === clusterTaskId && record.phase !== 'queued') {
      record.update = update;
      record.phase = isFinalState(state) ? 'final' : 'active';
      record.agentId = status['agent_id']?.value ?? record.agentId;
      this.#changed();
    }
    const acknowledge = acknowledgeCall(status as TaskStatus);
    if (acknowledge !== undefined) await this.#call(acknowledge);
  }

  /** Sends a call; false (and a log line) when it could not be sent or was refused. */
  async #call(call: Record<string, unknown>): Promise<boolean> {
    const client = this.#client;
    if (client === undefined || client.closed || client.frameworkId === undefined) return false;
    try {
      const answer = await client.call(call);
      if (answer.status >= 200 && answer.status < 300) return true;
      this.#log.warn({ call: call['type'], status: answer.status, body: answer.body.trim() }, 'workflow: call refused');
    } catch (e) {
      this.#log.warn({ call: call['type'], err: (e as Error).message }, 'workflow: call failed');
    }
    return false;
  }

  /** `{hostname, port}` of an agent, from the leading master's `/slaves` (port a string, as the integration gives it). */
  async agentAddress(agentId: string): Promise<{ hostname: string; port: string } | undefined> {
    const res = await fetch(new URL('/slaves', this.masterOrigin), { headers: this.authHeaders });
    if (!res.ok) throw new Error(`GET /slaves answered ${res.status}`);
    const body = (await res.json()) as { slaves?: { id: string; hostname: string; port: number }[] };
    const agent = body.slaves?.find((a) => a.id === agentId);
    return agent === undefined ? undefined : { hostname: agent.hostname, port: String(agent.port) };
  }
}
