/**
 * What leaves the core for its subscribers: records addressed to a
 * connection (an event on its stream, or "close it, for this reason"),
 * collected during an input and drained by the caller (the HTTP layer)
 * once the input returns. The core never holds a socket or a sink.
 */
import type { ContainerLaunch, ContainerTermination, ExecutorEvent, ProcessOutput } from './executor-api.js';
import type { OperatorEvent } from './operator-types.js';
import type { SchedulerEvent } from './types.js';

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
  | { readonly kind: 'close'; readonly connectionId: string; readonly reason: string };

/** What the agents ask of the host: start an executor's process, or kill its container. */
export type ContainerRecord =
  | { readonly kind: 'launch'; readonly launch: ContainerLaunch }
  | { readonly kind: 'destroy'; readonly agentId: string; readonly containerId: string };

export class Outbox {
  #records: OutboxRecord[] = [];
  #containers: ContainerRecord[] = [];

  event(connectionId: string, event: SchedulerEvent): void {
    this.#records.push({ kind: 'event', connectionId, event });
  }

  operator(connectionId: string, event: OperatorEvent): void {
    this.#records.push({ kind: 'operator', connectionId, event });
  }

  executor(connectionId: string, event: ExecutorEvent): void {
    this.#records.push({ kind: 'executor', connectionId, event });
  }

  processIo(connectionId: string, output: ProcessOutput): void {
    this.#records.push({ kind: 'process-io', connectionId, output });
  }

  containerWait(connectionId: string, termination: ContainerTermination): void {
    this.#records.push({ kind: 'container-wait', connectionId, termination });
  }

  container(record: ContainerRecord): void {
    this.#containers.push(record);
  }

  close(connectionId: string, reason: string): void {
    this.#records.push({ kind: 'close', connectionId, reason });
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
