/**
 * A framework's event stream over an HTTP response: one RecordIO record per
 * event, each written as its own HTTP chunk. The core calls `send` and
 * `close` synchronously and never waits; if the client stops reading and
 * more than `maxBufferedBytes` pile up, the connection is dropped (the
 * master then treats the framework as disconnected) instead of letting
 * memory grow without bound.
 */
import type { ServerResponse } from 'node:http';
import type { EventSink, SchedulerEvent } from '../core/types.js';
import { frameRecord } from '../wire/recordio.js';

export const DEFAULT_MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

export class HttpEventStream implements EventSink {
  #closed = false;
  #ended = false;
  /** Records produced before the response headers are known. */
  #early: Buffer[] | undefined = [];

  constructor(
    private readonly res: ServerResponse,
    private readonly encode: (event: SchedulerEvent) => Uint8Array | string,
    private readonly maxBufferedBytes = DEFAULT_MAX_BUFFERED_BYTES,
  ) {}

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
  }

  send(event: SchedulerEvent): void {
    if (this.closed) return;
    const record = frameRecord(this.encode(event));
    if (this.#early !== undefined) {
      this.#early.push(record);
      return;
    }
    this.res.write(record);
    if (this.res.writableLength > this.maxBufferedBytes) {
      this.#closed = true;
      this.res.destroy(new Error('subscriber too slow: event buffer limit reached'));
    }
  }

  close(): void {
    if (this.closed) return;
    this.#closed = true;
    this.#ended = true;
    if (this.#early === undefined) this.res.end();
  }
}
