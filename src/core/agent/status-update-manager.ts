/**
 * The agent's status update manager: one stream of updates per task, sent to
 * the master one at a time, in order. The head is retried with exponential
 * backoff (10 s doubling to 10 min, as upstream) until the framework's
 * acknowledgement for its uuid comes back; then the next one goes. Nothing
 * with a uuid is ever dropped while the framework exists. An update whose
 * uuid the stream has already seen (a duplicate from the network, or one an
 * executor hands over again after a restart) is ignored.
 *
 * While the agent is not registered the manager is paused: it queues and
 * sends nothing, and `resume()` sends every head at once.
 */
import type { SimContext } from '../network/context.js';
import type { TimerId } from '../kernel/event-loop.js';
import { pushed, SmallSet } from '../kernel/small-map.js';
import { isTerminal } from '../model/task-state.js';
import { updateText } from '../kernel/trace-lines.js';
import type { TaskSpec, TaskState, TaskStatus } from '../model/types.js';
import { RETRY_MAX_MS, RETRY_MIN_MS } from '../model/messages.js';

/**
 * A task whose executor is gone while its updates wait for their
 * acknowledgement (upstream's terminated tasks): the agent still reports
 * it when it re-registers, until the stream ends.
 */
export interface EndedTask {
  readonly spec: TaskSpec;
  readonly executorId: string;
  /** Run by a command executor. */
  readonly command: boolean;
}

/**
 * A task's updates; it is its own retry timer's action (no closure per
 * update sent: a failover resends hundreds of thousands at once).
 */
class Stream {
  /** The head's retry: every field set from the start (a field added later goes out of the object). */
  timer: TimerId | undefined = undefined;
  retryMs = RETRY_MIN_MS;
  /** The newest state taken for the task while updates of it wait (each forwarded update carries it). */
  latest: TaskState | undefined = undefined;

  constructor(
    private readonly manager: StatusUpdateManager,
    readonly key: string,
    readonly frameworkId: string,
    public pending: TaskStatus[],
    /** Every uuid this stream has taken, acknowledged or not (a task has a few: a small set). */
    readonly seen: SmallSet<string>,
    /** The task, once its executor has exited with updates of it unacknowledged. */
    public ended: EndedTask | undefined,
  ) {}

  /** The head was not acknowledged in time: it goes again, the next retry later. */
  onTimer(): void {
    const head = this.pending[0];
    if (head === undefined) return;
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    this.manager.retried(head);
    this.manager.send(this);
  }
}

/** A stream's head, with the task it is of once its executor has exited. */
export interface StreamHead {
  readonly frameworkId: string;
  readonly status: TaskStatus;
  /** The newest state taken for the task (the head's own when none newer). */
  readonly latest: TaskState;
  readonly ended?: EndedTask;
}

/** What survives a restart: the unacknowledged updates of each stream. */
export interface StreamCheckpoint {
  readonly frameworkId: string;
  readonly pending: readonly TaskStatus[];
  readonly seen: readonly string[];
  readonly ended?: EndedTask;
}

/** Sends one update towards the master, with the newest state taken for its task. */
export type ForwardUpdate = (frameworkId: string, status: TaskStatus, latestState: TaskState) => void;

export class StatusUpdateManager {
  readonly #streams = new Map<string, Stream>();
  #paused = true;

  constructor(
    private readonly ctx: SimContext,
    private readonly forward: ForwardUpdate,
  ) {}

  /**
   * Queues an update; sends it at once if nothing is waiting ahead of it.
   * False for a duplicate. `key` is the stream's (`streamKey`), when the
   * caller holds that string already: one copy per task, not two.
   */
  update(frameworkId: string, status: TaskStatus, key = streamKey(frameworkId, status.taskId)): boolean {
    let stream = this.#streams.get(key);
    if (stream === undefined) {
      stream = new Stream(this, key, frameworkId, [], new SmallSet(), undefined);
      this.#streams.set(key, stream);
    }
    if (status.uuid !== undefined) {
      if (stream.seen.has(status.uuid)) return false;
      stream.seen.add(status.uuid);
    }
    // Set before sending: the update goes with the newest state.
    stream.latest = status.state;
    stream.pending = pushed(stream.pending, status);
    if (stream.pending.length === 1) this.send(stream);
    return true;
  }

  /**
   * Applies an acknowledgement. Returns the acknowledged update when it
   * matched the head of its stream, undefined for a stale or unknown one.
   * A stream ends with the acknowledgement of its terminal update.
   */
  acknowledge(frameworkId: string, taskId: string, uuid: string): TaskStatus | undefined {
    const key = streamKey(frameworkId, taskId);
    const stream = this.#streams.get(key);
    const head = stream?.pending[0];
    if (stream === undefined || head === undefined || head.uuid !== uuid) return undefined;
    this.ctx.loop.cancel(stream.timer);
    stream.pending.shift();
    stream.retryMs = RETRY_MIN_MS;
    if (stream.pending.length > 0) this.send(stream);
    else {
      stream.latest = undefined;
      if (isTerminal(head.state)) this.#streams.delete(key);
    }
    return head;
  }

  /** Whether the task still has unacknowledged updates. */
  hasPending(frameworkId: string, taskId: string): boolean {
    return (this.#streams.get(streamKey(frameworkId, taskId))?.pending.length ?? 0) > 0;
  }

  /** The head of every stream with updates still unacknowledged. */
  heads(): StreamHead[] {
    const out: StreamHead[] = [];
    for (const stream of this.#streams.values()) {
      const head = stream.pending[0];
      if (head === undefined) continue;
      const { frameworkId, ended } = stream;
      const latest = stream.latest ?? head.state;
      out.push(
        ended === undefined ? { frameworkId, status: head, latest } : { frameworkId, status: head, latest, ended },
      );
    }
    return out;
  }

  /** The task's executor exited: what is known of the task stays with its stream while updates wait. */
  keepEnded(frameworkId: string, ended: EndedTask): void {
    const stream = this.#streams.get(streamKey(frameworkId, ended.spec.taskId));
    if (stream !== undefined && stream.pending.length > 0) stream.ended = ended;
  }

  /** Drops every stream of a framework (it was removed). */
  removeFramework(frameworkId: string): void {
    for (const [key, stream] of this.#streams) {
      if (stream.frameworkId !== frameworkId) continue;
      this.ctx.loop.cancel(stream.timer);
      this.#streams.delete(key);
    }
  }

  /** Stops sending (the agent is not registered). */
  pause(): void {
    this.#paused = true;
    for (const stream of this.#streams.values()) this.ctx.loop.cancel(stream.timer);
  }

  /** Sends every head at once (the agent (re-)registered), retried after the shortest interval again, as upstream's. */
  resume(): void {
    this.#paused = false;
    for (const stream of this.#streams.values()) {
      this.ctx.loop.cancel(stream.timer);
      stream.retryMs = RETRY_MIN_MS;
      this.send(stream);
    }
  }

  checkpoint(keep: (frameworkId: string) => boolean): StreamCheckpoint[] {
    return [...this.#streams.values()]
      .filter((s) => keep(s.frameworkId))
      .map((s) => ({
        frameworkId: s.frameworkId,
        pending: [...s.pending],
        seen: [...s.seen],
        ...(s.ended === undefined ? {} : { ended: s.ended }),
      }));
  }

  /** Takes back the streams of a checkpoint (paused until `resume`). */
  recover(streams: readonly StreamCheckpoint[]): void {
    for (const s of streams) {
      const taskId = s.pending[0]?.taskId;
      if (taskId === undefined) continue;
      const key = streamKey(s.frameworkId, taskId);
      this.#streams.set(key, new Stream(this, key, s.frameworkId, [...s.pending], new SmallSet(s.seen), s.ended));
    }
  }
  /** The newest state of every task whose updates wait, by stream key, of the frameworks kept. */
  latestStates(keep: (frameworkId: string) => boolean): Map<string, TaskState> {
    const out = new Map<string, TaskState>();
    for (const s of this.#streams.values()) if (s.latest !== undefined && keep(s.frameworkId)) out.set(s.key, s.latest);
    return out;
  }

  /** Takes back the newest states a checkpoint kept, for the streams it kept. */
  recoverLatest(latest: ReadonlyMap<string, TaskState>): void {
    for (const [key, state] of latest) {
      const stream = this.#streams.get(key);
      if (stream !== undefined) stream.latest = state;
    }
  }

  get size(): number {
    let n = 0;
    for (const stream of this.#streams.values()) if (stream.pending.length > 0) n++;
    return n;
  }

  /** Sends the stream's head (unless paused), retried after the stream's interval. */
  send(stream: Stream): void {
    const head = stream.pending[0];
    if (head === undefined || this.#paused) return;
    this.forward(stream.frameworkId, head, stream.latest ?? head.state);
    stream.timer = this.ctx.loop.schedule(stream.retryMs, 'status-update:retry', stream);
  }

  /** A stream's head goes again: the trace says so. */
  retried(head: TaskStatus): void {
    const { taskId, state, uuid } = head;
    this.ctx.trace.appendJson('status-update:retry', updateText(taskId, state, uuid), () => ({ taskId, state, uuid }));
  }
}

/** The key of a task's stream, `frameworkId` NUL `taskId`. */
export function streamKey(frameworkId: string, taskId: string): string {
  return `${frameworkId}\u0000${taskId}`;
}
