/**
 * The master's HTTP server, built by a factory so tests can use `inject()`
 * without a socket: the scheduler, operator and read APIs, the metrics and
 * the dashboard, and whatever parts the composition root mounts on it (the
 * control API). Request bodies are taken raw (the wire layer decodes them);
 * every error is plain text on one line.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { acceptRawBodies, installErrorReplies, type AppPart } from '../app.js';
import type { ClusterDriver } from '../../runtime/driver.js';
import { AUTHENTICATED_ROUTES, requireAuthentication, type Credentials } from '../auth.js';
import { Connections } from '../connections.js';
import { readonlyRoutes, registerReadRoutes } from './read-routes.js';
import { registerMasterFilesRoutes } from './files-route.js';
import { DEFAULT_MAX_BUFFERED_BYTES } from '../event-stream.js';
import { capConnections, DEFAULT_LISTENER_LIMITS, listenerServerOptions, type ListenerLimits } from '../limits.js';
import { registerSchedulerRoute } from './scheduler-route.js';
import { registerOperatorRoute } from './operator-route.js';
import { maintenanceRoutes, registerMaintenanceRoutes } from './maintenance-routes.js';
import { registerDashboard } from './dashboard.js';
import { PathRouter } from '../routing.js';
import { gateToLeader } from './leader-gate.js';
import { StreamBudget } from '../stream-budget.js';
import { observeRequests, registerMetricsRoute } from './metrics-route.js';
import type { ClusterMetrics } from '../../runtime/metrics.js';

export const DEFAULT_BODY_LIMIT_BYTES = 16 * 1024 * 1024;
/**
 * Four streams at their own limit. Without a bound on the sum, N stalled
 * consumers hold N times the per-stream limit: 30 of them took the process
 * from 82 to 444 MB.
 */
export const DEFAULT_STREAM_BUDGET_BYTES = 64 * 1024 * 1024;
/** Well under the connection cap, so that calls and reads always find a connection. */
export const DEFAULT_MAX_SUBSCRIPTIONS = 128;
/** A framework without tasks costs little; a thousand is more than a laptop's tests start. */
export const DEFAULT_MAX_FRAMEWORKS = 1000;

export interface MasterAppOptions {
  readonly driver: ClusterDriver;
  /** Parts of the app served from elsewhere: the control API (http/sim/), mounted by the composition root. */
  readonly parts?: readonly AppPart[];
  readonly logger?: FastifyBaseLogger;
  readonly bodyLimitBytes?: number;
  /** Bytes waiting on one event stream before it is cut. */
  readonly maxBufferedBytes?: number;
  /** Bytes waiting on all event streams together before the largest is cut. */
  readonly streamBudgetBytes?: number;
  readonly maxSubscriptions?: number;
  readonly maxFrameworks?: number;
  readonly listener?: Partial<ListenerLimits>;
  readonly keepaliveMs?: number;
  /** `--credentials`: HTTP Basic on the scheduler and operator APIs; open without. */
  readonly credentials?: Credentials;
  /** `--authenticate-http-readonly`: HTTP Basic on the read-only endpoints too (needs `credentials`). */
  readonly authenticateReadonly?: boolean;
  /**
   * The streams of every server of the cluster, when the agents' servers
   * have streams too (the executor API); the caller then routes the
   * driver's output. Without, the master's own, fed by the driver.
   */
  readonly connections?: Connections;
  /** The bytes waiting on those streams; the master's own without. */
  readonly streamBudget?: StreamBudget;
  /** Which master of the group this app serves (default 0): only the leader serves, the others redirect (master/leader-gate.ts). */
  readonly masterIndex?: number;
  /** The port of each master's listener, by index, as they are bound: where redirects send clients. */
  readonly masterPorts?: readonly number[];
  /** The cluster's process figures for `/metrics` (allocation runs, event-loop delay), shared by its masters; the app's own without. */
  readonly metrics?: ClusterMetrics;
}

export function buildMasterApp(options: MasterAppOptions): FastifyInstance {
  const limits = { ...DEFAULT_LISTENER_LIMITS, ...options.listener };
  const router = new PathRouter();
  const app = Fastify({
    ...(options.logger === undefined ? {} : { loggerInstance: options.logger }),
    rewriteUrl: router.rewrite,
    logController: new LogController({ disableRequestLogging: true }),
    // Event streams never end by themselves; closing the server must not wait for them.
    forceCloseConnections: true,
    bodyLimit: options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
    ...listenerServerOptions(limits),
  }) as unknown as FastifyInstance;
  router.attach(app);
  capConnections(app, 'master', limits.maxConnections, app.log);
  acceptRawBodies(app);
  const observed = observeRequests(app);
  if (options.credentials !== undefined) {
    const authenticated = new Map([...AUTHENTICATED_ROUTES, ...maintenanceRoutes()]);
    const routes =
      options.authenticateReadonly === true ? new Map([...authenticated, ...readonlyRoutes()]) : authenticated;
    requireAuthentication(app, options.credentials, routes);
  }
  for (const part of options.parts ?? []) part.guard?.(app);
  gateToLeader(app, options.driver, options.masterIndex ?? 0, options.masterPorts);
  const connections = options.connections ?? new Connections();
  if (options.connections === undefined) options.driver.setOutput(connections.deliver);
  const budget =
    options.streamBudget ??
    new StreamBudget({
      perStreamBytes: options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES,
      totalBytes: options.streamBudgetBytes ?? DEFAULT_STREAM_BUDGET_BYTES,
      log: app.log,
    });
  const route = {
    driver: options.driver,
    connections,
    budget,
    maxSubscriptions: options.maxSubscriptions ?? DEFAULT_MAX_SUBSCRIPTIONS,
    maxFrameworks: options.maxFrameworks ?? DEFAULT_MAX_FRAMEWORKS,
    ...(options.keepaliveMs === undefined ? {} : { keepaliveMs: options.keepaliveMs }),
  };
  for (const part of options.parts ?? []) part.routes(app);
  registerDashboard(app);
  registerMetricsRoute(app, observed, {
    ...route,
    masterIndex: options.masterIndex ?? 0,
    ...(options.metrics === undefined ? {} : { clusterMetrics: options.metrics }),
  });
  for (const prefix of ['', '/master']) {
    registerSchedulerRoute(app, prefix, route);
    registerOperatorRoute(app, prefix, route);
    registerReadRoutes(app, prefix, options.driver, options.masterIndex ?? 0);
    registerMaintenanceRoutes(app, prefix, options.driver);
  }
  registerMasterFilesRoutes(app, options.driver);
  installErrorReplies(app);
  return app;
}
