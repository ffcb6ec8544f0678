/**
 * What leaves the core for its subscribers: records addressed to a
 * connection (an event on its stream, or "close it, for this reason"),
 * collected during an input and drained by the caller (the HTTP layer)
 * once the input returns. The core never holds a socket or a sink.
 *
 * A connection can be stalled (a fault: the stream stays open, nothing
 * reaches its reader): its records wait here, in order, behind a `stall`
 * record that tells the reader's end to stop its own keepalives, and leave
 * together when it is released, as bytes queued on a live TCP connection
 * do. A connection that dies while stalled loses them.
 */
import type { ContainerLaunch, ContainerTermination, ExecutorEvent, ProcessOutput } from '../model/executor-api.js';
import type { OperatorEvent } from '../model/operator-types.js';
import type { SchedulerEvent } from '../model/types.js';

export type OutboxRecord =
  | { readonly kind: 'event'; readonly connectionId: string; readonly event: SchedulerEvent }
  /** An event of the operator event stream, for an operator subscriber's connection. */
  | { readonly kind: 'operator'; readonly connectionId: string; readonly event: OperatorEvent }
  /** Output of a nested container, for the connection of the session that launched it. */
  | { readonly kind: 'process-io'; readonly connectionId: string; readonly output: ProcessOutput }
  /** The end of a container, for a connection waiting for it (WAIT_CONTAINER); the connection's answer. */
  | { readonly kind: 'container-wait'; readonly connectionId: string; readonly termination: ContainerTermination }
  /** An event of the executor API, for an executor's connection to its agent. */
  | { readonly kind: 'executor'; readonly connectionId: string; readonly event: ExecutorEvent }
  /** `abort`: the connection dies (a reset) rather than ending cleanly. */
  | { readonly kind: 'close'; readonly connectionId: string; readonly reason: string; readonly abort?: boolean }
  /** The connection stalls (nothing reaches its reader until released) or is released. */
  | { readonly kind: 'stall'; readonly connectionId: string; readonly stalled: boolean };

/** What the agents ask of the host: start an executor's process, or kill its container. */
export type ContainerRecord =
  | { readonly kind: 'launch'; readonly launch: ContainerLaunch }
  | { readonly kind: 'destroy'; readonly agentId: string; readonly containerId: string }
  /** The gc delay of an exited container is over: its sandbox directory goes. */
  | { readonly kind: 'gc'; readonly agentId: string; readonly containerId: string; readonly directory: string };

export class Outbox {
  #records: OutboxRecord[] = [];
  #containers: ContainerRecord[] = [];
  /** The records of stalled connections, held until released. */
  readonly #held = new Map<string, OutboxRecord[]>();

  event(connectionId: string, event: SchedulerEvent): void {
    this.#push({ kind: 'event', connectionId, event });
  }

  operator(connectionId: string, event: OperatorEvent): void {
    this.#push({ kind: 'operator', connectionId, event });
  }

  executor(connectionId: string, event: ExecutorEvent): void {
    this.#push({ kind: 'executor', connectionId, event });
  }

  processIo(connectionId: string, output: ProcessOutput): void {
    this.#push({ kind: 'process-io', connectionId, output });
  }

  containerWait(connectionId: string, termination: ContainerTermination): void {
    this.#push({ kind: 'container-wait', connectionId, termination });
  }

  container(record: ContainerRecord): void {
    this.#containers.push(record);
  }

  close(connectionId: string, reason: string, abort = false): void {
    this.#push(abort ? { kind: 'close', connectionId, reason, abort } : { kind: 'close', connectionId, reason });
  }

  /** Holds the connection's records from now on, until `release`. */
  stall(connectionId: string): void {
    if (this.#held.has(connectionId)) return;
    this.#records.push({ kind: 'stall', connectionId, stalled: true });
    this.#held.set(connectionId, []);
  }

  /** Whether the connection's records are held. */
  stalled(connectionId: string): boolean {
    return this.#held.has(connectionId);
  }

  /** The held records go out, in order, after the connection's release. */
  release(connectionId: string): void {
    const held = this.#held.get(connectionId);
    if (held === undefined) return;
    this.#held.delete(connectionId);
    this.#records.push({ kind: 'stall', connectionId, stalled: false }, ...held);
  }

  /** The connection died: what was held for it is lost. */
  discard(connectionId: string): void {
    this.#held.delete(connectionId);
  }

  #push(record: OutboxRecord): void {
    const held = this.#held.size === 0 ? undefined : this.#held.get(record.connectionId);
    (held ?? this.#records).push(record);
  }

  /** Everything queued since the last drain, in order. */
  drain(): OutboxRecord[] {
    const out = this.#records;
    this.#records = [];
    return out;
  }

  /** The containers to launch and destroy since the last drain, in order. */
  drainContainers(): ContainerRecord[] {
    const out = this.#containers;
    this.#containers = [];
    return out;
  }
}
