/**
 * The master's HTTP server, built by a factory so tests can use `inject()`
 * without a socket. Request bodies are taken raw (the wire layer decodes
 * them); every error is plain text on one line.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { ClusterDriver } from '../runtime/driver.js';
import { Connections } from './connections.js';
import { registerReadRoutes } from './read-routes.js';
import { sendError } from './replies.js';
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
  app.setNotFoundHandler((_req, reply) => sendError(reply, 404));
  app.setErrorHandler((error: { statusCode?: number; code?: string; message: string }, req, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) req.log.error({ err: error }, 'request failed');
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendError(reply, 413, 'Request body is too large');
    return sendError(reply, status, status >= 500 ? undefined : error.message);
  });
}
