/**
 * The bytes waiting on the master's event streams, one stream at a time and
 * all of them together. A stream's waiting bytes are those written and not
 * yet taken by the kernel: they grow while its client does not read. Two
 * bounds apply:
 *
 *   per stream   a stream over `perStreamBytes` is cut
 *   all streams  when the sum goes over `totalBytes`, the stream with the
 *                most bytes waiting is cut, then the next, until the sum
 *                is back under it; the others keep flowing
 *
 * Without the second, N stalled consumers may hold N times the first.
 * Cutting the largest spares the streams that read: theirs drain at once.
 * Each cut is one warn log line naming the connection and its framework;
 * the master then sees a disconnection, as for any broken stream.
 *
 * Streams report their own figure when they write (`charge`); a figure only
 * shrinks between reports (the kernel takes bytes, nothing adds them), so
 * the sum kept is an upper bound. It is measured afresh, stream by stream,
 * only when it goes over, so a write costs a map update.
 */
import type { FastifyBaseLogger } from 'fastify';

export interface BudgetedStream {
  /** Bytes written to the stream and not yet taken by the kernel. */
  readonly bufferedBytes: number;
  /** Ended or broken, perhaps before its close event has been handled. */
  readonly closed: boolean;
  readonly connectionId: string | undefined;
  readonly frameworkId: string | undefined;
  /** Drops the connection; the stream sends nothing more. */
  cut(reason: string): void;
}

export interface StreamBudgetOptions {
  readonly perStreamBytes: number;
  readonly totalBytes: number;
  readonly log: FastifyBaseLogger;
}

export class StreamBudget {
  readonly #charged = new Map<BudgetedStream, number>();
  #total = 0;

  constructor(private readonly options: StreamBudgetOptions) {}

  /** The sum of the last figures reported, an upper bound of the bytes waiting. */
  get chargedBytes(): number {
    return this.#total;
  }

  /** The bytes waiting on the streams now, each measured afresh (for `/metrics`); changes no figure kept. */
  get bufferedBytes(): number {
    let sum = 0;
    for (const stream of this.#charged.keys()) if (!stream.closed) sum += stream.bufferedBytes;
    return sum;
  }

  /** A stream's bytes waiting now; cuts it, or the largest of all, when a bound is passed. */
  charge(stream: BudgetedStream, bytes: number): void {
    const { perStreamBytes, totalBytes, log } = this.options;
    if (bytes > perStreamBytes) {
      this.release(stream);
      log.warn(
        {
          connectionId: stream.connectionId,
          frameworkId: stream.frameworkId,
          bufferedBytes: bytes,
          limitBytes: perStreamBytes,
        },
        'event stream cut: its client does not read and its buffer limit is reached',
      );
      stream.cut('subscriber too slow: event buffer limit reached');
      return;
    }
    this.#total += bytes - (this.#charged.get(stream) ?? 0);
    this.#charged.set(stream, bytes);
    if (this.#total > totalBytes) this.#enforce();
  }

  /** The stream has ended; its bytes no longer count. */
  release(stream: BudgetedStream): void {
    const bytes = this.#charged.get(stream);
    if (bytes === undefined) return;
    this.#total -= bytes;
    this.#charged.delete(stream);
  }

  #enforce(): void {
    this.#measure();
    const { totalBytes, log } = this.options;
    while (this.#total > totalBytes) {
      let worst: BudgetedStream | undefined;
      let most = -1;
      for (const [stream, bytes] of this.#charged) {
        if (bytes > most) [worst, most] = [stream, bytes];
      }
      if (worst === undefined) return;
      const before = this.#total;
      this.release(worst);
      log.warn(
        {
          connectionId: worst.connectionId,
          frameworkId: worst.frameworkId,
          bufferedBytes: most,
          allStreamsBytes: before,
          budgetBytes: totalBytes,
        },
        'event stream cut: the event streams buffer budget is reached and this stream has the most bytes waiting',
      );
      worst.cut('subscriber too slow: event streams buffer budget reached');
    }
  }

  /**
   * Replaces every figure by the stream's own, now. A stream that has closed
   * meanwhile frees its bytes, so its client's leaving costs no one else a cut.
   */
  #measure(): void {
    this.#total = 0;
    for (const stream of [...this.#charged.keys()]) {
      if (stream.closed) {
        this.#charged.delete(stream);
        continue;
      }
      const bytes = stream.bufferedBytes;
      this.#charged.set(stream, bytes);
      this.#total += bytes;
    }
  }
}
