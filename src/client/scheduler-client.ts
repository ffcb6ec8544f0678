/**
 * A scheduler client of the HTTP API, in JSON or protobuf: subscribes,
 * reads the RecordIO event stream (events handed out as upstream JSON
 * objects, typed as `SchedulerEvent` whatever the encoding), keeps the
 * stream id and the framework id and sends calls with them. Events come
 * through `for await (const event of client.events())`, or `waitFor(type)`
 * and `next()` for the next of a type. Helpers send the usual calls
 * (accept, launch, decline, acknowledge, kill, reconcile, revive,
 * suppress, teardown) and throw a CallError when the master refuses one.
 * Like a client written against the spec, it repeats a request that a
 * master which does not lead answers `307` at the `Location` given (the
 * leader), and keeps talking to the leader from then on (`url`).
 */
import { decodeJson, encodeJson } from '../wire/json.js';
import { decodeProto, encodeProto } from '../wire/proto-codec.js';
import { MEDIA, type Encoding } from './codec.js';
import { HttpTransport, type OpenedStream, type Transport } from './transport.js';

export { postRaw } from './transport.js';
import { DEFAULT_WAIT_MS, EventQueue, type CallResult, type EventMatch, type JsonEvent } from './event-queue.js';
import type {
  Filters,
  FrameworkInfo,
  Offer,
  OfferOperation,
  SchedulerCall,
  SchedulerEvent,
  SchedulerEventOf,
  SchedulerEventType,
  TaskInfo,
  TaskStatus,
} from './protocol.js';
import {
  acceptCall,
  acknowledgeCall,
  declineCall,
  inverseOffersCall,
  killCall,
  launchOperation,
  reconcileCall,
  rolesCall,
  taskInfoFrom,
  type OfferRef,
  type ReconcileTask,
  type TaskSpec,
} from './scheduler-calls.js';

export type { CallResult, EventMatch, JsonEvent } from './event-queue.js';

/** The message encoding a client speaks; events are always handed out as upstream JSON objects. */

export interface ClientOptions {
  /** The encoding of calls and events (default `json`); events are handed out as JSON objects either way. */
  readonly encoding?: Encoding;
  /** Sent with every request, e.g. `authorization` for a master started with credentials. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Whether `events()` hands out HEARTBEAT events too (default false: they are taken and dropped). */
  readonly heartbeats?: boolean;
  /**
   * How requests reach the master (transport.ts): HTTP by default, or a
   * cluster's `inProcess` for one in this process (no sockets).
   */
  readonly transport?: Transport;
}

/** How long `waitFor` waits, in wall-clock ms. */
export interface WaitOptions {
  /** Default 3 s (`DEFAULT_WAIT_MS`), under a test runner's own 5 s; `Infinity` waits until the stream ends. */
  readonly timeoutMs?: number;
}

export type { Encoding } from './codec.js';

/** A call the master (or agent) refused: its status and the reason it gave. */
export class CallError extends Error {
  override name = 'CallError';
  constructor(
    readonly call: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`${call}: ${status} ${body}`.trim());
  }
}

/** A subscription the master took and then ended: its ERROR event's message, or a stream closed before any event. */
export class SubscribeError extends Error {
  override name = 'SubscribeError';
}

/** The Response of a call of `type`; a CallError when the call was refused or answered with another. */
export function expectResponse<R extends { readonly type: string }>(
  type: string,
  answer: CallResult & { readonly response: R | undefined },
): R {
  expectAccepted(type, answer);
  if (answer.response?.type !== type)
    throw new CallError(type, answer.status, `expected a ${type} response, got ${answer.response?.type ?? 'none'}`);
  return answer.response;
}

/** The result, or a CallError when the status is not 2xx. */
export function expectAccepted(call: string, answer: CallResult): CallResult {
  if (answer.status < 200 || answer.status > 299) throw new CallError(call, answer.status, answer.body);
  return answer;
}

/** The options of a client from its constructor's arguments (the options object, or the encoding and headers). */
export function clientOptions(
  encodingOrOptions: Encoding | ClientOptions | undefined,
  headers: Readonly<Record<string, string>> | undefined,
): Required<Omit<ClientOptions, 'transport'>> {
  const given: ClientOptions =
    typeof encodingOrOptions === 'string' ? { encoding: encodingOrOptions } : (encodingOrOptions ?? {});
  return {
    encoding: given.encoding ?? 'json',
    headers: { ...given.headers, ...headers },
    heartbeats: given.heartbeats ?? false,
  };
}

export class SchedulerClient {
  readonly #queue = new EventQueue<JsonEvent>();
  /** Events not taken yet, oldest first (HEARTBEATs included). */
  readonly pending = this.#queue.events;
  streamId: string | undefined;
  frameworkId: string | undefined;
  readonly encoding: Encoding;
  /** Sent with every request. */
  readonly headers: Readonly<Record<string, string>>;
  readonly #heartbeats: boolean;
  #stream: OpenedStream | undefined;
  readonly #transport: Transport;
  /** A transport the client made is its own to close; one it was lent is not. */
  readonly #ownsTransport: boolean;
  #url: URL;

  /**
   * `new SchedulerClient(masterUrl, { encoding, headers, heartbeats })`, or
   * (the earlier form) `new SchedulerClient(masterUrl, encoding, headers)`.
   */
  constructor(
    masterUrl: string,
    encodingOrOptions?: Encoding | ClientOptions,
    headers?: Readonly<Record<string, string>>,
  ) {
    const options = clientOptions(encodingOrOptions, headers);
    this.encoding = options.encoding;
    this.headers = options.headers;
    this.#heartbeats = options.heartbeats;
    const lent = typeof encodingOrOptions === 'object' ? encodingOrOptions.transport : undefined;
    this.#transport = lent ?? new HttpTransport();
    this.#queue.clock = this.#transport.clock?.bind(this.#transport);
    this.#ownsTransport = lent === undefined;
    this.#url = new URL('/api/v1/scheduler', masterUrl);
  }

  /** Encodes a call given as an upstream JSON object in this client's encoding. */
  encodeCall(call: Record<string, unknown>): string | Buffer {
    const text = JSON.stringify(call);
    if (this.encoding === 'json') return text;
    const decoded = decodeJson<object>('mesos.v1.scheduler.Call', text);
    if (!decoded.ok) throw new Error(decoded.error);
    return Buffer.from(encodeProto('mesos.v1.scheduler.Call', decoded.value));
  }

  #decodeEvent(record: Buffer): JsonEvent {
    let event: JsonEvent;
    if (this.encoding === 'json') event = JSON.parse(record.toString('utf8')) as JsonEvent;
    else {
      const decoded = decodeProto<object>('mesos.v1.scheduler.Event', record, 'Event');
      if (!decoded.ok) throw new Error(decoded.error);
      event = JSON.parse(encodeJson('mesos.v1.scheduler.Event', decoded.value)) as JsonEvent;
    }
    // One shape in both encodings: an ERROR's text as `error.message` and, as the JSON stream repeats it, `message`.
    if (event.type === 'ERROR') {
      const message = typeof event.message === 'string' ? event.message : String(event.error?.message ?? '');
      event.message = message;
      event.error = { message };
    }
    return event;
  }

  /** Where the scheduler API is: the master given, or the leader a redirect named. */
  get url(): URL {
    return this.#url;
  }

  /**
   * Sends SUBSCRIBE (following redirects to the leader) and resolves with
   * the answer: a refusal with its status and body, or a 200 once the
   * stream's first event has come, SUBSCRIBED, which stays on the stream for
   * `waitFor('SUBSCRIBED')`. A master that accepts the connection and then
   * refuses the framework (a role it may not take, say) sends ERROR and
   * closes: that rejects with a `SubscribeError` carrying its message, as
   * does a stream that ends before any event. `extra` adds fields of the
   * Subscribe message (`suppressed_roles`, `offer_constraints`).
   */
  async subscribe(
    frameworkInfo: FrameworkInfo | Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ): Promise<CallResult> {
    const body = this.encodeCall({ type: 'SUBSCRIBE', subscribe: { framework_info: frameworkInfo, ...extra } });
    for (let hops = 0; ; hops++) {
      const answer = await this.#subscribeHere(body);
      if (answer.status !== 307 || hops === MAX_REDIRECTS || !this.#follow(answer)) return answer;
    }
  }

  /** Moves to the master a 307 names; false without a usable `Location`. */
  #follow(answer: CallResult): boolean {
    const next = redirectTarget(answer, this.#url);
    if (next !== undefined) this.#url = next;
    return next !== undefined;
  }

  async #subscribeHere(body: string | Buffer): Promise<CallResult> {
    const media = MEDIA[this.encoding];
    let firstEvent!: (event: JsonEvent | undefined) => void;
    const first = new Promise<JsonEvent | undefined>((resolve) => (firstEvent = resolve));
    this.#stream = this.#transport.open(
      this.#url,
      body,
      { ...this.headers, 'content-type': media, accept: media },
      {
        opened: (headers) => {
          const id = headers['mesos-stream-id'];
          this.streamId = typeof id === 'string' ? id : undefined;
        },
        record: (record) => {
          const event = this.#decodeEvent(record);
          firstEvent(event);
          this.#onEvent(event);
        },
        closed: () => {
          firstEvent(undefined);
          this.#onClose();
        },
      },
    );
    const answer = await this.#stream.answer;
    if (answer.status !== 200) return answer;
    const event = await first;
    if (event === undefined) throw new SubscribeError('the master closed the event stream before its first event');
    if (event.type === 'ERROR') throw new SubscribeError(event.message as string);
    return answer;
  }

  /**
   * Posts a call (an upstream JSON object), following redirects to the
   * leader; adds framework_id and the stream id header. The answer is
   * returned whatever its status (the helpers below throw on a refusal).
   */
  async call(call: SchedulerCall | Record<string, unknown>, headers: Record<string, string> = {}): Promise<CallResult> {
    const body = this.encodeCall({ framework_id: { value: this.frameworkId }, ...call });
    for (let hops = 0; ; hops++) {
      const answer = await this.#transport.post(this.#url, body, {
        ...this.headers,
        'content-type': MEDIA[this.encoding],
        ...(this.streamId === undefined ? {} : { 'mesos-stream-id': this.streamId }),
        ...headers,
      });
      if (answer.status !== 307 || hops === MAX_REDIRECTS || !this.#follow(answer)) return answer;
    }
  }

  /** The next event not yet taken that matches (a type, or a test; any if omitted), as an untyped JSON object. */
  next(match?: EventMatch, timeoutMs = DEFAULT_WAIT_MS): Promise<JsonEvent> {
    return this.#queue.next(match, timeoutMs);
  }

  /**
   * Every event in arrival order, typed, until the stream ends; HEARTBEATs
   * only with `heartbeats` (here, or the client's option). Events taken
   * here are not left for `next`/`waitFor`, and the other way round.
   */
  events(options: { readonly heartbeats?: boolean } = {}): AsyncGenerator<SchedulerEvent, void, undefined> {
    return this.#queue.typed<SchedulerEvent>(options.heartbeats ?? this.#heartbeats);
  }

  /** The next event of `type` not yet taken (and passing `where`), typed. */
  waitFor<T extends SchedulerEventType>(
    type: T,
    options: WaitOptions & { readonly where?: (event: SchedulerEventOf<T>) => boolean } = {},
  ): Promise<SchedulerEventOf<T>> {
    return this.#queue.nextOf<SchedulerEventOf<T>>(type, options);
  }

  /** The next UPDATE of a task (in `state`, when given), typed. */
  waitForUpdate(
    taskId: string,
    options: WaitOptions & { readonly state?: TaskStatus['state'] } = {},
  ): Promise<SchedulerEventOf<'UPDATE'>> {
    const where = (e: SchedulerEventOf<'UPDATE'>) =>
      e.update.status.task_id.value === taskId &&
      (options.state === undefined || e.update.status.state === options.state);
    const what = `an UPDATE of task ${taskId}${options.state === undefined ? '' : ` to ${options.state}`}`;
    return this.#queue.nextOf<SchedulerEventOf<'UPDATE'>>('UPDATE', { ...options, where }, what);
  }

  get closed(): boolean {
    return this.#queue.closed;
  }

  /** Drops the subscription connection (as a crashed scheduler would). */
  disconnect(): void {
    this.#stream?.close();
    if (this.#ownsTransport) this.#transport.close();
  }

  /** Closes the stream and the connections (the framework stays registered for its failover timeout; `teardown` ends it). */
  close(): void {
    this.disconnect();
  }

  /** The next UPDATE for a task, as an untyped JSON object. */
  nextUpdate(taskId: string, timeoutMs = DEFAULT_WAIT_MS): Promise<JsonEvent> {
    const match = (e: JsonEvent) => e.type === 'UPDATE' && e.update.status.task_id.value === taskId;
    return this.#queue.next(match, timeoutMs, `an UPDATE of task ${taskId}`);
  }

  // ---- the usual calls: each throws a CallError when refused ----

  /** ACCEPT: `operations` on the offers. */
  accept(
    offers: OfferRef | readonly OfferRef[],
    operations: readonly OfferOperation[],
    filters?: Filters,
  ): Promise<CallResult> {
    return this.#send(acceptCall(list(offers), operations, filters));
  }

  /**
   * ACCEPT with a LAUNCH of these tasks on the offer: each TaskInfo is
   * built from its spec and the offer (resources cut from the offer's);
   * resolves with the TaskInfos sent.
   */
  async launch(offer: Offer, tasks: TaskSpec | readonly TaskSpec[], filters?: Filters): Promise<TaskInfo[]> {
    const infos = list(tasks).map((spec) => taskInfoFrom(offer, spec));
    await this.accept(offer, [launchOperation(infos)], filters);
    return infos;
  }

  decline(offers: OfferRef | readonly OfferRef[], filters?: Filters): Promise<CallResult> {
    return this.#send(declineCall(list(offers), filters));
  }

  /** ACCEPT_INVERSE_OFFERS: the framework agrees to leave the agents (`filters.refuse_seconds` holds the next ones back). */
  acceptInverseOffers(inverseOffers: OfferRef | readonly OfferRef[], filters?: Filters): Promise<CallResult> {
    return this.#send(inverseOffersCall('ACCEPT_INVERSE_OFFERS', list(inverseOffers), filters));
  }

  /** DECLINE_INVERSE_OFFERS: the framework does not agree, for now. */
  declineInverseOffers(inverseOffers: OfferRef | readonly OfferRef[], filters?: Filters): Promise<CallResult> {
    return this.#send(inverseOffersCall('DECLINE_INVERSE_OFFERS', list(inverseOffers), filters));
  }

  /**
   * Acknowledges a status update (the UPDATE event or its status) with its
   * agent, task and `uuid`; an update without a uuid asks for no
   * acknowledgement, and resolves false without a call.
   */
  async acknowledge(update: SchedulerEventOf<'UPDATE'> | TaskStatus): Promise<boolean> {
    const call = acknowledgeCall(update);
    if (call === undefined) return false;
    await this.#send(call);
    return true;
  }

  kill(taskId: string, agentId?: string): Promise<CallResult> {
    return this.#send(killCall(taskId, agentId));
  }

  /** RECONCILE of these tasks; without any, implicit reconciliation (every task the master knows of the framework's). */
  reconcile(tasks: readonly ReconcileTask[] = []): Promise<CallResult> {
    return this.#send(reconcileCall(tasks));
  }

  revive(roles?: readonly string[]): Promise<CallResult> {
    return this.#send(rolesCall('REVIVE', roles));
  }

  suppress(roles?: readonly string[]): Promise<CallResult> {
    return this.#send(rolesCall('SUPPRESS', roles));
  }

  /** TEARDOWN: the framework ends, its tasks are killed. */
  teardown(): Promise<CallResult> {
    return this.#send({ type: 'TEARDOWN' });
  }

  async #send(call: SchedulerCall): Promise<CallResult> {
    return expectAccepted(call.type ?? 'call', await this.call(call));
  }

  #onEvent(event: JsonEvent): void {
    if (event.type === 'SUBSCRIBED') this.frameworkId = event.subscribed.framework_id.value;
    this.#queue.push(event);
  }

  #onClose(): void {
    this.#queue.close();
  }
}

/**
 * Where a `307` from a master that does not lead sends a request to `url`
 * (the same API on the leader), or undefined without a usable `Location`.
 */
export function redirectTarget(answer: CallResult, url: URL): URL | undefined {
  const location = answer.headers.location;
  if (answer.status !== 307 || typeof location !== 'string' || location === '') return undefined;
  // Upstream writes it protocol-relative (`//host:port/path`): the scheme stays the one asked.
  const next = new URL(location.startsWith('//') ? `${url.protocol}${location}` : location, url);
  if (next.pathname === '/') next.pathname = url.pathname;
  return next;
}

/** Redirects one request follows before it gives up (masters that redirect in a loop). */
export const MAX_REDIRECTS = 5;

function list<T>(items: T | readonly T[]): readonly T[] {
  return Array.isArray(items) ? (items as readonly T[]) : [items as T];
}
