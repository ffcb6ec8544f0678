/**
 * A framework's event stream over an HTTP response: one RecordIO record per
 * event, each written as its own HTTP chunk. The driver calls `send` and
 * `close` with the core's outbox records and never waits; if the client
 * stops reading, the bytes waiting count against the server's stream budget
 * (stream-budget.ts), which drops the connection (the master then treats
 * the framework as disconnected) instead of letting memory grow without
 * bound.
 *
 * The listener's idle timeout does not apply to a stream's socket: a stream
 * is quiet between heartbeats by design, and one whose client stops reading
 * is the budget's to cut.
 *
 * Keepalive: if nothing was written for `keepaliveMs` of wall-clock time
 * (5 s), the stream writes a HEARTBEAT itself, so events arrive at least
 * every 10 s with a wide margin. The core's heartbeats follow cluster time
 * and the advertised interval (15 s by default, as upstream); under virtual
 * time, or with a long interval, they may not come for a long while, and
 * clients with a 10 s read timeout (the npm scheduler library
 * mesos-framework, proxies) drop the stream and exit. An extra HEARTBEAT is
 * harmless to a scheduler (it only resets its liveness timer); the cost is a
 * few bytes every 5 s on an idle stream. These transport heartbeats are not
 * in the trace. A stream the core stalls (the `stall_heartbeats` fault)
 * writes none: its reader must see the silence.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { SchedulerEvent } from '../core/model/types.js';
import type { EventStream } from './connections.js';
import type { BudgetedStream, StreamBudget } from './stream-budget.js';

export const DEFAULT_MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
export const DEFAULT_KEEPALIVE_MS = 5_000;

export interface EventStreamOptions {
  /** Where the bytes waiting are counted, and the stream cut when they pass a bound. */
  readonly budget: StreamBudget;
  /** Wall-clock silence after which the stream writes a HEARTBEAT (0: never). */
  readonly keepaliveMs?: number;
}

/**
 * The stream of any record type; a keepalive (on by default) needs a
 * HEARTBEAT event, which the scheduler's and the operator's events both
 * have: streams of other records turn it off (`keepaliveMs: 0`).
 */
export class HttpEventStream<E = SchedulerEvent> implements EventStream<E>, BudgetedStream {
  /** Set by the route once known, for the log of a cut. */
  connectionId: string | undefined;
  frameworkId: string | undefined;
  #closed = false;
  #stalled = false;
  #ended = false;
  /** Records produced before the response headers are known. */
  #early: Buffer[] | undefined = [];
  #keepalive: NodeJS.Timeout | undefined;
  /** Wall-clock time of the last write, for the keepalive. */
  #lastWriteMs = 0;
  #socket: Socket | undefined;
  /** Where the chunks go once the headers are out: the socket, or an in-process reader's response. */
  #out: Sink | undefined;
  /** Chunks written in this tick, sent together in one socket write. */
  #batch: Buffer[] | undefined;
  #batchBytes = 0;

  readonly #budget: StreamBudget;
  readonly #keepaliveMs: number;

  constructor(
    private readonly res: ServerResponse,
    /** The record of an event; undefined for one this stream's reader may not see, which is skipped. */
    private readonly encode: (event: E) => Uint8Array | string | undefined,
    options: EventStreamOptions,
  ) {
    this.#budget = options.budget;
    this.#keepaliveMs = options.keepaliveMs ?? DEFAULT_KEEPALIVE_MS;
    res.once('close', () => {
      clearInterval(this.#keepalive);
      this.#budget.release(this);
    });
  }

  get closed(): boolean {
    return this.#closed || this.res.destroyed;
  }

  /** The core holds this stream's events: no keepalive either, until released. */
  stall(stalled: boolean): void {
    this.#stalled = stalled;
    this.#lastWriteMs = performance.now();
  }

  get bufferedBytes(): number {
    return (this.#socket?.writableLength ?? 0) + this.#batchBytes;
  }

  cut(reason: string): void {
    this.#closed = true;
    this.res.destroy(new Error(reason));
  }

  /** Writes the status line and headers, then whatever was sent before. */
  start(headers: Record<string, string>): void {
    const early = this.#early ?? [];
    this.#early = undefined;
    const socket = this.res.socket;
    if (this.res.destroyed || socket === null) return;
    if (isInProcess(this.res)) this.#out = this.#inProcessSink(headers);
    else {
      this.res.writeHead(200, { ...headers, 'transfer-encoding': 'chunked', connection: 'close' });
      this.res.flushHeaders();
      socket.setTimeout(0);
      // Bytes the kernel took free budget without a write to report them.
      socket.on('drain', () => {
        if (!this.closed) this.#budget.charge(this, this.bufferedBytes);
      });
      this.#socket = socket;
      this.#out = {
        write: (bytes) => socket.write(bytes),
        end: () => socket.end('0\r\n\r\n'),
        gone: () => socket.destroyed,
      };
    }
    for (const chunk of early) this.#write(chunk);
    // What was sent before leaves with the headers, now: the core may go on working before the next tick.
    this.#flush();
    if (this.#ended) this.#finish();
    else this.#armKeepalive();
  }

  /**
   * One record in one HTTP chunk. The chunks of one tick (a core input can
   * emit thousands of events) leave in a single socket write.
   */
  #write(chunk: Buffer): void {
    this.#batchBytes += chunk.length;
    if (this.#batch !== undefined) {
      this.#batch.push(chunk);
      return;
    }
    this.#batch = [chunk];
    process.nextTick(() => this.#flush());
  }

  #flush(): void {
    const batch = this.#batch;
    this.#batch = undefined;
    this.#batchBytes = 0;
    if (batch === undefined || this.#out === undefined || this.#out.gone()) return;
    this.#out.write(batch.length === 1 ? batch[0]! : Buffer.concat(batch));
  }

  #finish(): void {
    this.#flush();
    this.#out?.end();
  }

  /**
   * A reader in this process (an injected request) takes the records as
   * they are, without HTTP's chunk framing: its response is no socket.
   */
  #inProcessSink(headers: Record<string, string>): Sink {
    const res = this.res;
    res.writeHead(200, headers);
    return {
      write: (chunks) => {
        res.write(unframed(chunks));
      },
      end: () => res.end(),
      gone: () => res.destroyed,
    };
  }

  /**
   * One timer per stream ticking five times per keepalive period: a tick
   * that finds the stream silent for a whole period sends a HEARTBEAT. The
   * silence stays under 1.2 periods, and a busy stream pays only a clock
   * read per event.
   */
  #armKeepalive(): void {
    const period = this.#keepaliveMs;
    if (period <= 0) return;
    this.#lastWriteMs = performance.now();
    this.#keepalive = setInterval(() => {
      if (!this.#stalled && performance.now() - this.#lastWriteMs >= period)
        this.send({ type: 'HEARTBEAT' } as unknown as E);
    }, period / 5);
    this.#keepalive.unref();
  }

  send(event: E): void {
    if (this.closed) return;
    const payload = this.encode(event);
    if (payload === undefined) return;
    const chunk = chunkOf(payload);
    if (this.#early !== undefined) {
      this.#early.push(chunk);
      return;
    }
    this.#write(chunk);
    this.#lastWriteMs = performance.now();
    // The client's backlog is what waits before this event: one event, however large (an OFFERS of every agent of
    // a large cluster), never cuts a client that reads; one that does not is cut by its next event.
    this.#budget.charge(this, this.bufferedBytes - chunk.length);
  }

  close(): void {
    if (this.closed) return;
    this.#closed = true;
    this.#ended = true;
    clearInterval(this.#keepalive);
    if (this.#early === undefined) this.#finish();
  }
}

/** Where a stream's bytes go. */
interface Sink {
  write(bytes: Buffer): void;
  end(): void;
  /** The connection went away: nothing more is written. */
  gone(): boolean;
}

/**
 * A response that no socket carries: a request injected in this process
 * (fastify's `inject`, which RunningCluster.inProcess uses).
 */
export function isInProcess(res: ServerResponse): boolean {
  return (res as ServerResponse & { isLightMyRequest?: boolean }).isLightMyRequest === true;
}

/** The RecordIO records of consecutive HTTP chunks (`chunkOf`), without the framing. */
function unframed(chunks: Buffer): Buffer {
  const records: Buffer[] = [];
  for (let at = 0; at < chunks.length; ) {
    const eol = chunks.indexOf(0x0a, at);
    const size = Number.parseInt(chunks.toString('latin1', at, eol - 1), 16);
    records.push(chunks.subarray(eol + 1, eol + 1 + size));
    at = eol + 1 + size + 2;
  }
  return records.length === 1 ? records[0]! : Buffer.concat(records);
}

/**
 * One event as one HTTP chunk holding one RecordIO record, built in a single
 * allocation: `<hex chunk size>\r\n<record length>\n<payload>\r\n`.
 */
export function chunkOf(payload: Uint8Array | string): Buffer {
  const size = typeof payload === 'string' ? Buffer.byteLength(payload, 'utf8') : payload.byteLength;
  if (size === 0) throw new Error('recordio: records are never empty');
  const prefix = `${size}\n`;
  const head = `${(prefix.length + size).toString(16)}\r\n${prefix}`;
  const chunk = Buffer.allocUnsafe(head.length + size + 2);
  chunk.write(head, 0, 'latin1');
  if (typeof payload === 'string') chunk.write(payload, head.length, 'utf8');
  else chunk.set(payload, head.length);
  chunk[chunk.length - 2] = 0x0d;
  chunk[chunk.length - 1] = 0x0a;
  return chunk;
}
