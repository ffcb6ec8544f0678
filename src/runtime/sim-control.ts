/**
 * The simulation's own controls over a running cluster, beside its APIs:
 * run until idle or until a condition holds, snapshot and restore, reset
 * with a new seed. The control API (`/sim/v1/`) and the library
 * (`RunningCluster`) both go through here.
 *
 * Snapshots and resets rest on the record of inputs (core/input-record.ts):
 * a snapshot is how many inputs the cluster had taken, a restore builds a
 * new cluster from the same options and those first inputs (so its trace
 * up to there is the same, and stays the same for the same later inputs),
 * and a reset builds one from the inputs that started it (the master's
 * port, the agents) with a new seed. The driver then swaps clusters: every
 * stream of the old one closes, and clients subscribe again.
 */
import type { Cluster } from '../core/cluster.js';
import type { Condition } from '../core/conditions.js';
import { connectionsLeftOpen, rebuildCluster } from '../core/rebuild.js';
import type { ClusterView } from '../core/view.js';
import type { ClusterDriver } from './driver.js';

/** Why a control cannot be used on this cluster: the message says what to do instead. */
export class SimControlError extends Error {
  constructor(
    readonly reason: 'virtual-only' | 'not-recording' | 'not-found' | 'invalid',
    message: string,
  ) {
    super(message);
    this.name = 'SimControlError';
  }
}

export interface Snapshot {
  readonly snapshotId: string;
  readonly timeMs: number;
}

interface SnapshotPoint {
  readonly inputs: number;
  readonly timeMs: number;
}

export class SimControl {
  readonly #snapshots = new Map<string, SnapshotPoint>();
  #nextSnapshot = 0;

  /** How many inputs built the cluster as it started (a reset applies them again). */
  #setupInputs: number;

  constructor(private readonly driver: ClusterDriver) {
    this.#setupInputs = driver.cluster.inputs().length;
  }

  /** The cluster as it is now is how it starts: a reset comes back here. */
  markStarted(): void {
    this.#setupInputs = this.driver.cluster.inputs().length;
  }

  /** Moves the clock to `timeMs` (not before now), running all that falls due. */
  advanceTo(timeMs: number): number {
    this.#virtualOnly('advance the clock');
    if (!Number.isSafeInteger(timeMs) || timeMs < this.driver.cluster.now()) {
      throw new SimControlError(
        'invalid',
        `Expecting a time from now (${this.driver.cluster.now()} ms) on, got ${timeMs}`,
      );
    }
    this.driver.input((c) => c.advanceTo(timeMs));
    return this.driver.cluster.now();
  }

  /** Runs until only background timers are left (heartbeats, pings, retries), at most `maxMs` on. */
  runUntilIdle(maxMs: number): { readonly idle: boolean; readonly timeMs: number } {
    this.#virtualOnly('run until idle');
    const idle = this.driver.input((c) => c.runUntilIdle(c.now() + maxMs));
    return { idle, timeMs: this.driver.cluster.now() };
  }

  /** Runs until `condition` (read from JSON by wire/sim/conditions.ts) holds at the end of an instant, at most `maxMs` on. */
  runUntil(condition: Condition, maxMs: number): { readonly held: boolean; readonly timeMs: number } {
    this.#virtualOnly('run until a condition holds');
    const held = this.driver.input((c) => c.runUntil(condition, c.now() + maxMs));
    return { held, timeMs: this.driver.cluster.now() };
  }

  /**
   * Runs until `holds` (a test of the read model, outside the core) is true
   * at the end of an instant, at most `maxMs` on. Each instant is its own
   * recorded input (`advanceTo` the instant), so a recorded run replays the
   * same without the test: the same stops as `runUntil` with a condition.
   */
  runUntilHolds(
    holds: (view: ClusterView) => boolean,
    maxMs: number,
  ): { readonly held: boolean; readonly timeMs: number } {
    this.#virtualOnly('run until a condition holds');
    const untilMs = this.driver.cluster.now() + maxMs;
    const result = (held: boolean) => ({ held, timeMs: this.driver.cluster.now() });
    for (;;) {
      if (this.driver.read(holds)) return result(true);
      const due = this.driver.cluster.nextDueMs();
      if (due === undefined || due > untilMs) break;
      this.driver.input((c) => c.advanceTo(due));
    }
    if (this.driver.cluster.now() < untilMs) this.driver.input((c) => c.advanceTo(untilMs));
    return result(this.driver.read(holds));
  }

  snapshot(): Snapshot {
    const cluster = this.#recording('take a snapshot');
    const snapshotId = `snapshot-${++this.#nextSnapshot}`;
    const point = { inputs: cluster.inputs().length, timeMs: cluster.now() };
    this.#snapshots.set(snapshotId, point);
    return { snapshotId, timeMs: point.timeMs };
  }

  /**
   * The cluster as it was at the snapshot; snapshots taken after it are
   * forgotten (their inputs are no longer this cluster's past).
   */
  restore(snapshotId: string): Snapshot {
    const old = this.#recording('restore a snapshot');
    const point = this.#snapshots.get(snapshotId);
    if (point === undefined) throw new SimControlError('not-found', `Snapshot '${snapshotId}' not found`);
    const cluster = rebuildCluster(old.options, old.inputs(), point.inputs);
    // The streams those inputs opened are gone: the rebuilt cluster learns so at once.
    for (const connectionId of connectionsLeftOpen(old.inputs(), point.inputs)) cluster.disconnect(connectionId);
    cluster.drainOutbox();
    for (const [id, later] of [...this.#snapshots]) if (later.inputs > point.inputs) this.#snapshots.delete(id);
    this.driver.replace(cluster);
    return { snapshotId, timeMs: cluster.now() };
  }

  /**
   * The cluster as it started (same options, the same agents with the same
   * ids: the master keeps its id), with a new seed; every snapshot is
   * forgotten. Without a seed, the next number after the current one's.
   */
  reset(seed?: string | number): { readonly seed: string; readonly timeMs: number } {
    const old = this.#recording('reset the cluster');
    const next = seed === undefined ? nextSeed(old.seed) : String(seed);
    const master = { ...old.options.master, masterId: old.view.masterInfo.id };
    const cluster = rebuildCluster(old.options, old.inputs(), this.#setupInputs, { seed: next, master });
    this.#snapshots.clear();
    this.driver.replace(cluster);
    return { seed: cluster.seed, timeMs: cluster.now() };
  }

  #virtualOnly(what: string): void {
    if (this.driver.mode !== 'virtual')
      throw new SimControlError(
        'virtual-only',
        `The clock follows the wall clock: to ${what}, start the cluster in virtual time (--time virtual)`,
      );
  }

  #recording(what: string): Cluster {
    const cluster = this.driver.cluster;
    if (this.driver.failure !== undefined) throw this.driver.failure;
    if (!cluster.recordsInputs) {
      throw new SimControlError(
        'not-recording',
        `To ${what}, the cluster must record its inputs (virtual time records them)`,
      );
    }
    return cluster;
  }
}

/** A numeric seed's successor; any other seed with `+1` after it. */
function nextSeed(seed: string): string {
  return /^\d+$/.test(seed) && Number.isSafeInteger(Number(seed) + 1) ? String(Number(seed) + 1) : `${seed}+1`;
}
