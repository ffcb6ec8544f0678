/**
 * The live side of an executor fuzz run: one framework that launches tasks
 * with custom executors on agents that await them (`--custom-executors
 * await`), so that the executors exist on the agents and wait for someone
 * to subscribe as them, which the generated requests then do. The
 * framework also acts on them now and then (KILL, SHUTDOWN, MESSAGE,
 * ACKNOWLEDGE), so that events flow on the executors' streams.
 *
 * Tokens in generated executor calls (`executor-calls.ts`) resolve to these
 * executors, their tasks and agents, by index modulo what exists.
 */
import { SchedulerClient, type JsonEvent } from '../../src/client/scheduler-client.js';
import type { RunningCluster } from '../../src/start/cluster.js';
import type { Json } from './mutate.js';

export interface LiveExecutor {
  readonly agentId: string;
  readonly executorId: string;
  /** The ExecutorInfo it was launched with: a task for it must carry the same. */
  readonly info: Record<string, unknown>;
  /** Its tasks, the newest last. */
  readonly tasks: string[];
}

interface OfferRef {
  readonly id: { value: string };
  readonly agentId: string;
}

export type FrameworkAction = 'kill' | 'shutdown' | 'message' | 'acknowledge' | 'teardown';

const cpusMem = (cpus: number, mem: number) => [
  { name: 'cpus', type: 'SCALAR', scalar: { value: cpus } },
  { name: 'mem', type: 'SCALAR', scalar: { value: mem } },
];

/** Executors launched in a run at most, so that offers always have room for one more. */
export const MAX_EXECUTORS = 12;

export class ExecutorPool {
  readonly executors: LiveExecutor[] = [];
  #client: SchedulerClient;
  readonly #offers: OfferRef[] = [];
  /** Updates the framework received and has not acknowledged. */
  readonly #updates: JsonEvent[] = [];
  #counter = 0;

  constructor(
    readonly running: RunningCluster,
    private readonly timeoutMs: number,
    private readonly framework: { readonly checkpoint: boolean; readonly killing: boolean },
  ) {
    this.#client = new SchedulerClient(running.masterUrl, 'json');
  }

  get frameworkId(): string | undefined {
    return this.#client.frameworkId;
  }

  get scheduler(): SchedulerClient {
    return this.#client;
  }

  async start(): Promise<void> {
    const capabilities = this.framework.killing ? [{ type: 'TASK_KILLING_STATE' }] : [];
    const info = {
      user: 'fuzz',
      name: 'fuzz-executors',
      checkpoint: this.framework.checkpoint,
      failover_timeout: 3600,
      capabilities,
    };
    const res = await this.#client.subscribe(info);
    if (res.status !== 200) throw new Error(`the executors' framework was refused: ${res.status} ${res.body}`);
    await this.#client.next('SUBSCRIBED', this.timeoutMs);
  }

  /** Takes the events that arrived since the last look. */
  drain(): void {
    for (const event of this.#client.pending.splice(0)) {
      if (event.type === 'OFFERS') {
        for (const offer of event.offers.offers) this.#offers.push({ id: offer.id, agentId: offer.agent_id.value });
      } else if (event.type === 'RESCIND') {
        const at = this.#offers.findIndex((o) => o.id.value === event.rescind.offer_id.value);
        if (at >= 0) this.#offers.splice(at, 1);
      } else if (event.type === 'UPDATE' && event.update.status.uuid !== undefined) {
        this.#updates.push(event);
      }
    }
  }

  /**
   * Launches `count` tasks on one offer, each on a new executor or (with
   * `reuse`) on a live one of that agent; moves virtual time on by
   * allocation intervals until an offer comes, for a few of them. False
   * when none came (every agent down, say).
   */
  async launch(count: number, reuse: boolean, advance: (ms: number) => void): Promise<boolean> {
    const offer = await this.#nextOffer(advance);
    if (offer === undefined) return false;
    const tasks = [];
    for (let k = 0; k < count; k++) {
      const here = this.executors.filter((e) => e.agentId === offer.agentId);
      const fresh = !reuse || here.length === 0;
      if (fresh && this.executors.length >= MAX_EXECUTORS) break;
      const n = this.#counter++;
      const executor = fresh ? this.#newExecutor(offer.agentId, `fuzz-executor-${n}`) : here[n % here.length]!;
      executor.tasks.push(`fuzz-task-${n}`);
      const task = {
        name: 'task',
        task_id: { value: `fuzz-task-${n}` },
        agent_id: { value: offer.agentId },
        resources: cpusMem(0.1, 16),
        executor: executor.info,
      };
      tasks.push(task);
    }
    const operations = tasks.length === 0 ? [] : [{ type: 'LAUNCH', launch: { task_infos: tasks } }];
    const res = await this.#client.call({
      type: 'ACCEPT',
      accept: { offer_ids: [offer.id], operations, filters: { refuse_seconds: 0 } },
    });
    if (res.status !== 202) throw new Error(`the executors' framework's ACCEPT got ${res.status} ${res.body}`);
    return true;
  }

  /** The framework declines what it holds, so that the next offers are new. */
  async declineAll(): Promise<void> {
    this.drain();
    const offers = this.#offers.splice(0);
    if (offers.length === 0) return;
    const res = await this.#client.call({
      type: 'DECLINE',
      decline: { offer_ids: offers.map((o) => o.id), filters: { refuse_seconds: 0 } },
    });
    if (res.status !== 202) throw new Error(`the executors' framework's DECLINE got ${res.status} ${res.body}`);
  }

  /** What the framework does to its executors and tasks: the `index`-th of them, modulo. */
  async act(action: FrameworkAction, index: number): Promise<void> {
    if (action === 'teardown') return this.#replace();
    this.drain();
    const executor = this.executors.length === 0 ? undefined : this.executors[index % this.executors.length]!;
    const who =
      executor === undefined
        ? undefined
        : { agent_id: { value: executor.agentId }, executor_id: { value: executor.executorId } };
    let res: { status: number; body: string } | undefined;
    if (action === 'acknowledge') {
      for (const update of this.#updates.splice(0)) {
        const { status } = update.update;
        res = await this.#client.call({
          type: 'ACKNOWLEDGE',
          acknowledge: { agent_id: status.agent_id, task_id: status.task_id, uuid: status.uuid },
        });
        if (res.status !== 202) break;
      }
    } else if (executor !== undefined && who !== undefined) {
      const task = executor.tasks[index % executor.tasks.length]!;
      if (action === 'kill')
        res = await this.#client.call({ type: 'KILL', kill: { task_id: { value: task }, agent_id: who.agent_id } });
      if (action === 'shutdown') res = await this.#client.call({ type: 'SHUTDOWN', shutdown: who });
      if (action === 'message')
        res = await this.#client.call({
          type: 'MESSAGE',
          message: { ...who, data: Buffer.from([index, 0, 255]).toString('base64') },
        });
    }
    if (res !== undefined && res.status !== 202)
      throw new Error(`the executors' framework's ${action.toUpperCase()} got ${res.status} ${res.body}`);
  }

  /** The value a token stands for now; a token with nothing to point at gets a stand-in. */
  resolve(tokenText: string): string {
    const [name = '', index = '0'] = tokenText.slice(2).split(':');
    const i = Number(index);
    const at = (k: number): LiveExecutor | undefined =>
      this.executors.length === 0 ? undefined : this.executors[k % this.executors.length];
    switch (name) {
      case 'executor-framework':
        return this.frameworkId ?? 'no-framework';
      case 'executor':
        return at(i)?.executorId ?? 'no-executor';
      case 'executor-task':
        return at(i)?.tasks.at(-1) ?? 'no-task';
      case 'executor-alien-task':
        return this.executors.length < 2 ? 'alien-task' : (at(i + 1)?.tasks.at(-1) ?? 'alien-task');
      case 'executor-agent':
        return at(i)?.agentId ?? this.running.agents[0]!.id;
      default:
        return tokenText;
    }
  }

  resolveText(text: string): string {
    return text.includes('@@') ? text.replace(/@@[a-z-]+(?::\d+)?/g, (t) => this.resolve(t)) : text;
  }

  resolveJson(value: Json): Json {
    if (typeof value === 'string') return this.resolveText(value);
    if (Array.isArray(value)) return value.map((v) => this.resolveJson(v));
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.resolveJson(v)]));
    return value;
  }

  close(): void {
    this.#client.disconnect();
  }

  /**
   * The framework tears itself down, which shuts its executors down on
   * every agent, and a new one takes its place with executors of its own.
   */
  async #replace(): Promise<void> {
    const res = await this.#client.call({ type: 'TEARDOWN' });
    if (res.status !== 202) throw new Error(`the executors' framework's TEARDOWN got ${res.status} ${res.body}`);
    this.#client.disconnect();
    this.#client = new SchedulerClient(this.running.masterUrl, 'json');
    this.#offers.length = 0;
    this.#updates.length = 0;
    this.executors.length = 0;
    await this.start();
  }

  #newExecutor(agentId: string, executorId: string): LiveExecutor {
    const info = {
      executor_id: { value: executorId },
      type: 'CUSTOM',
      command: { value: 'run-executor' },
      resources: cpusMem(0.1, 16),
    };
    const executor: LiveExecutor = { agentId, executorId, info, tasks: [] };
    this.executors.push(executor);
    return executor;
  }

  async #nextOffer(advance: (ms: number) => void): Promise<OfferRef | undefined> {
    for (let i = 0; i < 8; i++) {
      this.drain();
      const offer = this.#offers.shift();
      if (offer !== undefined) return offer;
      advance(1_000);
      for (let k = 0; k < 3; k++) await new Promise((resolve) => setImmediate(resolve));
    }
    return undefined;
  }
}
