/**
 * The master's HTTP server, built by a factory so tests can use `inject()`
 * without a socket. Request bodies are taken raw (the wire layer decodes
 * them); every error is plain text on one line.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { ClusterDriver } from '../runtime/driver.js';
import { Connections } from './connections.js';
import { registerReadRoutes } from './read-routes.js';
import { sendError } from './errors.js';
import { registerSchedulerRoute } from './scheduler-route.js';

export const DEFAULT_BODY_LIMIT_BYTES = 16 * 1024 * 1024;

export interface MasterAppOptions {
  readonly driver: ClusterDriver;
  readonly logger?: FastifyBaseLogger;
  readonly bodyLimitBytes?: number;
  readonly maxBufferedBytes?: number;
  readonly keepaliveMs?: number;
}

export function buildMasterApp(options: MasterAppOptions): FastifyInstance {
  const app = Fastify({
    ...(options.logger === undefined ? {} : { loggerInstance: options.logger }),
    logController: new LogController({ disableRequestLogging: true }),
    // Event streams never end by themselves; closing the server must not wait for them.
    forceCloseConnections: true,
    bodyLimit: options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
    keepAliveTimeout: 75_000,
  }) as unknown as FastifyInstance;
  acceptRawBodies(app);
  const connections = new Connections();
  options.driver.setOutput(connections.deliver);
  for (const prefix of ['', '/master']) {
    registerSchedulerRoute(app, prefix, { ...options, connections });
    registerReadRoutes(app, prefix, options.driver);
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
