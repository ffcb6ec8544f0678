/**
 * A framework's event stream over an HTTP response: one RecordIO record per
 * event, each written as its own HTTP chunk. The core calls `send` and
 * `close` synchronously and never waits; if the client stops reading and
 * more than `maxBufferedBytes` pile up, the connection is dropped (the
 * master then treats the framework as disconnected) instead of letting
 * memory grow without bound.
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
 * in the trace.
 */
import type { ServerResponse } from 'node:http';
import type { EventSink, SchedulerEvent } from '../core/types.js';
import { frameRecord } from '../wire/recordio.js';

export const DEFAULT_MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
export const DEFAULT_KEEPALIVE_MS = 5_000;

export class HttpEventStream implements EventSink {
  #closed = false;
  #ended = false;
  /** Records produced before the response headers are known. */
  #early: Buffer[] | undefined = [];
  #keepalive: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly encode: (event: SchedulerEvent) => Uint8Array | string,
    private readonly maxBufferedBytes = DEFAULT_MAX_BUFFERED_BYTES,
    private readonly keepaliveMs = DEFAULT_KEEPALIVE_MS,
  ) {
    res.once('close', () => clearTimeout(this.#keepalive));
  }

  get closed(): boolean {
    return this.#closed || this.res.destroyed;
  }

  /** Writes the status line and headers, then whatever was sent before. */
  start(headers: Record<string, string>): void {
    const early = this.#early ?? [];
    this.#early = undefined;
    if (this.res.destroyed) return;
    this.res.writeHead(200, headers);
    for (const record of early) this.res.write(record);
    if (this.#ended) this.res.end();
    else this.#armKeepalive();
  }

  #armKeepalive(): void {
    clearTimeout(this.#keepalive);
    if (this.keepaliveMs <= 0) return;
    this.#keepalive = setTimeout(() => this.send({ type: 'HEARTBEAT' }), this.keepaliveMs);
    this.#keepalive.unref();
  }

  send(event: SchedulerEvent): void {
    if (this.closed) return;
    const record = frameRecord(this.encode(event));
    if (this.#early !== undefined) {
      this.#early.push(record);
      return;
    }
    this.res.write(record);
    this.#armKeepalive();
    if (this.res.writableLength > this.maxBufferedBytes) {
      this.#closed = true;
      this.res.destroy(new Error('subscriber too slow: event buffer limit reached'));
    }
  }

  close(): void {
    if (this.closed) return;
    this.#closed = true;
    this.#ended = true;
    clearTimeout(this.#keepalive);
    if (this.#early === undefined) this.res.end();
  }
}
