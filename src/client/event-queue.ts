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
    request = http.request(
      url,
      { method: 'POST', headers, agent: false, ...(socketPath === undefined ? {} : { socketPath }) },
      (res) => {
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
      },
    );
    // Before a response, an error fails the subscription; after it, it ends the stream.
    request.on('error', (e) => (answered ? on.closed() : reject(e)));
    request.end(body);
  });
  return { request, answer };
}

export type JsonEvent = { type: string } & Record<string, any>;

/** An event type, or a test on events; undefined matches any event. */
export type EventMatch<E extends { type: string } = JsonEvent> = string | ((event: E) => boolean) | undefined;

interface Waiter<E> {
  readonly match: EventMatch<E & { type: string }>;
  readonly resolve: (event: E) => void;
  readonly reject: (error: Error) => void;
}

/**
 * The events of one stream not taken yet, oldest first; `next` takes the
 * first that matches (waiting for it), `iterate` takes them all in order
 * until the stream ends.
 */
export class EventQueue<E extends { type: string } = JsonEvent> {
  /** Events not taken yet, oldest first. */
  readonly events: E[] = [];
  /** The cluster's clock when the client knows it (a cluster of this process in virtual time): a timeout then says whether it moved. */
  clock: (() => ClusterClock) | undefined;
  #waiters: Waiter<E>[] = [];
  #closed = false;

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * The next event not yet taken that matches (a type, or a test; any if
   * omitted), waiting at most `timeoutMs` of wall-clock time for it
   * (`Infinity`: until the stream ends). `what` names it in a timeout's
   * message (the type, or "an event").
   */
  next(match?: EventMatch<E>, timeoutMs = DEFAULT_WAIT_MS, what = describe(match)): Promise<E> {
    const found = this.#take(match);
    if (found !== undefined) return Promise.resolve(found);
    if (this.#closed) return Promise.reject(new StreamClosedError(`stream closed while waiting for ${what}`));
    const clockAtStart = this.clock?.();
    return new Promise((resolve, reject) => {
      const waiter: Waiter<E> = {
        match,
        resolve: (e) => (clearTimeout(timer), resolve(e)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      };
      // A waiter that timed out leaves: the event it waited for, if it comes later, stays for the next taker.
      const timer = Number.isFinite(timeoutMs)
        ? setTimeout(() => {
            this.#waiters = this.#waiters.filter((w) => w !== waiter);
            const hint = clockHint(clockAtStart, this.clock?.());
            reject(new WaitTimeoutError(what, timeoutMs, this.events, hint));
          }, timeoutMs)
        : undefined;
      this.#waiters.push(waiter);
    });
  }

  /**
   * Every event in arrival order, each taken as it is handed out, until the
   * stream ends (the loop then ends); those `skip` tells are taken and
   * dropped. Leaving the loop early leaves the stream open.
   */
  async *iterate(skip?: (event: E) => boolean): AsyncGenerator<E, void, undefined> {
    for (;;) {
      let event: E;
      try {
        event = await this.next(undefined, Infinity);
      } catch (error) {
        if (error instanceof StreamClosedError) return;
        throw error;
      }
      if (skip?.(event) !== true) yield event;
    }
  }

  /** `iterate` as events of the typed union `T`, HEARTBEATs taken and dropped unless `heartbeats`. */
  typed<T extends { type: string }>(heartbeats: boolean): AsyncGenerator<T, void, undefined> {
    return this.iterate(heartbeats ? undefined : (e) => e.type === 'HEARTBEAT') as unknown as AsyncGenerator<
      T,
      void,
      undefined
    >;
  }

  /** The next event of `type` not yet taken (and passing `where`), as the typed event `T`. */
  nextOf<T>(
    type: string,
    options: { readonly timeoutMs?: number; readonly where?: (event: T) => boolean },
    what: string = type,
  ): Promise<T> {
    const where = options.where;
    const match = (e: E) => e.type === type && (where === undefined || where(e as unknown as T));
    return this.next(match, options.timeoutMs ?? DEFAULT_WAIT_MS, what) as unknown as Promise<T>;
  }

  push(event: E): void {
    const i = this.#waiters.findIndex((w) => matches(w.match, event));
    if (i >= 0) this.#waiters.splice(i, 1)[0]!.resolve(event);
    else this.events.push(event);
  }

  /** The stream ended: whoever waits is told. */
  close(): void {
    this.#closed = true;
    for (const w of this.#waiters.splice(0)) w.reject(new StreamClosedError('event stream closed'));
  }

  #take(match: EventMatch<E>): E | undefined {
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

/**
 * How long a wait for an event lasts unless told, in wall-clock ms: well
 * under a test runner's own timeout (vitest's and jest's are 5 s), so that a
 * test that waits in vain fails with this wait's message, not the runner's.
 */
export const DEFAULT_WAIT_MS = 3_000;

/** A virtual clock a client can read: where the cluster's time is. */
export interface ClusterClock {
  readonly virtual: boolean;
  readonly nowMs: number;
}

/**
 * A wait for an event ran out: which event, how long, what came instead
 * (still pending), and, where the client could tell, that the cluster's
 * virtual clock never moved meanwhile (the usual cause: nothing advanced it).
 */
export class WaitTimeoutError extends Error {
  override name = 'WaitTimeoutError';
  readonly pending: readonly string[];
  constructor(
    readonly awaited: string,
    readonly timeoutMs: number,
    pending: readonly { type: string }[],
    hint: string,
  ) {
    const types = pending.map((e) => e.type);
    const came = types.length === 0 ? 'no event came' : `events came but none matched (${countsOf(types)})`;
    super(`timed out after ${timeoutMs} ms waiting for ${awaited}: ${came}.${hint === '' ? '' : ` ${hint}`}`);
    this.pending = types;
  }
}

const MOVE_IT = '(cluster.advance(ms), cluster.runUntil(...), or POST /sim/v1/advance), not by waiting.';

/** What a timeout says of the cluster's clock: whether it moved, where the client can read it; else how virtual time moves. */
function clockHint(start: ClusterClock | undefined, end: ClusterClock | undefined): string {
  if (start === undefined || end === undefined)
    return `If the cluster runs in virtual time, its clock moves only when the test moves it ${MOVE_IT}`;
  if (!start.virtual) return '';
  if (start.nowMs === end.nowMs)
    return `The cluster runs in virtual time and its clock has not moved since the wait began (still at ${start.nowMs} ms): move it ${MOVE_IT}`;
  return `The cluster's virtual clock moved from ${start.nowMs} to ${end.nowMs} ms meanwhile.`;
}

/** `OFFERS ×2, HEARTBEAT`: the types in order of first arrival, with their counts. */
function countsOf(types: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const t of types) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts].map(([t, n]) => (n === 1 ? t : `${t} ×${n}`)).join(', ');
}

/** How a timeout names what was awaited. */
function describe(match: EventMatch<never>): string {
  return typeof match === 'string' ? match : match === undefined ? 'an event' : 'an event that matches';
}

/** The stream ended before the event waited for came. */
export class StreamClosedError extends Error {
  override name = 'StreamClosedError';
}

function matches<E extends { type: string }>(match: EventMatch<E>, event: E): boolean {
  return match === undefined || (typeof match === 'string' ? event.type === match : match(event));
}
