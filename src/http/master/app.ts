/**
 * The master's HTTP server, built by a factory so tests can use `inject()`
 * without a socket. Request bodies are taken raw (the wire layer decodes
 * them); every error is plain text on one line.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { ClusterDriver } from '../../runtime/driver.js';
import { AUTHENTICATED_ROUTES, requireAuthentication, type Credentials } from '../auth.js';
import { Connections } from '../connections.js';
import { readonlyRoutes, registerReadRoutes } from './read-routes.js';
import { sendError } from '../errors.js';
import { DEFAULT_MAX_BUFFERED_BYTES } from '../event-stream.js';
import { capConnections, DEFAULT_LISTENER_LIMITS, listenerServerOptions, type ListenerLimits } from '../limits.js';
import { registerSchedulerRoute } from './scheduler-route.js';
import { registerOperatorRoute } from './operator-route.js';
import { registerSimRoutes } from '../sim/routes.js';
import { registerSimEvents } from '../sim/events.js';
import { guardControlApi } from '../sim/auth.js';
import { registerDashboard } from './dashboard.js';
import type { SimControl } from '../../runtime/sim-control.js';
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
  /** The control API's runs and rewinds (one of its own over `driver` without). */
  readonly simControl?: SimControl;
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
   * HTTP Basic on the control API (`/sim/v1/`) without `credentials` (an
   * authentication that has none, `--authenticate-http-executors`): then
   * nobody can use it. With `credentials` it is always on (sim/auth.ts).
   */
  readonly authenticateControlApi?: boolean;
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
    const routes = options.authenticateReadonly === true ? new Map([...AUTHENTICATED_ROUTES, ...readonlyRoutes()]) : AUTHENTICATED_ROUTES;
    requireAuthentication(app, options.credentials, routes);
  }
  const controlCredentials = options.credentials ?? (options.authenticateControlApi === true ? new Map<string, string>() : undefined);
  guardControlApi(app, options.driver, controlCredentials);
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
  registerSimRoutes(app, options.driver, options.simControl);
  registerSimEvents(app, options.driver);
  registerDashboard(app);
  registerMetricsRoute(app, observed, { ...route, masterIndex: options.masterIndex ?? 0, ...(options.metrics === undefined ? {} : { clusterMetrics: options.metrics }) });
  for (const prefix of ['', '/master']) {
    registerSchedulerRoute(app, prefix, route);
    registerOperatorRoute(app, prefix, route);
    registerReadRoutes(app, prefix, options.driver, options.masterIndex ?? 0);
  }
  installErrorReplies(app);
  return app;
}

/** Every body arrives as a Buffer, whatever its Content-Type (or none). */
export function acceptRawBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
}

export function installErrorReplies(app: FastifyInstance): void {
  app.setNotFoundHandler((_req, reply) => sendError(reply, 'NOT_FOUND'));
  app.setErrorHandler((error: { statusCode?: number; code?: string; message: string }, req, reply) => {
    // fastify refuses these before a route has looked at the call, which may
    // have been a SUBSCRIBE, and may leave the body unread: close, as the
    // scheduler route does for every refusal until it knows the call.
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendError(closing(reply), 'BODY_TOO_LARGE');
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return sendError(closing(reply), 'CONTENT_TYPE_MALFORMED');
    // The other requests fastify cannot read (a body cut short, a QUERY
    // without Content-Type) all have the status 400 and fastify's text.
    if (error.statusCode === 400) return sendError(closing(reply), 'REQUEST_UNREADABLE', error.message);
    req.log.error({ err: error }, 'request failed');
    return sendError(reply, 'INTERNAL');
  });
}

const closing = (reply: FastifyReply): FastifyReply => reply.header('connection', 'close');
