/**
 * An agent's own HTTP server. Each agent is reachable at its own address
 * (shown as `slave(1)@host:port`): its own state, its operator API and
 * the executor API.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import {
  capConnections,
  DEFAULT_AGENT_MAX_CONNECTIONS,
  DEFAULT_LISTENER_LIMITS,
  listenerServerOptions,
  type ListenerLimits,
} from '../limits.js';
import { acceptRawBodies, installErrorReplies } from '../app.js';
import { everyMethod, serveMethods } from '../methods.js';
import { PathRouter } from '../routing.js';
import { RECORDIO_TYPE } from '../negotiate.js';
import { VERSION } from '../../wire/version.js';
import { registerAgentOperatorRoute, type AgentBinding } from './operator-route.js';
import { registerAgentReadRoutes } from './read-routes.js';
import { registerExecutorRoute } from './executor-route.js';
import { AGENT_READONLY_ROUTES, AGENT_READWRITE_ROUTES, requireAuthentication, type Credentials } from '../auth.js';
import { registerAgentFilesRoutes } from './files-route.js';

export interface AgentAppOptions {
  readonly logger?: FastifyBaseLogger;
  /** Names the listener in the log (`agent 2`). */
  readonly name?: string;
  /** The master's timeouts, with a connection cap of its own. */
  readonly listener?: Partial<ListenerLimits>;
  /** The cluster and the agent this server belongs to; without, only `/health` and `/version` are served. */
  readonly agent?: AgentBinding;
  /** `--authenticate-http-readwrite`: HTTP Basic with these credentials on the operator API (`/api/v1`). */
  readonly credentials?: Credentials;
  /** `--authenticate-http-readonly`: HTTP Basic with these credentials on the files API (`/files/*`). */
  readonly readonlyCredentials?: Credentials;
}

export function buildAgentApp(options: AgentAppOptions = {}): FastifyInstance {
  const limits = { ...DEFAULT_LISTENER_LIMITS, maxConnections: DEFAULT_AGENT_MAX_CONNECTIONS, ...options.listener };
  // Upstream's routing: trailing slashes ignored, the longest registered prefix serves (routing.ts).
  const router = new PathRouter();
  const app = Fastify({
    ...(options.logger === undefined ? {} : { loggerInstance: options.logger }),
    rewriteUrl: router.rewrite,
    logController: new LogController({ disableRequestLogging: true }),
    // Event streams never end by themselves; closing the server must not wait for them.
    forceCloseConnections: true,
    ...listenerServerOptions(limits, true),
  }) as unknown as FastifyInstance;
  router.attach(app);
  capConnections(app, options.name ?? 'agent', limits.maxConnections, app.log);
  acceptRawBodies(app);
  if (options.credentials !== undefined) requireAuthentication(app, options.credentials, AGENT_READWRITE_ROUTES);
  if (options.readonlyCredentials !== undefined)
    requireAuthentication(app, options.readonlyCredentials, AGENT_READONLY_ROUTES);
  // ATTACH_CONTAINER_INPUT streams standard input: its body is read as it arrives, not buffered whole.
  app.addContentTypeParser(RECORDIO_TYPE, (_req, payload, done) => done(null, payload));
  for (const prefix of ['', '/slave(1)']) {
    serveMethods(app, `${prefix}/health`, everyMethod(app), (_req, reply) =>
      reply.code(200).header('content-length', '0').send(),
    );
    serveMethods(app, `${prefix}/version`, everyMethod(app), (_req, reply) =>
      reply
        .header('content-type', 'application/json')
        .send(JSON.stringify({ version: VERSION, build_date: '', build_time: 0.0, build_user: '' })),
    );
    if (options.agent !== undefined) {
      registerAgentReadRoutes(app, prefix, options.agent);
      registerAgentOperatorRoute(app, prefix, options.agent);
      const { executors, driver, agentId } = options.agent;
      if (executors !== undefined) registerExecutorRoute(app, prefix, { driver, agentId, ...executors });
    }
  }
  // At the process root only, as upstream's files process is.
  if (options.agent !== undefined) registerAgentFilesRoutes(app, options.agent);
  installErrorReplies(app);
  return app;
}
