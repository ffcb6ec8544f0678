/**
 * The live framework of a fuzz run: one ordinary subscription, kept open
 * alongside the fuzzed requests, whose events tell what is real right now
 * (its framework and stream ids, outstanding offers, launched tasks, the
 * uuids of status updates). Tokens in generated requests resolve to these,
 * so that calls made valid on purpose reach the master's deep paths.
 *
 * Fuzzed requests may fail the framework over, tear it down or break its
 * stream; a closed stream is replaced by a fresh subscription before the
 * next request, so later cases still have something real to aim at.
 */
import { SchedulerClient, type JsonEvent } from '../../src/client/scheduler-client.js';
import type { RunningCluster } from '../../src/start/cluster.js';
import { LIVE_FRAMEWORK_INFO } from './calls.js';
import type { Json } from './mutate.js';
import { authorization } from './secured.js';

interface OfferRef {
  readonly id: string;
  readonly agentId: string;
}

interface UpdateRef {
  readonly taskId: string;
  readonly agentId: string;
  readonly uuid: string;
}

/** A framework subscribed by a generated SUBSCRIBE whose stream is held open. */
interface OtherRef {
  readonly frameworkId: string;
  readonly streamId: string;
}

/** What the live subscription has seen, bounded so that lookups stay cheap. */
const KEEP = 32;

export class LiveFramework {
  #client: SchedulerClient | undefined;
  readonly #offers: OfferRef[] = [];
  readonly #usedOffers: OfferRef[] = [];
  readonly #tasks: string[] = [];
  /** The latest update of each task, the newest last: the one an agent waits to have acknowledged. */
  readonly #updates = new Map<string, UpdateRef>();
  readonly #others: OtherRef[] = [];

  constructor(
    private readonly running: RunningCluster,
    private readonly timeoutMs: number,
    /** Sent with the subscription: the credentials of a secured run. */
    private readonly headers: Readonly<Record<string, string>> = {},
  ) {}

  get frameworkId(): string | undefined {
    return this.#client?.frameworkId;
  }

  get streamId(): string | undefined {
    return this.#client?.streamId;
  }

  /** Subscribes anew if there is no open subscription; waits for SUBSCRIBED. */
  async ensure(): Promise<void> {
    if (this.#client !== undefined && !this.#client.closed) {
      this.#drain();
      return;
    }
    this.#client?.disconnect();
    this.#offers.length = 0;
    const client = new SchedulerClient(this.running.masterUrl, 'json', this.headers);
    this.#client = client;
    const res = await client.subscribe({ ...LIVE_FRAMEWORK_INFO, capabilities: [...LIVE_FRAMEWORK_INFO.capabilities] });
    if (res.status !== 200) throw new Error(`the live subscription was refused: ${res.status} ${res.body}`);
    await client.next('SUBSCRIBED', this.timeoutMs);
    this.#drain();
  }

  /** Takes the events that arrived since the last look. */
  #drain(): void {
    const events = this.#client?.pending.splice(0) ?? [];
    for (const event of events) this.#see(event);
  }

  #see(event: JsonEvent): void {
    if (event.type === 'OFFERS') {
      for (const offer of event.offers?.offers ?? [])
        this.#offers.push({ id: offer.id.value, agentId: offer.agent_id.value });
      trim(this.#offers);
    } else if (event.type === 'RESCIND') {
      this.#retire(event.rescind?.offer_id?.value);
    } else if (event.type === 'UPDATE') {
      const status = event.update?.status;
      const taskId: string | undefined = status?.task_id?.value;
      if (taskId !== undefined && !this.#tasks.includes(taskId)) this.#tasks.push(taskId);
      if (taskId !== undefined && status?.uuid !== undefined && status.agent_id !== undefined) {
        this.#updates.delete(taskId);
        this.#updates.set(taskId, { taskId, agentId: status.agent_id.value, uuid: status.uuid });
        if (this.#updates.size > KEEP) this.#updates.delete(this.#updates.keys().next().value!);
      }
      trim(this.#tasks);
    }
  }

  #retire(offerId: string | undefined): void {
    const at = this.#offers.findIndex((o) => o.id === offerId);
    if (at < 0) return;
    this.#usedOffers.push(...this.#offers.splice(at, 1));
    trim(this.#usedOffers);
  }

  /**
   * An answered ACCEPT or DECLINE used its offers up, whatever became of its
   * tasks; an answered ACKNOWLEDGE leaves its task nothing to acknowledge
   * until the next update comes.
   */
  afterCall(call: Json | undefined, status: number | undefined): void {
    if (status !== 202 || call === null || typeof call !== 'object' || Array.isArray(call)) return;
    const payload = (call['accept'] ?? call['decline']) as { offer_ids?: { value?: unknown }[] } | undefined;
    for (const id of Array.isArray(payload?.offer_ids) ? payload.offer_ids : []) {
      if (typeof id?.value === 'string') this.#retire(id.value);
    }
    const ack = call['acknowledge'] as { task_id?: { value?: unknown }; uuid?: unknown } | undefined;
    const taskId = ack?.task_id?.value;
    if (typeof taskId === 'string' && this.#updates.get(taskId)?.uuid === ack?.uuid) this.#updates.delete(taskId);
  }

  /** A held stream of another framework: calls may name it, and its stream id goes with it. */
  addOther(frameworkId: string, streamId: string): void {
    this.#others.push({ frameworkId, streamId });
    trim(this.#others);
  }

  /** The stream id of the framework a call names: the live one's, another's, or the live one's when unknown. */
  streamFor(frameworkId: string | undefined): string {
    const other = this.#others.find((o) => o.frameworkId === frameworkId);
    return other?.streamId ?? this.streamId ?? '00000000-0000-0000-0000-000000000000';
  }

  /** The ids' common prefix, the master's id: numbered ids (`<master>-O7`) reach offers and frameworks of anyone. */
  get #masterId(): string {
    return (this.frameworkId ?? 'x-0000').replace(/-\d{4,}$/, '');
  }

  /** The value a token stands for now; a token with nothing to point at gets a plausible stand-in. */
  resolve(tokenText: string, frameworkId?: string): string {
    const [name = '', index = '0'] = tokenText.slice(2).split(':');
    const i = Number(index);
    const at = <T>(items: readonly T[]): T | undefined => (items.length === 0 ? undefined : items[i % items.length]);
    const agents = this.running.agents.map((a) => a.id);
    // Newest first: index 0 is the update that came last.
    const updates = [...this.#updates.values()].reverse();
    switch (name) {
      case 'framework':
        return this.frameworkId ?? 'no-framework';
      case 'stream':
        return this.streamFor(frameworkId);
      case 'other-framework':
        return at(this.#others)?.frameworkId ?? this.frameworkId ?? 'no-framework';
      case 'numbered-framework':
        return `${this.#masterId}-${String(i).padStart(4, '0')}`;
      case 'numbered-offer':
        return `${this.#masterId}-O${i}`;
      case 'offer':
        return (at(this.#offers) ?? at(this.#usedOffers))?.id ?? `${this.frameworkId ?? 'x'}-O${i}`;
      case 'used-offer':
        return at(this.#usedOffers)?.id ?? `${this.frameworkId ?? 'x'}-O${i}`;
      case 'offer-agent':
        return (at(this.#offers) ?? at(this.#usedOffers))?.agentId ?? at(agents) ?? 'no-agent';
      case 'agent':
        return at(agents) ?? 'no-agent';
      case 'deactivated-agent':
        return (
          at(this.running.driver.read((view) => agents.filter((id) => view.agentSnapshot(id)?.deactivated === true))) ??
          at(agents) ??
          'no-agent'
        );
      case 'task':
        return at(this.#tasks) ?? `t${i}`;
      case 'update-task':
        return at(updates)?.taskId ?? at(this.#tasks) ?? `t${i}`;
      case 'update-agent':
        return at(updates)?.agentId ?? at(agents) ?? 'no-agent';
      case 'auth':
        return authorization(i);
      case 'update-uuid':
        return at(updates)?.uuid ?? Buffer.alloc(16, i).toString('base64');
      default:
        return tokenText;
    }
  }

  /** Every token in a string replaced; `@@stream` is the stream of `frameworkId`, the framework a call names. */
  resolveText(text: string, frameworkId?: string): string {
    return text.includes('@@') ? text.replace(/@@[a-z-]+(?::\d+)?/g, (t) => this.resolve(t, frameworkId)) : text;
  }

  /** A JSON value with every token in its strings resolved. */
  resolveJson(value: Json): Json {
    if (typeof value === 'string') return this.resolveText(value);
    if (Array.isArray(value)) return value.map((v) => this.resolveJson(v));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.resolveJson(v)]));
    }
    return value;
  }

  close(): void {
    this.#client?.disconnect();
    this.#client = undefined;
  }
}

function trim<T>(items: T[]): void {
  if (items.length > KEEP) items.splice(0, items.length - KEEP);
}
