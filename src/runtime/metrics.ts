/**
 * The simulator process's own figures for `/metrics` (Prometheus text):
 * how long the allocator's runs take in wall time, and how late the
 * event loop runs. The core names its allocation runs (core/probes.ts);
 * this times them with the wall clock, which only the runtime may read.
 * One set per cluster, with no global registry (several clusters may share
 * a process): each master's registry takes them in (`registerInto`).
 */
import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';
import { Gauge, Histogram, type Registry } from 'prom-client';
import type { ClusterDriver } from './driver.js';

/** Every metric name of the simulator starts with this. */
export const METRIC_PREFIX = 'clustersim_';

/** Allocation runs take from tens of microseconds (a few agents) to seconds (a hundred thousand). */
const ALLOCATION_BUCKETS_SECONDS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

/** The event-loop delay figures, each a gauge of seconds. */
const LAG_FIGURES = [
  ['mean', 'mean', (h: IntervalHistogram) => h.mean],
  ['max', 'largest', (h: IntervalHistogram) => h.max],
  ['p50', 'median', (h: IntervalHistogram) => h.percentile(50)],
  ['p99', '99th percentile', (h: IntervalHistogram) => h.percentile(99)],
] as const;

export class ClusterMetrics {
  readonly #allocation: Histogram;
  readonly #lag: IntervalHistogram;
  readonly #lagGauges: Gauge[];

  constructor(driver: ClusterDriver) {
    this.#allocation = new Histogram({
      name: `${METRIC_PREFIX}allocation_run_seconds`,
      help: 'Wall time of each run of the allocator (one pass over the agents that may be offered), in seconds',
      buckets: ALLOCATION_BUCKETS_SECONDS,
      registers: [],
    });
    const time = <T>(_work: string, run: () => T): T => {
      const start = performance.now();
      try {
        return run();
      } finally {
        this.#allocation.observe((performance.now() - start) / 1000);
      }
    };
    driver.cluster.probes.set(time);
    // A reset or a restore builds another cluster: its runs are timed too.
    driver.onReplace((cluster) => cluster.probes.set(time));
    this.#lag = monitorEventLoopDelay({ resolution: 10 });
    this.#lag.enable();
    // Read once per scrape: the first figure read starts a new window, after the last one read.
    this.#lagGauges = LAG_FIGURES.map(
      ([key, what, read], i) =>
        new Gauge({
          name: `${METRIC_PREFIX}event_loop_lag_${key}_seconds`,
          help: `The ${what} delay of the event loop since the previous scrape, in seconds (node:perf_hooks monitorEventLoopDelay)`,
          registers: [],
          collect: () => {
            const gauge = this.#lagGauges[i]!;
            gauge.set(this.#lag.count === 0 ? 0 : read(this.#lag) / 1e9);
            if (i === LAG_FIGURES.length - 1) this.#lag.reset();
          },
        }),
    );
  }

  /** Puts these figures into a master's registry. */
  registerInto(registry: Registry): void {
    registry.registerMetric(this.#allocation);
    for (const gauge of this.#lagGauges) registry.registerMetric(gauge);
  }

  /** Stops measuring the event loop. */
  close(): void {
    this.#lag.disable();
  }
}
