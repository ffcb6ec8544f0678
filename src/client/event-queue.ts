/**
 * Events of a stream as a client takes them: in arrival order, or the next
 * one that matches, waiting for it if it has not come yet; and the
 * subscription request that opens such a stream.
 */
import http from 'node:http';
import { RecordReader } from '../wire/recordio.js';

export interface CallResult {
  readonly status: number;
  readonly body: string;
  readonly headers: http.IncomingHttpHeaders;
}

export interface StreamHandlers {
  /** The stream's response headers arrived (before any record). */
  readonly opened?: (headers: http.IncomingHttpHeaders) => void;
  readonly record: (record: Buffer) => void;
  /** The stream ended (not called for a refused subscription, which never had one). */
  readonly closed: () => void;
}

/**
 * POSTs a SUBSCRIBE and reads its RecordIO stream; resolves once the
 * response headers arrive (a refusal with its body). The subscription owns
 * its connection (agent: false): a stream that ended must never hand its
 * socket to a later request. With `socketPath`, over that Unix domain
 * socket (the URL gives the path).
 */
export function openStream(
  url: URL,
  headers: Record<string, string>,
  body: string | Buffer,
  on: StreamHandlers,
  socketPath?: string,
): { readonly request: http.ClientRequest; readonly answer: Promise<CallResult> } {
  let request!: http.ClientRequest;
  const answer = new Promise<CallResult>((resolve, reject) => {
    let answered = false;
    request = http.request(url, { method: 'POST', headers, agent: false, ...(socketPath === undefined ? {} : { socketPath }) }, (res) => {
      answered = true;
      if (res.statusCode !== 200) {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
        return;
      }
      on.opened?.(res.headers);
      const reader = new RecordReader();
      res.on('data', (chunk: Buffer) => {
        for (const record of reader.push(chunk)) on.record(record);
      });
      res.on('close', () => on.closed());
      resolve({ status: 200, body: '', headers: res.headers });
    });
    // Before a response, an error fails the subscription; after it, it ends the stream.
    request.on('error', (e) => (answered ? on.closed() : reject(e)));
    request.end(body);
  });
  return { request, answer };
}

export type JsonEvent = { type: string } & Record<string, any>;

/** An event type, or a test on events; undefined matches any event. */
export type EventMatch = string | ((event: JsonEvent) => boolean) | undefined;

interface Waiter {
  readonly match: EventMatch;
  readonly resolve: (event: JsonEvent) => void;
  readonly reject: (error: Error) => void;
}

export class EventQueue {
  /** Events not taken yet, oldest first. */
  readonly events: JsonEvent[] = [];
  #waiters: Waiter[] = [];
  #closed = false;

  get closed(): boolean {
    return this.#closed;
  }

  /** The next event not yet taken that matches (a type, or a test; any if omitted). */
  next(match?: EventMatch, timeoutMs = 5_000): Promise<JsonEvent> {
    const found = this.#take(match);
    const what = typeof match === 'string' ? match : 'an event';
    if (found !== undefined) return Promise.resolve(found);
    if (this.#closed) return Promise.reject(new Error(`stream closed while waiting for ${what}`));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        match,
        resolve: (e) => (clearTimeout(timer), resolve(e)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      };
      // A waiter that timed out leaves: the event it waited for, if it comes later, stays for the next taker.
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  push(event: JsonEvent): void {
    const i = this.#waiters.findIndex((w) => matches(w.match, event));
    if (i >= 0) this.#waiters.splice(i, 1)[0]!.resolve(event);
    else this.events.push(event);
  }

  /** The stream ended: whoever waits is told. */
  close(): void {
    this.#closed = true;
    for (const w of this.#waiters.splice(0)) w.reject(new Error('event stream closed'));
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
}

function matches(match: EventMatch, event: JsonEvent): boolean {
  return match === undefined || (typeof match === 'string' ? event.type === match : match(event));
}
