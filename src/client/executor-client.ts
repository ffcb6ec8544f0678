/**
 * A small executor client of the agent's `/api/v1/executor`, in JSON or
 * protobuf: SUBSCRIBE on a connection of its own, the RecordIO event
 * stream read into a queue (events handed out as upstream JSON objects),
 * and calls that carry the executor's and framework's ids. Events come
 * typed (`ExecutorEvent`) through `for await (... of client.events())` or
 * `waitFor(type)`. What a test harness uses in `await` mode, or as a model
 * of an executor library.
 */
import { MEDIA, decodeMessage, encodeMessage } from './codec.js';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import {
  DEFAULT_WAIT_MS,
  EventQueue,
  openStream,
  type CallResult,
  type EventMatch,
  type JsonEvent,
} from './event-queue.js';
import type { ExecutorCall, ExecutorEvent, ExecutorEventOf, ExecutorEventType, TaskStatus } from './protocol.js';
import {
  clientOptions,
  expectAccepted,
  postRaw,
  type ClientOptions,
  type Encoding,
  type WaitOptions,
} from './scheduler-client.js';

export interface ExecutorIds {
  readonly frameworkId: string;
  readonly executorId: string;
}

export class ExecutorClient {
  #queue = new EventQueue();
  #request: http.ClientRequest | undefined;
  readonly #agent = new http.Agent({ keepAlive: true });
  readonly #url: URL;
  readonly #socketPath: string | undefined;
  readonly encoding: Encoding;
  /** Sent with every request, e.g. `authorization: Bearer <token>`. */
  readonly headers: Readonly<Record<string, string>>;
  readonly #heartbeats: boolean;

  constructor(
    /**
     * `http://ip:port` of the agent, its `ip:port` (the executor's
     * AGENT_ENDPOINT), or the path of its Unix domain socket (DOMAIN_SOCKET).
     */
    agent: string,
    readonly ids: ExecutorIds,
    /** The options (`{ encoding, headers, heartbeats }`), or the encoding (with `headers` after it). */
    encodingOrOptions?: Encoding | ClientOptions,
    headers?: Readonly<Record<string, string>>,
  ) {
    const options = clientOptions(encodingOrOptions, headers);
    this.encoding = options.encoding;
    this.headers = options.headers;
    this.#heartbeats = options.heartbeats;
    this.#socketPath = agent.startsWith('/') ? agent : undefined;
    const base =
      this.#socketPath !== undefined ? 'http://localhost' : agent.includes('://') ? agent : `http://${agent}`;
    this.#url = new URL('/api/v1/executor', base);
  }

  /** Events not taken yet, oldest first (HEARTBEATs included). */
  get pending(): JsonEvent[] {
    return this.#queue.events;
  }

  /** Every event in arrival order, typed, until the stream ends; HEARTBEATs only with `heartbeats`. */
  events(options: { readonly heartbeats?: boolean } = {}): AsyncGenerator<ExecutorEvent, void, undefined> {
    return this.#queue.typed<ExecutorEvent>(options.heartbeats ?? this.#heartbeats);
  }

  /** The next event of `type` not yet taken (and passing `where`), typed. */
  waitFor<T extends ExecutorEventType>(
    type: T,
    options: WaitOptions & { readonly where?: (event: ExecutorEventOf<T>) => boolean } = {},
  ): Promise<ExecutorEventOf<T>> {
    return this.#queue.nextOf<ExecutorEventOf<T>>(type, options);
  }

  get closed(): boolean {
    return this.#queue.closed;
  }

  /** An upstream JSON call with this executor's ids, in this client's encoding. */
  encodeCall(call: Record<string, unknown>): string | Buffer {
    const ids = { framework_id: { value: this.ids.frameworkId }, executor_id: { value: this.ids.executorId } };
    return encodeMessage(this.encoding, 'mesos.v1.executor.Call', { ...ids, ...call });
  }

  /**
   * SUBSCRIBE; resolves once the response headers arrive. After a
   * disconnection, `subscribe` carries `unacknowledged_tasks` and
   * `unacknowledged_updates`. A new subscription starts a new queue.
   */
  async subscribe(subscribe: Record<string, unknown> = {}): Promise<CallResult> {
    this.#queue = new EventQueue();
    const queue = this.#queue;
    const body = this.encodeCall({ type: 'SUBSCRIBE', subscribe });
    const media = MEDIA[this.encoding];
    const { request, answer } = openStream(
      this.#url,
      { ...this.headers, 'content-type': media, accept: media },
      body,
      {
        record: (record) => queue.push(this.#decodeEvent(record)),
        closed: () => queue.close(),
      },
      this.#socketPath,
    );
    this.#request = request;
    const result = await answer;
    if (result.status !== 200) queue.close();
    return result;
  }

  /** Posts a call (an upstream JSON object without the ids) on a connection other than the stream's. */
  call(call: ExecutorCall | Record<string, unknown>, headers: Record<string, string> = {}): Promise<CallResult> {
    return postRaw(
      this.#url,
      this.encodeCall(call),
      { ...this.headers, 'content-type': MEDIA[this.encoding], ...headers },
      this.#agent,
      this.#socketPath,
    );
  }

  /** UPDATE with a status from this executor; `uuid` is 16 bytes, Base64 in the JSON form. */
  update(status: Partial<TaskStatus> | Record<string, unknown>): Promise<CallResult> {
    return this.call({
      type: 'UPDATE',
      update: { status: { source: 'SOURCE_EXECUTOR', executor_id: { value: this.ids.executorId }, ...status } },
    });
  }

  /**
   * Sends a task's status (a fresh random uuid, the time now), as an
   * executor library does; throws a CallError when the agent refuses it.
   */
  async sendStatus(taskId: string, state: TaskStatus['state'], more: Partial<TaskStatus> = {}): Promise<void> {
    const status = {
      task_id: { value: taskId },
      state,
      uuid: randomBytes(16).toString('base64'),
      timestamp: Date.now() / 1000,
      ...more,
    };
    expectAccepted('UPDATE', await this.update(status));
  }

  /** MESSAGE: bytes for the scheduler (a FrameworkMessage). */
  async message(data: Uint8Array | string): Promise<void> {
    expectAccepted(
      'MESSAGE',
      await this.call({ type: 'MESSAGE', message: { data: Buffer.from(data).toString('base64') } }),
    );
  }

  next(match?: EventMatch, timeoutMs = DEFAULT_WAIT_MS): Promise<JsonEvent> {
    return this.#queue.next(match, timeoutMs);
  }

  /** Drops the stream's connection (as a crashed executor, or a broken network, would). */
  disconnect(): void {
    this.#request?.destroy();
  }

  close(): void {
    this.disconnect();
    this.#agent.destroy();
  }

  #decodeEvent(record: Buffer): JsonEvent {
    return decodeMessage(this.encoding, 'mesos.v1.executor.Event', record, 'Event') as JsonEvent;
  }
}
