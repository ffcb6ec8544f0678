/**
 * The open event streams of one server, by connection id: the core
 * addresses its outbox records to these ids, and the driver hands the
 * records here after every input. A record for a connection that has gone
 * is dropped (the core learns of the close through `disconnect`).
 */
import type { ContainerTermination, ExecutorEvent, ProcessOutput } from '../core/model/executor-api.js';
import type { OperatorEvent } from '../core/model/operator-types.js';
import type { OutboxRecord } from '../core/network/outbox.js';
import type { SchedulerEvent } from '../core/model/types.js';

export interface EventStream<E = SchedulerEvent> {
  send(event: E): void;
  /** Ends the stream; nothing is sent afterwards. */
  close(): void;
  /** The connection dies (reset, not a clean end); `close` where a stream cannot. */
  cut?(reason: string): void;
  /** The core holds the stream's events (a stalled connection) or lets them go again: no keepalives of its own meanwhile. */
  stall?(stalled: boolean): void;
}

/**
 * A scheduler's, an operator's or an executor's event stream, a container
 * session's output, or a WAIT_CONTAINER waiting for its answer: the core
 * addresses each kind of record only to its own kind.
 */
type AnyPayload = SchedulerEvent | OperatorEvent | ExecutorEvent | ProcessOutput | ContainerTermination;
type AnyStream =
  | EventStream<SchedulerEvent>
  | EventStream<OperatorEvent>
  | EventStream<ExecutorEvent>
  | EventStream<ProcessOutput>
  | EventStream<ContainerTermination>;

export class Connections {
  readonly #streams = new Map<string, AnyStream>();
  #next = 0;

  /** `prefix` begins its ids: the ids of two servers driving one core must differ. */
  constructor(private readonly prefix = 'c') {}

  /** A new connection id, unique within this server. */
  open(stream: AnyStream): string {
    const id = `${this.prefix}${++this.#next}`;
    this.#streams.set(id, stream);
    return id;
  }

  forget(connectionId: string): void {
    this.#streams.delete(connectionId);
  }

  get size(): number {
    return this.#streams.size;
  }

  /** Ends every open stream (the cluster behind them was swapped: its subscribers must subscribe again). */
  closeAll(): void {
    const streams = [...this.#streams.values()];
    this.#streams.clear();
    for (const stream of streams) stream.close();
  }

  readonly deliver = (records: readonly OutboxRecord[]): void => {
    for (const record of records) {
      const stream = this.#streams.get(record.connectionId);
      if (stream === undefined) continue;
      if (record.kind === 'close') {
        if (record.abort === true && stream.cut !== undefined) stream.cut(record.reason);
        else stream.close();
        this.#streams.delete(record.connectionId);
      } else if (record.kind === 'stall') stream.stall?.(record.stalled);
      else (stream as EventStream<AnyPayload>).send(payloadOf(record));
    }
  };
}

function payloadOf(record: Exclude<OutboxRecord, { kind: 'close' | 'stall' }>): AnyPayload {
  switch (record.kind) {
    case 'process-io':
      return record.output;
    case 'container-wait':
      return record.termination;
    default:
      return record.event;
  }
}
