/**
 * A client of the master's operator API (`POST /api/v1`), in JSON or
 * protobuf: calls answered with a Response (GET_STATE, GET_AGENTS,
 * GET_TASKS, ...) handed back as typed upstream JSON whatever the
 * encoding, calls answered with an empty 200 or 202 (TEARDOWN, quota,
 * maintenance...), and SUBSCRIBE with its event stream read as the
 * scheduler client reads its own (`events()`, `waitFor`).
 */
import http from 'node:http';
import { EventQueue, openStream, type CallResult, type JsonEvent } from './event-queue.js';
import type {
  Json,
  mesos,
  OperatorCall,
  OperatorCallType,
  OperatorEvent,
  OperatorEventOf,
  OperatorEventType,
  OperatorResponse,
  OperatorResponseOf,
  OperatorResponseType,
} from './protocol.js';
import { MEDIA, decodeMessage, encodeMessage } from './codec.js';
import {
  CallError,
  clientOptions,
  expectAccepted,
  expectResponse,
  MAX_REDIRECTS,
  postRaw,
  redirectTarget,
  type ClientOptions,
  type Encoding,
  type WaitOptions,
} from './scheduler-client.js';

/** The calls whose answer is a Response of the same type. */
export type OperatorGetType = OperatorCallType & OperatorResponseType;

export class OperatorClient {
  #queue = new EventQueue<JsonEvent>();
  #request: http.ClientRequest | undefined;
  readonly #agent = new http.Agent({ keepAlive: true });
  #url: URL;
  readonly encoding: Encoding;
  readonly headers: Readonly<Record<string, string>>;
  readonly #heartbeats: boolean;

  /** `masterUrl` is a master's base URL (`http://127.0.0.1:5050`); a standby's redirects to the leader are followed. */
  constructor(masterUrl: string, options: ClientOptions = {}) {
    const given = clientOptions(options, undefined);
    this.encoding = given.encoding;
    this.headers = given.headers;
    this.#heartbeats = given.heartbeats;
    this.#url = new URL('/api/v1', masterUrl);
  }

  /**
   * Posts a call (following a standby master's `307` to the leader, and
   * talking to the leader from then on); the answer whatever its status,
   * with its Response as JSON when it has one.
   */
  async call(call: OperatorCall): Promise<CallResult & { readonly response: OperatorResponse | undefined }> {
    const media = MEDIA[this.encoding];
    const body = this.#encode(call);
    let raw = await postRaw(this.#url, body, { ...this.headers, 'content-type': media, accept: media }, this.#agent);
    for (let hops = 0; hops < MAX_REDIRECTS && raw.status === 307; hops++) {
      const next = redirectTarget(raw, this.#url);
      if (next === undefined) break;
      this.#url = next;
      raw = await postRaw(this.#url, body, { ...this.headers, 'content-type': media, accept: media }, this.#agent);
    }
    const bytes = raw.bytes;
    const response =
      raw.status === 200 && bytes.length > 0
        ? (this.#decode('mesos.v1.master.Response', bytes, 'Response') as OperatorResponse)
        : undefined;
    return { status: raw.status, body: bytes.toString('utf8'), headers: raw.headers, response };
  }

  /** A call answered with a Response of its type (`GET_STATE`...), typed; throws a CallError when refused. */
  async get<T extends OperatorGetType>(
    type: T,
    fields: Omit<OperatorCall, 'type'> = {},
  ): Promise<OperatorResponseOf<T>> {
    return expectResponse(type, await this.call({ ...fields, type })) as OperatorResponseOf<T>;
  }

  /** A call answered without a Response (TEARDOWN, UPDATE_QUOTA, ...); throws a CallError when refused. */
  async send(call: OperatorCall): Promise<void> {
    expectAccepted(call.type ?? 'call', await this.call(call));
  }

  async getState(): Promise<Json<mesos.v1.master.Response.GetState>> {
    return (await this.get('GET_STATE')).get_state;
  }

  async getAgents(): Promise<Json<mesos.v1.master.Response.GetAgents>> {
    return (await this.get('GET_AGENTS')).get_agents;
  }

  async getTasks(): Promise<Json<mesos.v1.master.Response.GetTasks>> {
    return (await this.get('GET_TASKS')).get_tasks;
  }

  async getFrameworks(): Promise<Json<mesos.v1.master.Response.GetFrameworks>> {
    return (await this.get('GET_FRAMEWORKS')).get_frameworks;
  }

  /** TEARDOWN of a framework: its tasks are killed, it is removed. */
  teardown(frameworkId: string): Promise<void> {
    return this.send({ type: 'TEARDOWN', teardown: { framework_id: { value: frameworkId } } });
  }

  /**
   * SUBSCRIBE: opens the event stream (SUBSCRIBED first, with the state
   * then) on the leader; resolves once it is open, or throws a CallError
   * when refused.
   */
  subscribe(): Promise<void> {
    return this.#subscribe(0);
  }

  async #subscribe(redirects: number): Promise<void> {
    this.#queue = new EventQueue<JsonEvent>();
    const queue = this.#queue;
    const media = MEDIA[this.encoding];
    const { request, answer } = openStream(
      this.#url,
      { ...this.headers, 'content-type': media, accept: media },
      this.#encode({ type: 'SUBSCRIBE' }),
      {
        record: (record) => queue.push(this.#decode('mesos.v1.master.Event', record, 'Event') as JsonEvent),
        closed: () => queue.close(),
      },
    );
    this.#request = request;
    const result = await answer;
    if (result.status === 200) return;
    queue.close();
    const leader = redirects < MAX_REDIRECTS ? redirectTarget(result, this.#url) : undefined;
    if (leader === undefined) throw new CallError('SUBSCRIBE', result.status, result.body);
    this.#url = leader;
    return this.#subscribe(redirects + 1);
  }

  /** The stream's events in arrival order, typed, until it ends; HEARTBEATs only with `heartbeats`. */
  events(options: { readonly heartbeats?: boolean } = {}): AsyncGenerator<OperatorEvent, void, undefined> {
    return this.#queue.typed<OperatorEvent>(options.heartbeats ?? this.#heartbeats);
  }

  /** The next stream event of `type` not yet taken (and passing `where`), typed. */
  waitFor<T extends OperatorEventType>(
    type: T,
    options: WaitOptions & { readonly where?: (event: OperatorEventOf<T>) => boolean } = {},
  ): Promise<OperatorEventOf<T>> {
    return this.#queue.nextOf<OperatorEventOf<T>>(type, options);
  }

  get closed(): boolean {
    return this.#queue.closed;
  }

  /** Closes the stream and the connections. */
  close(): void {
    this.#request?.destroy();
    this.#agent.destroy();
  }

  #encode(call: OperatorCall): string | Buffer {
    return encodeMessage(this.encoding, 'mesos.v1.master.Call', call);
  }

  #decode(type: string, bytes: Buffer, what: string): unknown {
    return decodeMessage(this.encoding, type, bytes, what);
  }
}
