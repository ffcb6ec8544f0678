/**
 * A small scheduler client of the HTTP API, in JSON: subscribes, reads the
 * RecordIO event stream, and sends calls with the stream id. Events are
 * upstream JSON objects; `next()` waits for the next event of a type.
 * Like a client written against the spec, it repeats a request that a
 * master which does not lead answers `307` at the `Location` given (the
 * leader), and keeps talking to the leader from then on (`url`).
 */
import http from 'node:http';
import { decodeJson, encodeJson } from '../wire/json.js';
import { decodeProto, encodeProto } from '../wire/proto-codec.js';
import { EventQueue, openStream, type CallResult, type EventMatch, type JsonEvent } from './event-queue.js';

export type { CallResult, EventMatch, JsonEvent } from './event-queue.js';

/** The message encoding a client speaks; events are always handed out as upstream JSON objects. */
export type Encoding = 'json' | 'protobuf';

const MEDIA: Record<Encoding, string> = { json: 'application/json', protobuf: 'application/x-protobuf' };

/** Redirects one request follows before it gives up (masters that redirect in a loop). */
const MAX_REDIRECTS = 5;

export class SchedulerClient {
  readonly #queue = new EventQueue();
  readonly events = this.#queue.events;
  streamId: string | undefined;
  frameworkId: string | undefined;
  #request: http.ClientRequest | undefined;
  readonly #agent = new http.Agent({ keepAlive: true });
  #url: URL;

  constructor(
    masterUrl: string,
    readonly encoding: Encoding = 'json',
    /** Sent with every request, e.g. `authorization` for a master started with credentials. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
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
    if (this.encoding === 'json') return JSON.parse(record.toString('utf8')) as JsonEvent;
    const decoded = decodeProto<object>('mesos.v1.scheduler.Event', record, 'Event');
    if (!decoded.ok) throw new Error(decoded.error);
    const event = JSON.parse(encodeJson('mesos.v1.scheduler.Event', decoded.value)) as JsonEvent;
    // The same shape as the JSON stream, which repeats an ERROR's message at the top level.
    if (event.type === 'ERROR') event.message = event.error.message;
    return event;
  }

  /** Where the scheduler API is: the master given, or the leader a redirect named. */
  get url(): URL {
    return this.#url;
  }

  /** Sends SUBSCRIBE (following redirects to the leader) and resolves once the response headers arrive. */
  async subscribe(frameworkInfo: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<CallResult> {
    const body = this.encodeCall({ type: 'SUBSCRIBE', subscribe: { framework_info: frameworkInfo, ...extra } });
    for (let hops = 0; ; hops++) {
      const answer = await this.#subscribeHere(body);
      if (answer.status !== 307 || hops === MAX_REDIRECTS || !this.#follow(answer)) return answer;
    }
  }

  /** Moves to the master a 307 names; false without a usable `Location`. */
  #follow(answer: CallResult): boolean {
    const location = answer.headers.location;
    if (typeof location !== 'string' || location === '') return false;
    // Upstream writes it protocol-relative (`//host:port/path`): the scheme stays the one asked.
    const next = new URL(location.startsWith('//') ? `${this.#url.protocol}${location}` : location, this.#url);
    if (next.pathname === '/') next.pathname = this.#url.pathname;
    this.#url = next;
    return true;
  }

  #subscribeHere(body: string | Buffer): Promise<CallResult> {
    const media = MEDIA[this.encoding];
    const { request, answer } = openStream(this.#url, { ...this.headers, 'content-type': media, accept: media }, body, {
      opened: (headers) => {
        const id = headers['mesos-stream-id'];
        this.streamId = typeof id === 'string' ? id : undefined;
      },
      record: (record) => this.#onEvent(this.#decodeEvent(record)),
      closed: () => this.#onClose(),
    });
    this.#request = request;
    return answer;
  }

  /** Posts a call (an upstream JSON object), following redirects to the leader; adds framework_id and the stream id header. */
  async call(call: Record<string, unknown>, headers: Record<string, string> = {}): Promise<CallResult> {
    const body = this.encodeCall({ framework_id: { value: this.frameworkId }, ...call });
    for (let hops = 0; ; hops++) {
      const answer = await postRaw(this.#url, body, {
        ...this.headers,
        'content-type': MEDIA[this.encoding],
        ...(this.streamId === undefined ? {} : { 'mesos-stream-id': this.streamId }),
        ...headers,
      }, this.#agent);
      if (answer.status !== 307 || hops === MAX_REDIRECTS || !this.#follow(answer)) return answer;
    }
  }

  /** The next event not yet taken that matches (a type, or a test; any if omitted). */
  next(match?: EventMatch, timeoutMs = 5_000): Promise<JsonEvent> {
    return this.#queue.next(match, timeoutMs);
  }

  get closed(): boolean {
    return this.#queue.closed;
  }

  /** Drops the subscription connection (as a crashed scheduler would). */
  disconnect(): void {
    this.#request?.destroy();
    this.#agent.destroy();
  }

  /** The next UPDATE for a task. */
  nextUpdate(taskId: string, timeoutMs = 5_000): Promise<JsonEvent> {
    return this.next((e) => e.type === 'UPDATE' && e.update.status.task_id.value === taskId, timeoutMs);
  }

  #onEvent(event: JsonEvent): void {
    if (event.type === 'SUBSCRIBED') this.frameworkId = event.subscribed.framework_id.value;
    this.#queue.push(event);
  }

  #onClose(): void {
    this.#queue.close();
  }
}

/** POSTs a body; `agent` keeps connections alive, `socketPath` goes over a Unix domain socket instead of TCP. */
export function postRaw(url: URL, body: string | Buffer, headers: Record<string, string>, agent?: http.Agent, socketPath?: string): Promise<CallResult> {
  return new Promise((resolve, reject) => {
    const options = { method: 'POST', headers, ...(agent === undefined ? {} : { agent }), ...(socketPath === undefined ? {} : { socketPath }) };
    const req = http.request(url, options, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
