/**
 * The orchestration framework as a scheduler: it subscribes to the master
 * with the project's public client, starts the datastore, then the server
 * once a datastore runs, then the agents once a server runs, each as an
 * engine container; keeps each part at its count (replacing a task that
 * ended, killing the extras of a scale-down), acknowledges every update,
 * and every `HEARTBEAT_INTERVAL` reconciles its tasks and checks the
 * counts. Its id, tasks and counts live in the store, so a restarted
 * framework fails over to the same id and reconciles what it had.
 */
import { randomUUID } from 'node:crypto';
import { SchedulerClient, type JsonEvent } from '../../client/scheduler-client.js';
import { OWN_PACE, type Pace, type PaceTimer, type StreamLink } from '../../runtime/pace.js';
import { acknowledgeCall } from '../../client/scheduler-calls.js';
import type { TaskStatus } from '../../client/protocol.js';
import { masterUrl, PARTS, type OrchConfig, type Part } from './config.js';
import type { KeyValueStore } from './store.js';
import { OfferRoom, taskInfoOf, ended, type Peers, type TaskRecord } from './tasks.js';

/** Seconds the master keeps the framework's tasks while it is away (a restart fails over within it). */
export const FAILOVER_TIMEOUT_SECONDS = 7 * 24 * 3600;
/**
 * Offers that fit nothing needed now are refused this long, or the long
 * time while no part that may start needs anything; a REVIVE lifts both
 * when a need appears (a task ended, a count raised, a part became ready).
 * At 10 s and more, declines do not make the master's decline loop.
 */
const REFUSE_SECONDS = 15;
const REFUSE_LONG_SECONDS = 120;
/** Pause before subscribing again after the stream ended. */
const RESUBSCRIBE_MS = 1_000;

/** Longer than any wait for an event: the stream's end ends it. */
const NO_TIMEOUT_MS = 2 ** 31 - 1;

export type Log = (level: 'debug' | 'info' | 'warn' | 'error', line: string) => void;

export interface OrchestratorOptions {
  /** Its timers and turns (default its own: the wall clock, acting at once). */
  readonly pace?: Pace;
  /** The id of a new task of a part (default `<name>-<part>.<random uuid>`). */
  readonly taskId?: (part: Part) => string;
}

export class Orchestrator {
  readonly tasks = new Map<string, TaskRecord>();
  readonly wanted: Record<Part, number>;
  /** The state of each part's latest task that ended, while none runs. */
  readonly #lastEnded: Partial<Record<Part, string>> = {};
  frameworkId: string | undefined;
  /** Whether the parts run (`cluster/shutdown` stops them, `cluster/start` starts them again). */
  active = true;
  #client: SchedulerClient | undefined;
  #suppressed = false;
  #checkTimer: PaceTimer | undefined;
  #resubscribeTimer: PaceTimer | undefined;
  #stopped = false;
  /** Events taken from every stream so far. */
  #taken = 0;
  readonly #pace: Pace;
  /** The chain of store writes, in the order of the changes. */
  #writes: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly config: OrchConfig,
    readonly store: KeyValueStore,
    readonly webuiUrl: string,
    readonly log: Log,
    private readonly options: OrchestratorOptions,
  ) {
    this.wanted = { ...config.counts };
    this.#pace = options.pace ?? OWN_PACE;
  }

  /** Loads what the store holds, subscribes (failing over to the stored id), and starts the state checks. */
  static async start(
    config: OrchConfig,
    store: KeyValueStore,
    webuiUrl: string,
    log: Log,
    options: OrchestratorOptions = {},
  ): Promise<Orchestrator> {
    const o = new Orchestrator(config, store, webuiUrl, log, options);
    await o.#load();
    await o.#subscribe();
    void o.#checkEvery(config.heartbeatMs);
    return o;
  }

  /** The state check, every `ms` until stopped. */
  async #checkEvery(ms: number): Promise<void> {
    while (!this.#stopped) {
      this.#checkTimer = this.#pace.timer(ms);
      await this.#checkTimer.done;
      if (this.#stopped) return;
      await this.#pace.turn(() => this.check()).catch((e) => this.log('warn', `state check: ${(e as Error).message}`));
    }
  }

  link(): StreamLink {
    const client = this.#client;
    return {
      frameworkId: this.frameworkId,
      received: this.#taken + (client?.pending.length ?? 0),
      streamId: client?.streamId,
      open: client !== undefined && !client.closed,
    };
  }

  #key(...parts: string[]): string {
    return [this.config.name, ...parts].join(':');
  }

  async #load(): Promise<void> {
    this.frameworkId = await this.store.get(this.#key('framework_id'));
    for (const part of PARTS) {
      const count = await this.store.get(this.#key('scale', part));
      if (count !== undefined) this.wanted[part] = Number(count);
    }
    this.active = (await this.store.get(this.#key('active'))) !== 'false';
    for (const key of await this.store.keys(this.#key('task', ''))) {
      const text = await this.store.get(key);
      if (text === undefined) continue;
      const record = JSON.parse(text) as TaskRecord;
      this.tasks.set(record.taskId, record);
    }
    if (this.frameworkId !== undefined)
      this.log('info', `recovered framework ${this.frameworkId} with ${this.tasks.size} tasks from the store`);
  }

  #save(key: string, value: string | undefined): void {
    const write = value === undefined ? () => this.store.delete(key) : () => this.store.set(key, value);
    this.#writes = this.#writes.then(write).catch((e) => this.log('error', `store ${key}: ${(e as Error).message}`));
  }

  #saveTask(record: TaskRecord): void {
    this.#save(this.#key('task', record.taskId), ended(record.state) ? undefined : JSON.stringify(record));
  }

  /** Every store write made so far is done. */
  flushed(): Promise<unknown> {
    return this.#writes;
  }

  #frameworkInfo(): Record<string, unknown> {
    const c = this.config;
    return {
      user: c.user,
      name: c.name,
      roles: [c.role],
      hostname: c.hostname,
      webui_url: this.webuiUrl,
      failover_timeout: FAILOVER_TIMEOUT_SECONDS,
      checkpoint: true,
      capabilities: [{ type: 'MULTI_ROLE' }, { type: 'RESERVATION_REFINEMENT' }],
      ...((c.clusterPrincipal ?? c.clusterUsername) === undefined
        ? {}
        : { principal: c.clusterPrincipal ?? c.clusterUsername }),
      ...(this.frameworkId === undefined ? {} : { id: { value: this.frameworkId } }),
    };
  }

  #headers(): Record<string, string> {
    const { clusterUsername: user, clusterPassword: password, clusterPrincipal } = this.config;
    const name = user ?? clusterPrincipal;
    if (name === undefined || password === undefined) return {};
    return { authorization: `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}` };
  }

  async #subscribe(): Promise<void> {
    const client = new SchedulerClient(masterUrl(this.config), 'json', this.#headers());
    const answer = await client.subscribe(this.#frameworkInfo());
    if (answer.status !== 200) {
      client.disconnect();
      throw new Error(`SUBSCRIBE to ${masterUrl(this.config)}: ${answer.status} ${answer.body.trim()}`);
    }
    // Stopped while the SUBSCRIBE was on its way: this stream is not wanted any more.
    if (this.#stopped) return client.disconnect();
    this.#client = client;
    this.#suppressed = false;
    void this.#pump(client);
  }

  /** Reacts to the stream's events one at a time until it ends, then subscribes again. */
  async #pump(client: SchedulerClient): Promise<void> {
    while (!client.closed && !this.#stopped) {
      let event: JsonEvent;
      try {
        event = await client.next(undefined, NO_TIMEOUT_MS);
      } catch {
        continue;
      }
      this.#taken++;
      await this.#pace
        .turn(() => this.#on(event))
        .catch((e) => this.log('warn', `${event.type}: ${(e as Error).message}`));
    }
    if (this.#stopped) return;
    this.log('warn', 'the event stream ended: subscribing again');
    await this.#resubscribe();
  }

  /** Subscribes again after a pause, and again after each failure. */
  async #resubscribe(): Promise<void> {
    for (;;) {
      this.#resubscribeTimer = this.#pace.timer(RESUBSCRIBE_MS);
      await this.#resubscribeTimer.done;
      if (this.#stopped) return;
      try {
        return await this.#pace.turn(() => this.#subscribe());
      } catch (e) {
        this.log('warn', (e as Error).message);
      }
    }
  }

  async #on(event: JsonEvent): Promise<void> {
    switch (event.type) {
      case 'SUBSCRIBED':
        this.frameworkId = event.subscribed.framework_id.value;
        this.#save(this.#key('framework_id'), this.frameworkId);
        this.log('info', `subscribed as ${this.frameworkId}`);
        return this.#reconcile();
      case 'OFFERS':
        return this.#offers(event.offers.offers ?? []);
      case 'UPDATE':
        return this.#update(event.update.status);
      case 'ERROR':
        this.log('error', `master: ${event.error?.message ?? event.message}`);
        return;
    }
  }

  async #call(call: Record<string, unknown>): Promise<void> {
    const client = this.#client;
    if (client === undefined || client.closed) return;
    const answer = await client.call(call);
    if (answer.status >= 300) this.log('warn', `${String(call.type)}: ${answer.status} ${answer.body.trim()}`);
  }

  /** Asks the master for the state of every task it knows, then for all of its tasks. */
  async #reconcile(): Promise<void> {
    const tasks = [...this.tasks.values()].map((t) => ({
      task_id: { value: t.taskId },
      ...(t.agentId === undefined ? {} : { agent_id: { value: t.agentId } }),
    }));
    await this.#call({ type: 'RECONCILE', reconcile: { tasks } });
    await this.#call({ type: 'RECONCILE', reconcile: { tasks: [] } });
  }

  /** Tasks of a part that count: not ended, not being killed. */
  live(part: Part): TaskRecord[] {
    return [...this.tasks.values()].filter((t) => t.part === part && !t.killing && !ended(t.state));
  }

  /** How many more tasks of the part to start now. */
  #deficit(part: Part): number {
    return this.active ? Math.max(0, this.wanted[part] - this.live(part).length) : 0;
  }

  /** `host:port` of a running task of the part. */
  address(part: Part): string | undefined {
    const running = this.live(part).find((t) => t.state === 'TASK_RUNNING');
    return running === undefined ? undefined : `${running.hostname}:${running.ports[0]}`;
  }

  /** Whether a part may start: the datastore first, then the server, then the agents. */
  #ready(part: Part): boolean {
    const before: Part | undefined = part === 'server' ? 'datastore' : part === 'agent' ? 'server' : undefined;
    return before === undefined || this.wanted[before] === 0 || this.address(before) !== undefined;
  }

  async #offers(offers: Record<string, any>[]): Promise<void> {
    const peers: Peers = { server: this.address('server'), datastore: this.address('datastore') };
    const declined: unknown[] = [];
    for (const offer of offers) {
      const room = new OfferRoom(offer, this.config);
      const launches: Record<string, unknown>[] = [];
      for (const part of PARTS) {
        let deficit = this.#ready(part) ? this.#deficit(part) : 0;
        while (deficit-- > 0 && room.fits(this.config, part)) {
          const record = this.#newTask(part, offer, room.take(this.config, part));
          launches.push(taskInfoOf(this.config, record, offer, room.role, peers));
        }
      }
      if (launches.length === 0) {
        declined.push(offer.id);
        continue;
      }
      for (const t of launches)
        this.log('info', `launching ${(t.task_id as { value: string }).value} on ${offer.hostname}`);
      await this.#call({
        type: 'ACCEPT',
        accept: {
          offer_ids: [offer.id],
          operations: [{ type: 'LAUNCH', launch: { task_infos: launches } }],
          filters: { refuse_seconds: REFUSE_SECONDS },
        },
      });
    }
    const refuse = this.#wantsOffers() ? REFUSE_SECONDS : REFUSE_LONG_SECONDS;
    if (declined.length > 0)
      await this.#call({ type: 'DECLINE', decline: { offer_ids: declined, filters: { refuse_seconds: refuse } } });
    if (PARTS.every((p) => this.#deficit(p) === 0) && !this.#suppressed) {
      this.#suppressed = true;
      await this.#call({ type: 'SUPPRESS', suppress: { roles: [this.config.role] } });
    }
  }

  #newTask(part: Part, offer: Record<string, any>, ports: number[]): TaskRecord {
    const record: TaskRecord = {
      taskId: this.options.taskId?.(part) ?? `${this.config.name}-${part}.${randomUUID()}`,
      part,
      agentId: offer.agent_id.value,
      hostname: offer.hostname,
      state: 'TASK_STAGING',
      ports,
      killing: false,
    };
    this.tasks.set(record.taskId, record);
    this.#saveTask(record);
    return record;
  }

  async #update(status: Record<string, any>): Promise<void> {
    const taskId: string = status.task_id.value;
    const acknowledge = acknowledgeCall(status as TaskStatus);
    if (acknowledge !== undefined) await this.#call(acknowledge);
    const record = this.tasks.get(taskId);
    if (record === undefined) {
      // A task of this framework the store forgot (or a reconciliation's answer for one long gone): not wanted.
      if (!ended(status.state) && status.agent_id !== undefined) {
        await this.#call({ type: 'KILL', kill: { task_id: status.task_id, agent_id: status.agent_id } });
      }
      return;
    }
    const previous = record.state;
    record.state = status.state;
    if (status.agent_id?.value !== undefined) record.agentId = status.agent_id.value;
    this.#saveTask(record);
    if (previous !== record.state)
      this.log('info', `${taskId}: ${record.state}${status.message === undefined ? '' : ` (${status.message})`}`);
    if (ended(record.state)) {
      this.tasks.delete(taskId);
      this.#lastEnded[record.part] = record.state;
    }
    // A task ended (to be replaced) or one the next part waits for runs: offers are wanted again.
    if (ended(record.state) || (record.state === 'TASK_RUNNING' && previous !== 'TASK_RUNNING'))
      await this.#reviveIfNeeded();
  }

  /** Whether a part that may start now misses tasks. */
  #wantsOffers(): boolean {
    return PARTS.some((p) => this.#deficit(p) > 0 && this.#ready(p));
  }

  async #reviveIfNeeded(): Promise<void> {
    if (!this.#wantsOffers()) return;
    this.#suppressed = false;
    await this.#call({ type: 'REVIVE', revive: { roles: [this.config.role] } });
  }

  /** Kills the newest tasks of a part beyond its count (all of them while the cluster is shut down). */
  async #killExtras(part: Part): Promise<void> {
    const live = this.live(part);
    const keep = this.active ? this.wanted[part] : 0;
    for (const record of live.slice(keep).reverse()) await this.kill(record);
  }

  async kill(record: TaskRecord): Promise<void> {
    const again = record.killing;
    record.killing = true;
    if (!again) this.#saveTask(record);
    this.log(again ? 'debug' : 'info', `killing ${record.taskId}${again ? ' again' : ''}`);
    await this.#call({
      type: 'KILL',
      kill: {
        task_id: { value: record.taskId },
        ...(record.agentId === undefined ? {} : { agent_id: { value: record.agentId } }),
      },
    });
  }

  /** Sets the count of a part: extras are killed, missing ones started. */
  async scale(part: Part, count: number): Promise<void> {
    this.wanted[part] = count;
    this.#save(this.#key('scale', part), String(count));
    await this.#killExtras(part);
    await this.#reviveIfNeeded();
  }

  /** `cluster/shutdown` (false) kills every part and starts none; `cluster/start` (true) starts them again. */
  async setActive(active: boolean): Promise<void> {
    this.active = active;
    this.#save(this.#key('active'), String(active));
    for (const part of PARTS) await this.#killExtras(part);
    await this.#reviveIfNeeded();
  }

  /** `cluster/restart`: every task is killed and replaced. */
  async restart(): Promise<void> {
    for (const part of PARTS) for (const record of this.live(part)) await this.kill(record);
    await this.#reviveIfNeeded();
  }

  /** The state check of every heartbeat interval: reconcile, kill extras (again), ask for offers where a part is short. */
  async check(): Promise<void> {
    if (this.#client === undefined || this.#client.closed) return;
    await this.#reconcile();
    // A kill that went unanswered (lost with an agent's link, say) is sent again.
    for (const record of [...this.tasks.values()].filter((t) => t.killing)) await this.kill(record);
    for (const part of PARTS) await this.#killExtras(part);
    // Declined offers come back when their filter ends; only a suppressed framework must ask.
    if (this.#suppressed) await this.#reviveIfNeeded();
  }

  /** A part's state for the status record: running if one runs, else the latest task's state. */
  stateOf(part: Part): string {
    const live = this.live(part);
    if (live.some((t) => t.state === 'TASK_RUNNING')) return 'TASK_RUNNING';
    return live.at(-1)?.state ?? this.#lastEnded[part] ?? '';
  }

  /** Stops as a crashed process would: the master keeps the framework and its tasks for the failover timeout. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#checkTimer?.cancel();
    this.#resubscribeTimer?.cancel();
    this.#client?.disconnect();
    await this.#writes;
  }

  /** Ends the framework at the master: TEARDOWN kills its tasks; the store forgets it. */
  async teardown(): Promise<void> {
    await this.#call({ type: 'TEARDOWN' });
    await this.stop();
    for (const key of await this.store.keys(this.#key(''))) await this.store.delete(key);
  }
}
