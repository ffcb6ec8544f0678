/**
 * The agent's status update manager: one stream of updates per task, sent to
 * the master one at a time, in order. The head is retried with exponential
 * backoff (10 s doubling to 10 min, as upstream) until the framework's
 * acknowledgement for its uuid comes back; then the next one goes. Nothing
 * with a uuid is ever dropped while the framework exists.
 */
import type { SimContext } from '../context.js';
import type { TimerId } from '../event-loop.js';
import type { TaskStatus } from '../types.js';

export const RETRY_MIN_MS = 10_000;
export const RETRY_MAX_MS = 600_000;

interface Stream {
  readonly frameworkId: string;
  readonly pending: TaskStatus[];
  retryMs: number;
  timer?: TimerId;
}

/** Sends one update towards the master, with the task's latest known state. */
export type ForwardUpdate = (frameworkId: string, status: TaskStatus) => void;

export class StatusUpdateManager {
  readonly #streams = new Map<string, Stream>();

  constructor(
    private readonly ctx: SimContext,
    private readonly forward: ForwardUpdate,
  ) {}

  /** Queues an update; sends it at once if nothing is waiting ahead of it. */
  update(frameworkId: string, status: TaskStatus): void {
    const key = streamKey(frameworkId, status.taskId);
    let stream = this.#streams.get(key);
    if (stream === undefined) {
      stream = { frameworkId, pending: [], retryMs: RETRY_MIN_MS };
      this.#streams.set(key, stream);
    }
    stream.pending.push(status);
    if (stream.pending.length === 1) this.#send(key, stream);
  }

  /**
   * Applies an acknowledgement. Returns the acknowledged update when it
   * matched the head of its stream, undefined for a stale or unknown one.
   */
  acknowledge(frameworkId: string, taskId: string, uuid: string): TaskStatus | undefined {
    const key = streamKey(frameworkId, taskId);
    const stream = this.#streams.get(key);
    const head = stream?.pending[0];
    if (stream === undefined || head === undefined || head.uuid !== uuid) return undefined;
    this.ctx.loop.cancel(stream.timer);
    stream.pending.shift();
    stream.retryMs = RETRY_MIN_MS;
    if (stream.pending.length > 0) this.#send(key, stream);
    else this.#streams.delete(key);
    return head;
  }

  /** The update waiting for acknowledgement for a task, if any. */
  head(frameworkId: string, taskId: string): TaskStatus | undefined {
    return this.#streams.get(streamKey(frameworkId, taskId))?.pending[0];
  }

  /** Whether the task still has unacknowledged updates. */
  hasPending(frameworkId: string, taskId: string): boolean {
    return this.#streams.has(streamKey(frameworkId, taskId));
  }

  /** Drops every stream of a framework (it was removed). */
  removeFramework(frameworkId: string): void {
    for (const [key, stream] of this.#streams) {
      if (stream.frameworkId !== frameworkId) continue;
      this.ctx.loop.cancel(stream.timer);
      this.#streams.delete(key);
    }
  }

  /** Re-sends every head at once (after the master link comes back). */
  flush(): void {
    for (const [key, stream] of this.#streams) {
      this.ctx.loop.cancel(stream.timer);
      this.#send(key, stream);
    }
  }

  get size(): number {
    return this.#streams.size;
  }

  #send(key: string, stream: Stream): void {
    const head = stream.pending[0];
    if (head === undefined) return;
    this.forward(stream.frameworkId, head);
    stream.timer = this.ctx.loop.schedule(stream.retryMs, 'status-update:retry', () => {
      stream.retryMs = Math.min(stream.retryMs * 2, RETRY_MAX_MS);
      this.ctx.trace.append('status-update:retry', { taskId: head.taskId, state: head.state, uuid: head.uuid });
      this.#send(key, stream);
    });
  }
}

function streamKey(frameworkId: string, taskId: string): string {
  return `${frameworkId}\u0000${taskId}`;
}
