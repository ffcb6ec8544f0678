/**
 * The simulation's controls as methods of a running cluster (the library's
 * side of the control API): the clock, runs until idle or until a
 * condition, snapshot and restore, reset, the trace. When a reset or a
 * restore swaps the cluster, every stream of the old one is closed (clients
 * subscribe again) and the log follows the new one's trace.
 */
import type { Logger } from 'pino';
import type { Cluster } from './core/cluster.js';
import type { Condition } from './core/conditions.js';
import type { TraceEntry } from './core/trace.js';
import type { Connections } from './http/connections.js';
import { MAX_SPAN_MS } from './http/fault-body.js';
import type { ClusterDriver } from './runtime/driver.js';
import { logTrace } from './runtime/logging.js';
import { SimControl, type Snapshot } from './runtime/sim-control.js';

export interface ControlMethods {
  /** The cluster now (a reset or a restore swaps it). */
  readonly cluster: Cluster;
  /** Cluster time, in ms since it started. */
  now(): number;
  /** Moves virtual time to `timeMs` (not backwards), running all that falls due (virtual time only). */
  advanceTo(timeMs: number): void;
  /**
   * Runs until only heartbeats, pings and retries waiting for an answer are
   * left, at most `maxMs` (default a day) on (virtual time only).
   */
  runUntilIdle(options?: { readonly maxMs?: number }): { readonly idle: boolean; readonly timeMs: number };
  /** Runs until `condition` (core/conditions.ts) holds, at most `maxMs` on (virtual time only). */
  runUntil(condition: Condition, options: { readonly maxMs: number }): { readonly held: boolean; readonly timeMs: number };
  /** The cluster as it started, with a new seed (default the next one); every stream closes. */
  reset(seed?: string | number): { readonly seed: string; readonly timeMs: number };
  /** Marks this point; `restore` comes back to it (the cluster must record its inputs: virtual time does). */
  snapshot(): Snapshot;
  /** The cluster as it was at the snapshot; every stream closes. */
  restore(snapshotId: string): Snapshot;
  /** The trace's entries kept (all of them with `recordTrace`, else the recent ones). */
  trace(): readonly TraceEntry[];
}

/** The control over `driver`, with the swap of clusters wired to the streams and the log. */
export function controlOf(driver: ClusterDriver, connections: Connections, logger: Logger): SimControl {
  driver.onReplace((cluster) => {
    connections.closeAll();
    logTrace(cluster, logger);
  });
  return new SimControl(driver);
}

export function controlMethods(driver: ClusterDriver, control: SimControl): ControlMethods {
  return {
    get cluster() {
      return driver.cluster;
    },
    now: () => driver.cluster.now(),
    advanceTo: (timeMs) => void control.advanceTo(timeMs),
    runUntilIdle: (options = {}) => control.runUntilIdle(checkedSpan(options.maxMs ?? MAX_SPAN_MS)),
    runUntil: (condition, options) => control.runUntil(condition, checkedSpan(options.maxMs)),
    reset: (seed) => control.reset(seed),
    snapshot: () => control.snapshot(),
    restore: (snapshotId) => control.restore(snapshotId),
    trace: () => driver.cluster.trace.entries(),
  };
}

function checkedSpan(ms: number): number {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`maxMs must be a whole number of milliseconds from 0, got ${ms}`);
  return ms;
}
