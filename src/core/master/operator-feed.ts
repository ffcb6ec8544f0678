/**
 * The operator event stream: its subscribers (connections), their
 * heartbeats, and the one door events go out by. The master calls `emit`
 * from the one place where each thing changes (a task added or updated, an
 * agent added or removed, a framework added, updated or removed); events
 * go to the outbox addressed to every operator subscriber, and into the
 * trace once. An event is built only when someone listens, so a cluster
 * without operator subscribers pays one map lookup per change.
 *
 *   subscribe   SUBSCRIBED at once (the wire layer adds the whole state),
 *               HEARTBEAT every interval, the first one an interval later
 *   disconnect  the subscriber and its heartbeat are dropped
 */
import type { SimContext } from '../network/context.js';
import type { TimerId } from '../kernel/event-loop.js';
import type { OperatorEvent } from '../model/operator-types.js';
import type { Outbox } from '../network/outbox.js';

export class OperatorFeed {
  /** Each subscriber's connection, with its next heartbeat. */
  readonly #subscribers = new Map<string, TimerId | undefined>();

  constructor(
    private readonly ctx: SimContext,
    private readonly outbox: Outbox,
    private readonly heartbeatIntervalMs: number,
  ) {}

  get size(): number {
    return this.#subscribers.size;
  }

  subscribe(connectionId: string): void {
    this.ctx.trace.append('operator:subscribed', { connectionId });
    this.#subscribers.set(connectionId, undefined);
    this.outbox.operator(connectionId, {
      type: 'SUBSCRIBED',
      heartbeatIntervalSeconds: this.heartbeatIntervalMs / 1000,
    });
    this.#armHeartbeat(connectionId);
  }

  /** Forgets an operator subscriber; false when the connection was not one. */
  disconnected(connectionId: string): boolean {
    if (!this.#subscribers.has(connectionId)) return false;
    this.ctx.loop.cancel(this.#subscribers.get(connectionId));
    this.#subscribers.delete(connectionId);
    this.ctx.trace.append('operator:disconnected', { connectionId });
    return true;
  }

  /** The master process died: every subscriber's stream breaks (a dead connection, not a clean end). */
  closeAll(reason: string): void {
    for (const [connectionId, timer] of this.#subscribers) {
      this.ctx.loop.cancel(timer);
      this.outbox.close(connectionId, reason, true);
    }
    this.#subscribers.clear();
  }

  /** Whether anyone subscribed: per-task callers then make not even the closure they would hand `emit`. */
  get heard(): boolean {
    return this.#subscribers.size > 0;
  }

  /** Sends an event to every subscriber; `build` runs only if there is one. */
  emit(build: () => OperatorEvent): void {
    if (this.#subscribers.size === 0) return;
    const event = build();
    this.ctx.trace.appendText(`operator:${event.type.toLowerCase()}`, `${this.#subscribers.size}`);
    for (const connectionId of this.#subscribers.keys()) this.outbox.operator(connectionId, event);
  }

  #armHeartbeat(connectionId: string): void {
    const timer = this.ctx.loop.schedule(this.heartbeatIntervalMs, 'operator:heartbeat', () => {
      if (!this.#subscribers.has(connectionId)) return;
      this.outbox.operator(connectionId, { type: 'HEARTBEAT' });
      this.#armHeartbeat(connectionId);
    });
    this.#subscribers.set(connectionId, timer);
  }
}
