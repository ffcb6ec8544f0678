/**
 * The simulation's controls as methods of a running cluster (the library's
 * side of the control API): the clock, runs until idle or until a
 * condition, snapshot and restore, reset, the trace. When a reset or a
 * restore swaps the cluster, every stream of the old one is closed (clients
 * subscribe again) and the log follows the new one's trace.
 */
import type { Logger } from 'pino';
import type { Cluster } from '../core/cluster.js';
import type { ClusterView } from '../core/view.js';
import type { TraceEntry } from '../core/kernel/trace.js';
import type { Connections } from '../http/connections.js';
import { parseCondition, type ConditionJson } from '../wire/sim/conditions.js';
import { MAX_SPAN_MS } from '../wire/sim/faults.js';
import type { ClusterDriver } from '../runtime/driver.js';
import { logTrace } from '../runtime/logging.js';
import { SimControl, SimControlError, type Snapshot } from '../runtime/sim-control.js';

/** What `runUntil` waits for: a test of the read model, or a condition as data, as the control API takes it (wire/sim/conditions.ts). */
export type RunUntilTest = ((view: ClusterView) => boolean) | ConditionJson;

export interface RunUntilOptions {
  /** How far on in cluster time to run at most, in ms (default a day). */
  readonly timeoutMs?: number;
  /** The same as `timeoutMs` (its earlier name). */
  readonly maxMs?: number;
}

/**
 * The clock and the runs of a cluster in virtual time (each throws a
 * SimControlError on a cluster in real time, and a RangeError naming the
 * argument for a time that is not one), and the simulation's controls.
 */
export interface ControlMethods {
  /** The cluster now (a reset or a restore swaps it). */
  readonly cluster: Cluster;
  /** Cluster time, in ms since it started. */
  now(): number;
  /** Moves virtual time `ms` forward (a whole number from 0), running all that falls due. */
  advance(ms: number): void;
  /** Moves virtual time to `timeMs` (a whole number, not before now), running all that falls due. */
  advanceTo(timeMs: number): void;
  /**
   * Runs until only heartbeats, pings and retries waiting for an answer are
   * left, at most `maxMs` (default a day) on.
   */
  runUntilIdle(options?: { readonly maxMs?: number }): { readonly idle: boolean; readonly timeMs: number };
  /**
   * Runs until `test` holds at the end of an instant (`held`, the clock
   * there), or `timeoutMs` on (not `held`, the clock there). `test` is a
   * function of the read model (`view => ...`) or a condition as data.
   */
  runUntil(test: RunUntilTest, options?: RunUntilOptions): { readonly held: boolean; readonly timeMs: number };
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
  const virtual = (method: string): void => {
    if (driver.mode !== 'virtual') {
      throw new SimControlError(
        'virtual-only',
        `${method}() needs a cluster in virtual time, and this one follows the wall clock: start it with startCluster({ time: 'virtual' })`,
      );
    }
  };
  return {
    get cluster() {
      return driver.cluster;
    },
    now: () => driver.cluster.now(),
    advance: (ms) => {
      virtual('advance');
      const span = checkedSpan('advance', 'ms', ms);
      driver.input((c) => c.advance(span));
    },
    advanceTo: (timeMs) => {
      virtual('advanceTo');
      const now = driver.cluster.now();
      if (!Number.isSafeInteger(timeMs) || timeMs < now) {
        throw new RangeError(
          `advanceTo(timeMs): timeMs must be a whole number of milliseconds from now (${now}) on, got ${timeMs}`,
        );
      }
      control.advanceTo(timeMs);
    },
    runUntilIdle: (options = {}) => {
      virtual('runUntilIdle');
      return control.runUntilIdle(checkedSpan('runUntilIdle', 'options.maxMs', options.maxMs ?? MAX_SPAN_MS));
    },
    runUntil: (test, options = {}) => {
      virtual('runUntil');
      const span = checkedSpan(
        'runUntil',
        options.timeoutMs !== undefined ? 'options.timeoutMs' : 'options.maxMs',
        options.timeoutMs ?? options.maxMs ?? MAX_SPAN_MS,
      );
      if (typeof test === 'function') return control.runUntilHolds(test, span);
      const condition = parseCondition(test);
      if (typeof condition === 'string') throw new SimControlError('invalid', `runUntil(): ${condition}`);
      return control.runUntil(condition, span);
    },
    reset: (seed) => control.reset(seed),
    snapshot: () => control.snapshot(),
    restore: (snapshotId) => control.restore(snapshotId),
    trace: () => driver.cluster.trace.entries(),
  };
}

/** A span of cluster time given to `method`, checked: a RangeError names the argument. */
function checkedSpan(method: string, argument: string, ms: unknown): number {
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0) {
    throw new RangeError(`${method}(): ${argument} must be a whole number of milliseconds from 0, got ${String(ms)}`);
  }
  return ms;
}
