/**
 * A small scheduler client of the HTTP API, in JSON: subscribes, reads the
 * RecordIO event stream, and sends calls with the stream id. Events are
 * upstream JSON objects; `next()` waits for the next event of a type.
 */
import http from 'node:http';
import { decodeJson, encodeJson } from '../wire/json.js';
import { decodeProto, encodeProto } from '../wire/proto-codec.js';
import { RecordReader } from '../wire/recordio.js';

/** The message encoding a client speaks; events are always handed out as upstream JSON objects. */
export type Encoding = 'json' | 'protobuf';

const MEDIA: Record<Encoding, string> = { json: 'application/json', protobuf: 'application/x-protobuf' };

export type JsonEvent = { type: string } & Record<string, any>;

export interface CallResult {
  readonly status: number;
  readonly body: string;
  readonly headers: http.IncomingHttpHeaders;
}

/** An event type, or a test on events; undefined matches any event. */
export type EventMatch = string | ((event: JsonEvent) => boolean) | undefined;

interface Waiter {
  readonly match: EventMatch;
  readonly resolve: (event: JsonEvent) => void;
  readonly reject: (error: Error) => void;
}

export class SchedulerClient {
  readonly events: JsonEvent[] = [];
  streamId: string | undefined;
  frameworkId: string | undefined;
  #waiters: Waiter[] = [];
  #request: http.ClientRequest | undefined;
  #closed = false;
  readonly #agent = new http.Agent({ keepAlive: true });
  readonly #url: URL;

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

  /** Sends SUBSCRIBE and resolves once the response headers arrive. */
  subscribe(frameworkInfo: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<CallResult> {
    const body = this.encodeCall({ type: 'SUBSCRIBE', subscribe: { framework_info: frameworkInfo, ...extra } });
    const media = MEDIA[this.encoding];
    return new Promise((resolve, reject) => {
      let answered = false;
      // A subscription owns its connection (agent: false): a stream that ended
      // must never hand its socket to a later request.
      const headers = { ...this.headers, 'content-type': media, accept: media };
      const req = http.request(this.#url, { method: 'POST', headers, agent: false }, (res) => {
        answered = true;
        const id = res.headers['mesos-stream-id'];
        if (res.statusCode !== 200) {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
          return;
        }
        this.streamId = typeof id === 'string' ? id : undefined;
        const reader = new RecordReader();
        res.on('data', (chunk: Buffer) => {
          for (const record of reader.push(chunk)) this.#onEvent(this.#decodeEvent(record));
        });
        res.on('close', () => this.#onClose());
        resolve({ status: 200, body: '', headers: res.headers });
      });
      // Before a response, an error fails the subscription; after it, it ends the stream.
      req.on('error', (e) => (answered ? this.#onClose() : reject(e)));
      req.end(body);
      this.#request = req;
    });
  }

  /** Posts a call (an upstream JSON object); adds framework_id and the stream id header. */
  call(call: Record<string, unknown>, headers: Record<string, string> = {}): Promise<CallResult> {
    const body = this.encodeCall({ framework_id: { value: this.frameworkId }, ...call });
    return postRaw(this.#url, body, {
      ...this.headers,
      'content-type': MEDIA[this.encoding],
      ...(this.streamId === undefined ? {} : { 'mesos-stream-id': this.streamId }),
      ...headers,
    }, this.#agent);
  }

  /** The next event not yet taken that matches (a type, or a test; any if omitted). */
  next(match?: EventMatch, timeoutMs = 5_000): Promise<JsonEvent> {
    const found = this.#take(match);
    const what = typeof match === 'string' ? match : 'an event';
    if (found !== undefined) return Promise.resolve(found);
    if (this.#closed) return Promise.reject(new Error(`stream closed while waiting for ${what}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
      this.#waiters.push({
        match,
        resolve: (e) => (clearTimeout(timer), resolve(e)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
    });
  }

  get closed(): boolean {
    return this.#closed;
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

  #take(match: EventMatch): JsonEvent | undefined {
    for (let i = 0; i < this.events.length; i++) {
      const e = this.events[i]!;
      if (matches(match, e)) {
        this.events.splice(i, 1);
        return e;
      }
    }
    return undefined;
  }

  #onEvent(event: JsonEvent): void {
    if (event.type === 'SUBSCRIBED') this.frameworkId = event.subscribed.framework_id.value;
    const i = this.#waiters.findIndex((w) => matches(w.match, event));
    if (i >= 0) this.#waiters.splice(i, 1)[0]!.resolve(event);
    else this.events.push(event);
  }

  #onClose(): void {
    this.#closed = true;
    for (const w of this.#waiters.splice(0)) w.reject(new Error('event stream closed'));
  }
}

function matches(match: EventMatch, event: JsonEvent): boolean {
  return match === undefined || (typeof match === 'string' ? event.type === match : match(event));
}

export function postRaw(url: URL, body: string | Buffer, headers: Record<string, string>, agent?: http.Agent): Promise<CallResult> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers, ...(agent === undefined ? {} : { agent }) }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
