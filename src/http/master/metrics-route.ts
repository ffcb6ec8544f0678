/**
 * `GET /metrics`: a master's figures as Prometheus text (format 0.0.4).
 * Every figure of its `/metrics/snapshot` (names: wire/v0/
 * prometheus-names.ts), its own requests by route, method and status code
 * (a count and a latency histogram), the event streams open and the bytes
 * waiting on them, and the process's figures (runtime/metrics.ts:
 * allocation run time, event-loop delay). One registry per master app:
 * never prom-client's global one, since several clusters may share a
 * process. A master that does not lead shows a standby's snapshot, as its
 * `/metrics/snapshot` does.
 */
import { performance } from 'node:perf_hooks';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { renderMetrics, renderStandbyMetrics } from '../../wire/v0/metrics.js';
import { prometheusFigures, type PrometheusFigure } from '../../wire/v0/prometheus-names.js';
import { ClusterMetrics, METRIC_PREFIX } from '../../runtime/metrics.js';
import type { ClusterDriver } from '../../runtime/driver.js';
import type { Connections } from '../connections.js';
import type { StreamBudget } from '../stream-budget.js';
import { principalOf } from '../auth.js';
import { sendError } from '../errors.js';
import { routePathOf } from '../methods.js';

/** Methods a request is counted under; any other is `other`, so that clients cannot grow the label set. */
const COUNTED_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);

const LATENCY_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A master app's registry, counting its requests from the first hook on. */
export interface ObservedApp {
  readonly registry: Registry;
}

/**
 * Counts every request of the app when its response ends (or its
 * connection closes): by the route that served it (`unmatched` for none),
 * its method and its status code (`none` when the connection closed
 * before an answer). Registered before any other hook, so that requests
 * refused by authentication or redirected to the leader count too. An
 * event stream counts when it ends, its latency its whole life.
 */
export function observeRequests(app: FastifyInstance): ObservedApp {
  const registry = new Registry();
  const labelNames = ['route', 'method', 'code'] as const;
  const requests = new Counter({
    name: `${METRIC_PREFIX}http_requests_total`,
    help: 'Requests answered by this master, by route, method and status code',
    labelNames,
    registers: [registry],
  });
  const latency = new Histogram({
    name: `${METRIC_PREFIX}http_request_duration_seconds`,
    help: "Seconds from a request's arrival to the end of its response (an event stream: its life), by route, method and status code",
    labelNames,
    buckets: LATENCY_BUCKETS_SECONDS,
    registers: [registry],
  });
  app.addHook('onRequest', (req, reply, done) => {
    const start = performance.now();
    // A response emits 'close' once, after it finished or when its connection closed before.
    reply.raw.once('close', () => {
      const labels = labelsOf(req, reply);
      requests.inc(labels);
      latency.observe(labels, (performance.now() - start) / 1000);
    });
    done();
  });
  return { registry };
}

function labelsOf(req: FastifyRequest, reply: FastifyReply): Record<'route' | 'method' | 'code', string> {
  return {
    route: routePathOf(req) ?? 'unmatched',
    method: COUNTED_METHODS.has(req.method) ? req.method : 'other',
    code: reply.raw.headersSent ? String(reply.raw.statusCode) : 'none',
  };
}

export interface MetricsRouteOptions {
  readonly driver: ClusterDriver;
  /** Which master of the group this app serves: its snapshot is the leader's or a standby's. */
  readonly masterIndex: number;
  readonly connections: Connections;
  readonly budget: StreamBudget;
  /** The cluster's process figures, shared by its masters; one of this app's own (closed with it) without. */
  readonly clusterMetrics?: ClusterMetrics;
}

/** Registers `GET /metrics` with the figures of the stream registry, the cluster's and the snapshot's. */
export function registerMetricsRoute(app: FastifyInstance, observed: ObservedApp, options: MetricsRouteOptions): void {
  const { registry } = observed;
  const { driver, masterIndex, connections, budget } = options;
  new Gauge({
    name: `${METRIC_PREFIX}event_streams_open`,
    help: 'Event streams open (scheduler, operator and executor subscriptions, container sessions)',
    registers: [registry],
    collect() {
      this.set(connections.size);
    },
  });
  new Gauge({
    name: `${METRIC_PREFIX}event_streams_buffered_bytes`,
    help: 'Bytes written to the event streams and not yet taken by the kernel, all streams together',
    registers: [registry],
    collect() {
      this.set(budget.bufferedBytes);
    },
  });
  let cluster = options.clusterMetrics;
  if (cluster === undefined) {
    const own = new ClusterMetrics(driver);
    app.addHook('onClose', async () => own.close());
    cluster = own;
  }
  cluster.registerInto(registry);
  const snapshot = new SnapshotGauges(registry);
  // The same figures as /metrics/snapshot: the same ACL.
  app.get('/metrics', async (req, reply) => {
    const refused = driver.read((view) =>
      view.authorizer.refusal('get_endpoints', principalOf(req), '/metrics/snapshot'),
    );
    if (refused !== undefined) return sendError(reply, 'FORBIDDEN', refused);
    snapshot.update(
      driver.read((view) =>
        prometheusFigures(view.leaderIndex() === masterIndex ? renderMetrics(view) : renderStandbyMetrics()),
      ),
    );
    const text = await registry.metrics();
    return reply.header('content-type', registry.contentType).send(text);
  });
}

/**
 * The snapshot's figures as gauges, set afresh at each scrape: a figure
 * that is gone (a quota removed, a master no longer leading) leaves the
 * registry rather than stay at its last value.
 */
class SnapshotGauges {
  readonly #gauges = new Map<string, Gauge | Counter>();

  constructor(private readonly registry: Registry) {}

  update(figures: readonly PrometheusFigure[]): void {
    const seen = new Set<string>();
    for (const figure of figures) {
      let gauge = this.#gauges.get(figure.name);
      if (gauge === undefined) {
        const config = {
          name: figure.name,
          help: figure.help,
          labelNames: Object.keys(figure.labels),
          registers: [this.registry],
        };
        gauge = figure.type === 'counter' ? new Counter(config) : new Gauge(config);
        this.#gauges.set(figure.name, gauge);
      }
      if (!seen.has(figure.name)) gauge.reset();
      seen.add(figure.name);
      // A counter takes its value as an increment from the reset: the snapshot's, which only grows while this master leads.
      if (gauge instanceof Counter) gauge.inc(figure.labels, figure.value);
      else gauge.set(figure.labels, figure.value);
    }
    for (const name of [...this.#gauges.keys()]) {
      if (seen.has(name)) continue;
      this.registry.removeSingleMetric(name);
      this.#gauges.delete(name);
    }
  }
}
