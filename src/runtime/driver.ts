/**
 * Drivers move the core's virtual clock and hand its output on. `virtual`:
 * time moves only when told (`advance`). `realtime`: before each input the
 * clock catches up with the wall clock, and a single timer wakes the loop
 * when its next event falls due. Either way, after every input (and every
 * wake-up) the driver drains the core's outbox and gives the records to
 * the output consumer (the HTTP layer's streams).
 */
import type { Cluster } from '../core/cluster.js';
import type { ContainerRecord, OutboxRecord } from '../core/network/outbox.js';
import type { ClusterView } from '../core/view.js';

export type TimeMode = 'realtime' | 'virtual';

export type OutputConsumer = (records: readonly OutboxRecord[]) => void;

/** Starts and kills executor processes for the agents (spawn mode). */
export type ContainerHost = (records: readonly ContainerRecord[]) => void;

/**
 * The core threw: an invariant broke or a transition was illegal. That is
 * a bug, never a client's fault, so the cluster stops rather than serve a
 * half-broken state: every later input throws the same error.
 */
export class ClusterFailure extends Error {
  constructor(
    readonly seed: string,
    override readonly cause: unknown,
    /** The last trace entries before the failure, oldest first. */
    readonly lastEntries: readonly string[],
  ) {
    super(`cluster stopped (seed '${seed}'): ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'ClusterFailure';
  }
}

export type FailureListener = (failure: ClusterFailure) => void;

/** Told when the driver swaps its cluster for another (reset, restore). */
export type ReplaceListener = (cluster: Cluster, previous: Cluster) => void;

export interface ClusterDriver {
  /** The cluster now: `replace` may swap it, so hold the driver, not the cluster. */
  readonly cluster: Cluster;
  /**
   * Swaps the cluster for another (a reset or a restore built it): later
   * inputs and reads go to it, and the replace listeners are told (they
   * close the streams of the old one). Whatever the old one had not
   * delivered is dropped.
   */
  replace(cluster: Cluster): void;
  onReplace(listener: ReplaceListener): void;
  readonly mode: TimeMode;
  /**
   * Applies an input to the core at the current time, then delivers its
   * output. With `answered`, the output so far is delivered and then the
   * input's result goes to `answered`, as soon as the input is applied,
   * before what it made due at this instant runs (`Cluster.answerFirst`).
   */
  input<T>(apply: (cluster: Cluster) => T, answered?: (result: T) => void): T;
  /** Reads the cluster as of now (in real time, due timers run first). */
  read<T>(look: (view: ClusterView) => T): T;
  /** Moves virtual time forward (virtual mode only). */
  advance(ms: number): void;
  /** Where the outbox's records go; one consumer per driver. */
  setOutput(consumer: OutputConsumer): void;
  /** Who runs executor containers; without one, container records are dropped. */
  setContainerHost(host: ContainerHost): void;
  /** Called once if the core fails; the driver refuses every input after. */
  onFailure(listener: FailureListener): void;
  /** The failure that stopped the cluster, if any. */
  readonly failure: ClusterFailure | undefined;
  close(): void;
}

/** How many trace entries a failure report carries. */
const FAILURE_TRACE_ENTRIES = 20;

abstract class BaseDriver {
  #output: OutputConsumer | undefined;
  #containers: ContainerHost | undefined;
  #failure: ClusterFailure | undefined;
  readonly #failureListeners: FailureListener[] = [];
  readonly #replaceListeners: ReplaceListener[] = [];
  #cluster: Cluster;

  constructor(cluster: Cluster) {
    this.#cluster = cluster;
  }

  get cluster(): Cluster {
    return this.#cluster;
  }

  replace(cluster: Cluster): void {
    if (this.#failure !== undefined) throw this.#failure;
    const previous = this.#cluster;
    this.#cluster = cluster;
    this.replaced();
    for (const listener of this.#replaceListeners) listener(cluster, previous);
  }

  onReplace(listener: ReplaceListener): void {
    this.#replaceListeners.push(listener);
  }

  /** A subclass's own part of a swap. */
  protected replaced(): void {}

  get failure(): ClusterFailure | undefined {
    return this.#failure;
  }

  setOutput(consumer: OutputConsumer): void {
    this.#output = consumer;
  }

  setContainerHost(host: ContainerHost): void {
    this.#containers = host;
  }

  onFailure(listener: FailureListener): void {
    this.#failureListeners.push(listener);
  }

  /** Runs `apply` against the core, turning a throw into the cluster's failure. */
  protected guarded<T>(apply: () => T): T {
    if (this.#failure !== undefined) throw this.#failure;
    try {
      return apply();
    } catch (error) {
      throw this.#fail(error);
    }
  }

  /** Runs `apply`, delivering the output so far and telling `answered` its result (once) as soon as the core has applied it. */
  protected answering<T>(apply: (cluster: Cluster) => T, answered: ((result: T) => void) | undefined): T {
    if (answered === undefined) return apply(this.cluster);
    let told = false;
    const tell = (result: T): void => {
      if (told) return;
      told = true;
      this.deliver();
      answered(result);
    };
    this.cluster.answerFirst((result) => tell(result as T));
    try {
      const result = apply(this.cluster);
      tell(result);
      return result;
    } finally {
      this.cluster.answerFirst(undefined);
    }
  }

  protected deliver(): void {
    if (this.#failure !== undefined) return;
    const records = this.cluster.drainOutbox();
    if (records.length > 0) this.#output?.(records);
    const containers = this.cluster.drainContainers();
    if (containers.length > 0) this.#containers?.(containers);
  }

  #fail(error: unknown): ClusterFailure {
    if (this.#failure !== undefined) return this.#failure;
    const lines = this.cluster.trace
      .entries()
      .slice(-FAILURE_TRACE_ENTRIES)
      .map((e) => `${e.timeMs} ${e.line}`);
    this.#failure = new ClusterFailure(this.cluster.seed, error, lines);
    for (const listener of this.#failureListeners) listener(this.#failure);
    return this.#failure;
  }
}

export class VirtualDriver extends BaseDriver implements ClusterDriver {
  readonly mode = 'virtual';

  input<T>(apply: (cluster: Cluster) => T, answered?: (result: T) => void): T {
    try {
      return this.guarded(() => this.answering(apply, answered));
    } finally {
      this.deliver();
    }
  }

  read<T>(look: (view: ClusterView) => T): T {
    return this.guarded(() => look(this.cluster.view));
  }

  advance(ms: number): void {
    this.input((cluster) => cluster.advance(ms));
  }

  close(): void {}
}

export class RealtimeDriver extends BaseDriver implements ClusterDriver {
  readonly mode = 'realtime';
  #originMs: number;
  #timer: NodeJS.Timeout | undefined;
  /** The virtual time the armed timer wakes up for. */
  #armedForMs: number | undefined;
  #closed = false;

  constructor(
    cluster: Cluster,
    private readonly wallMs: () => number = () => performance.now(),
  ) {
    super(cluster);
    this.#originMs = wallMs() - cluster.now();
    this.#arm();
  }

  input<T>(apply: (cluster: Cluster) => T, answered?: (result: T) => void): T {
    try {
      return this.guarded(() => {
        this.#catchUp();
        return this.answering(apply, answered);
      });
    } finally {
      this.deliver();
      this.#arm();
    }
  }

  read<T>(look: (view: ClusterView) => T): T {
    this.input(() => undefined);
    return look(this.cluster.view);
  }

  advance(): void {
    throw new Error('advance() is only available with virtual time');
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  /** The new cluster's clock goes on from its own time, with the wall clock from now. */
  protected override replaced(): void {
    this.#originMs = this.wallMs() - this.cluster.now();
    clearTimeout(this.#timer);
    this.#armedForMs = undefined;
    this.#arm();
  }

  #catchUp(): void {
    this.cluster.advanceTo(Math.floor(this.wallMs() - this.#originMs));
  }

  /** Keeps one wall-clock timer for the next due event; re-arms only when that changes. */
  #arm(): void {
    if (this.#closed || this.failure !== undefined) return;
    const due = this.cluster.nextDueMs();
    if (due === this.#armedForMs) return;
    clearTimeout(this.#timer);
    this.#armedForMs = due;
    if (due === undefined) return;
    const delay = Math.max(0, due - (this.wallMs() - this.#originMs));
    // Timers beyond ~24.8 days overflow setTimeout; wake up earlier and re-arm.
    this.#timer = setTimeout(
      () => {
        this.#armedForMs = undefined;
        try {
          this.input(() => undefined);
        } catch {
          // A failure has reached the failure listeners; nothing else waits on this timer.
        }
      },
      Math.min(Math.ceil(delay), 2 ** 31 - 1),
    );
    this.#timer.unref();
  }
}
